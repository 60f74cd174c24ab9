/*
 * main.h: the top layer, src/main/: the server as the process that runs
 * it. server.c owns the loop, the signals and the orderly shutdown, and
 * wires the layers together (the server_hooks, the HTTP transports'
 * tables); options.c and cli.c are the command line. It may include any
 * layer below: transport/, server/, rpc/ and core/.
 */
#ifndef MCP_MAIN_H
#define MCP_MAIN_H

#include <stdatomic.h>
#include <stddef.h>

#include <ev.h>

#include "server/server.h"
#include "transport/transport.h"

/* Defaults, documented in mcp_server_new(3) and mcp_server_main(3). */
#define MCP_DEF_GRACE_MS	5000
#define MCP_DEF_MAX_WORKERS	64
#define MCP_STALL_S		2.0	/* s of stalled output that end a drain */

/* options.c: SIGHUP re-reads --auth-token-file; the old token stays
 * when the file cannot be read. */
int	 mcp__reload_token(struct http_conf *c) MCP_HIDDEN;

/*
 * An application's flag (flags.c, mcp_server_add_flag): set on the setup
 * thread, then by mcp_server_main before the loop starts, and read-only
 * from then on, so that any thread may read it without a lock.
 */
struct appflag {
	char		*name;
	char		*help;
	char		*def;		/* the default's text; NULL: none */
	char		*val;		/* from the command line or env */
	char		*env;		/* mcp_server_set_flag_env's */
	int		 env_set;	/* env chosen (NULL there: none) */
	int		 type;		/* MCP_FLAG_STR, _INT or _BOOL */
	int		 required;
	long long	 defnum;	/* def as a number (INT, BOOL) */
	long long	 num;		/* val as one */
};

#define MCP_FLAG_NAME_MAX	64	/* a flag's name, a prefix: bytes */
#define MCP_ENV_NAME_MAX	(2 * MCP_FLAG_NAME_MAX + 2)

/*
 * The server as the process that runs it (server.c, options.c, cli.c):
 * the loop's watchers, signals, the orderly shutdown, and the
 * transports it listens on. Begins with the struct mcp_server the layers
 * under it see, so that mcp__host finds it.
 */
struct host {
	struct mcp_server	 srv;		/* first */
	int			 workers;
	int			 max_workers;
	int			 grace_ms;
	ev_async		 done;		/* completions ready */
	ev_async		 stop_async;	/* mcp_server_stop */
	ev_signal		 sigterm;
	ev_signal		 sigint;
	ev_signal		 sighup;	/* reload */
	ev_timer		 watchdog;	/* WATCHDOG=1 to systemd */
	ev_prepare		 flush;		/* write before blocking */
	ev_timer		 grace;
	ev_timer		 deadline;
	atomic_int		 stop_requested;
	int			 stopped;	/* the loop was told to end */
	double			 aborted_at;	/* the grace period ended */
	int			 aborted;
	struct stdio_transport	*stdio;
	int			 want_stdio;
	int			 stdio_in;	/* 0 and 1, but in tests */
	int			 stdio_out;
	struct http_conf	 hconf;
	struct http		*http;
	struct http		*mhttp;		/* --metrics-listen */
	struct appflag		*flags;		/* the application's */
	int			 nflags;
	char			*env_prefix;	/* NULL: from the name */
};

_Static_assert(offsetof(struct host, srv) == 0,
    "struct host begins with its struct mcp_server");

/* The host whose server SRV is (mcp_server_new makes only hosts). */
static inline struct host *
mcp__host(struct mcp_server *srv)
{
	return (struct host *)(void *)srv;
}

/* mcp_server_run in two halves, around the loop (which a test or a fuzzer
 * may run itself, a step at a time, until the host's stopped). */
int	 mcp__server_start(struct mcp_server *srv) MCP_HIDDEN;
void	 mcp__server_finish(struct mcp_server *srv) MCP_HIDDEN;
void	 mcp__http_conf_free(struct http_conf *c) MCP_HIDDEN;

/* flags.c: "1", "true", "yes" (1), "0", "false", "no" (0), in any case;
 * -1 for anything else. */
int	 mcp__flag_bool(const char *s) MCP_HIDDEN;
/* V as F's value (copied): MCP_EINVAL, not logged, when it is not one
 * of F's type; MCP_ENOMEM. */
int	 mcp__flag_set(struct appflag *f, const char *v) MCP_HIDDEN;
/* The variable of F into OUT (MCP_ENV_NAME_MAX bytes); "" for none. */
void	 mcp__flag_env(struct host *host, const struct appflag *f,
	    char *out) MCP_HIDDEN;
/* PREFIX "_" NAME in capitals, '_' for anything but letters and digits,
 * into OUT (MCP_ENV_NAME_MAX bytes); NAME alone for an empty PREFIX. */
void	 mcp__env_name(const char *prefix, const char *name, char *out)
	    MCP_HIDDEN;
/* Forgets the values mcp_server_main set; frees every flag. */
void	 mcp__flags_reset(struct host *host) MCP_HIDDEN;
void	 mcp__flags_free(struct host *host) MCP_HIDDEN;
/* cli.c: is NAME a long option of the standard command line? */
int	 mcp__cli_is_std(const char *name) MCP_HIDDEN;

#endif /* MCP_MAIN_H */
