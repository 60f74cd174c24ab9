/*
 * redis.c: the session store of --redis, hiredis's asynchronous API on
 * the server's own libev loop (hiredis's adapters/libev.h). Two
 * connections: one for commands (GET, SET, DEL, EVAL, PUBLISH), one
 * subscribed to <prefix>ended, where an instance that ends a session
 * says so, so that the others drop their copies, and to <prefix>ev:<sid>
 * for the sessions whose streams the transport holds (their events:
 * mcp__store_push XADDs to <prefix>events:<sid> and PUBLISHes in one
 * EVAL, mcp__store_range reads a route's back), and to
 * <prefix>inst:<tag> and <prefix>inst:all, where the others relay what
 * a client gave them for this instance (mcp__store_relay: a response
 * to one of its requests, a cancel). No call here blocks:
 * a host name is resolved once by mcp__store_new, before the loop runs,
 * and every connect, command and reply goes through the loop. A lost
 * connection is retried with a backoff (100 ms doubling to 2 s); each
 * change of state is logged once, not each failed attempt or request.
 * A command unanswered for STORE_TIMEOUT seconds takes its connection
 * down with it, so that no request waits on a Redis that hangs. Loop
 * thread only.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <ev.h>
#include <hiredis/hiredis.h>
#include <hiredis/async.h>
#include <hiredis/adapters/libev.h>

#include "transport/http.h"

#define STORE_TIMEOUT	2.0	/* s a command may wait for its answer */
#define BACKOFF_MIN	0.1	/* s before the first retry */
#define BACKOFF_MAX	2.0
#define PREFIX_MAX	64
#define BEAT_EVERY	1.0	/* s between heartbeats */
#define BEAT_TTL	3	/* s a heartbeat lives: then lost */

/*
 * The end of a session: its record KEYS[1], its event log KEYS[3], and
 * its tasks (the records, ARGV[3] and each id of its index KEYS[4], and
 * the index), announced as ARGV[2] on KEYS[2]. del_if_script: only if
 * KEYS[1] still holds ARGV[1], the idle end of a session nobody renewed
 * meanwhile.
 */
#define DROP_SESSION \
    "redis.call('DEL', KEYS[1], KEYS[3]) " \
    "for _, id in ipairs(redis.call('ZRANGE', KEYS[4], 0, -1)) do " \
    "redis.call('DEL', ARGV[3] .. id) end " \
    "redis.call('DEL', KEYS[4]) " \
    "redis.call('PUBLISH', KEYS[2], ARGV[2]) return 1"
static const char del_script[] = DROP_SESSION;
static const char del_if_script[] =
    "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end "
    DROP_SESSION;

/*
 * A task's record (taskshare.c): KEYS[1] set to ARGV[1] for ARGV[2] ms;
 * with KEYS[2], its session's index, the id ARGV[4] in it at the score
 * ARGV[3] (its creation, ms: NX, so that its end does not move it and
 * shift the pages of tasks/list), the ids created before ARGV[5] ms
 * dropped (no task lives that long), the index kept ARGV[6] s.
 */
static const char task_put_script[] =
    "redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) "
    "if #KEYS > 1 then "
    "redis.call('ZADD', KEYS[2], 'NX', ARGV[3], ARGV[4]) "
    "redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[5]) "
    "redis.call('EXPIRE', KEYS[2], ARGV[6]) end return 1";

/* A page of the index KEYS[1]: from ARGV[2], at most ARGV[3] tasks, each
 * "<id> <record>" without its result or error (a list shows Tasks), and
 * "more" after them when there are more; ARGV[1] is <prefix>task:. */
static const char task_list_script[] =
    "local lim = tonumber(ARGV[3]) "
    "local ids = redis.call('ZRANGE', KEYS[1], ARGV[2], "
    "tonumber(ARGV[2]) + lim) "
    "local out = {} "
    "for i, id in ipairs(ids) do "
    "if i > lim then out[#out + 1] = 'more' break end "
    "local v = redis.call('GET', ARGV[1] .. id) "
    "if v then local ok, o = pcall(cjson.decode, v) "
    "if ok and type(o) == 'table' then o.result = nil o.error = nil "
    "out[#out + 1] = id .. ' ' .. cjson.encode(o) end end end "
    "return out";

/*
 * Events of a session's streams (transport_streamable.c's entries,
 * "K ROUTE SEQ[ JSON]"): each XADDed to KEYS[1] (MAXLEN ~ ARGV[1]) and
 * PUBLISHed on KEYS[2], but those of kind g (for whoever holds the
 * session's standalone stream) only published; KEYS[1] lives ARGV[2] s.
 */
static const char push_script[] =
    "for i = 3, #ARGV do "
    "if string.byte(ARGV[i], 1) ~= 103 then "
    "redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'm', "
    "ARGV[i]) end "
    "redis.call('PUBLISH', KEYS[2], ARGV[i]) end "
    "if redis.call('EXISTS', KEYS[1]) == 1 then "
    "redis.call('EXPIRE', KEYS[1], ARGV[2]) end return 1";

/*
 * Once a second, each instance: while it runs calls on streamed routes
 * or shared tasks, its heartbeat (<prefix>alive:<tag>, a BEAT_TTL s
 * TTL), those calls (<prefix>calls:<tag>: [[sid, route, [ids]], ...]),
 * those tasks (<prefix>tasks:<tag>: [id, ...]) and its name in
 * <prefix>instances; once it runs none (ARGV[3] and ARGV[8] "[]") after
 * some (ARGV[7] 1), none of them. Then, for each other instance whose
 * heartbeat is gone, the one instance taking <prefix>lock:<tag> (SET
 * NX) writes an error answer for each of its calls into the session's
 * event log (but those its log answers already: the record is up to a
 * second old), and the route's end, and publishes them, so that a
 * client resuming gets an answer, not silence; and each of its tasks
 * whose record still says working is failed, kept for its ttl (the
 * record has no result: re-encoding it loses nothing). ARGV: prefix,
 * tag, calls, BEAT_TTL, MAXLEN, the events' TTL, was on, tasks.
 * Answers "<tag> <calls> <tasks>" for each instance handled.
 */
static const char beat_script[] =
    "local p, me = ARGV[1], ARGV[2] "
    "if ARGV[3] ~= '[]' or ARGV[8] ~= '[]' then "
    "redis.call('SET', p .. 'alive:' .. me, '1', 'EX', ARGV[4]) "
    "redis.call('SET', p .. 'calls:' .. me, ARGV[3], 'EX', 600) "
    "redis.call('SET', p .. 'tasks:' .. me, ARGV[8], 'EX', 600) "
    "redis.call('SADD', p .. 'instances', me) "
    "redis.call('EXPIRE', p .. 'instances', 600) "
    "elseif ARGV[7] == '1' then "
    "redis.call('DEL', p .. 'alive:' .. me, p .. 'calls:' .. me, "
    "p .. 'tasks:' .. me) "
    "redis.call('SREM', p .. 'instances', me) end "
    "local out = {} "
    "for _, t in ipairs(redis.call('SMEMBERS', p .. 'instances')) do "
    "if t ~= me and redis.call('EXISTS', p .. 'alive:' .. t) == 0 and "
    "redis.call('SET', p .. 'lock:' .. t, me, 'NX', 'EX', 60) then "
    "local n = 0 "
    "local c = redis.call('GET', p .. 'calls:' .. t) "
    "local ok, list = pcall(cjson.decode, c or '[]') "
    "if not ok or type(list) ~= 'table' then list = {} end "
    "for _, e in ipairs(list) do "
    "if type(e) == 'table' and type(e[1]) == 'string' and "
    "type(e[2]) == 'string' and type(e[3]) == 'table' then "
    "local key, chan = p .. 'events:' .. e[1], p .. 'ev:' .. e[1] "
    "local pre, last, ended, done = e[2] .. ' ', 0, false, {} "
    "for _, x in ipairs(redis.call('XRANGE', key, '-', '+')) do "
    "local v = x[2][2] "
    "if v ~= nil and string.sub(v, 3, 2 + #pre) == pre then "
    "if string.sub(v, 1, 1) == 'e' then ended = true end "
    "local s = tonumber(string.match(string.sub(v, 3 + #pre), '^%d+')) "
    "if s ~= nil and s > last then last = s end "
    "if string.sub(v, 1, 1) == 'm' then "
    "local okj, o = pcall(cjson.decode, string.match(string.sub(v, "
    "3 + #pre), '^%d+ (.*)$') or '') "
    "if okj and type(o) == 'table' and o.method == nil and "
    "o.id ~= nil then done[cjson.encode(o.id)] = true end end end end "
    "if not ended and redis.call('EXISTS', key) == 1 then "
    "local ms = {} "
    "for _, id in ipairs(e[3]) do "
    "if not done[cjson.encode(id)] then "
    "last = last + 1 n = n + 1 "
    "ms[#ms + 1] = 'm ' .. e[2] .. ' ' .. last .. "
    "' {\"jsonrpc\":\"2.0\",\"id\":' .. cjson.encode(id) .. "
    "',\"error\":{\"code\":-32603,\"message\":\"the server instance "
    "running this call was lost\"}}' end end "
    "ms[#ms + 1] = 'e ' .. e[2] .. ' ' .. last "
    "for _, m in ipairs(ms) do "
    "redis.call('XADD', key, 'MAXLEN', '~', ARGV[5], '*', 'm', m) "
    "redis.call('PUBLISH', chan, m) end "
    "redis.call('EXPIRE', key, ARGV[6]) end end end "
    "local nt = 0 "
    "local okt, tl = pcall(cjson.decode, "
    "redis.call('GET', p .. 'tasks:' .. t) or '[]') "
    "if okt and type(tl) == 'table' then "
    "for _, id in ipairs(tl) do "
    "local k = p .. 'task:' .. tostring(id) "
    "local okr, r = pcall(cjson.decode, redis.call('GET', k) or '') "
    "if okr and type(r) == 'table' and (r.status == 'working' or "
    "r.status == 'input_required') then "
    "r.inputs = nil "
    "local now = redis.call('TIME') "
    "r.status = 'failed' "
    "r.msg = 'the server instance running this task was lost' "
    "r.error = {code = -32603, message = r.msg} "
    "r.updated = tonumber(now[1]) + tonumber(now[2]) / 1000000 "
    "redis.call('SET', k, cjson.encode(r), 'PX', "
    "math.max(tonumber(r.ttl) or 1, 1)) nt = nt + 1 end end end "
    "redis.call('DEL', p .. 'calls:' .. t, p .. 'tasks:' .. t) "
    "redis.call('SREM', p .. 'instances', t) "
    "out[#out + 1] = t .. ' ' .. n .. ' ' .. nt end end "
    "return out";

/*
 * A POST /messages for a legacy SSE session held elsewhere: KEYS[1]
 * (<prefix>sse:<sid>) holds "<tag> <who>" (who: "-" anonymous, or "s"
 * and the subject); if it names the subject ARGV[3], ARGV[2] is
 * PUBLISHed on <prefix>inst:<tag> (ARGV[1] the prefix). Answers 0: no
 * such key; -1: another subject's; 1 + the listeners: 1 is none.
 */
static const char sse_post_script[] =
    "local v = redis.call('GET', KEYS[1]) "
    "if not v then return 0 end "
    "if string.sub(v, 10) ~= ARGV[3] then return -1 end "
    "return 1 + redis.call('PUBLISH', ARGV[1] .. 'inst:' .. "
    "string.sub(v, 1, 8), ARGV[2])";

/* The entries of KEYS[1] of route ARGV[1] (at their offset 2), oldest
 * first, the last ARGV[2] of them: a route's end is in its newest (the
 * stream, trimmed with ~, may hold a few more than that). */
static const char range_script[] =
    "local rev = {} "
    "for _, e in ipairs(redis.call('XREVRANGE', KEYS[1], '+', '-')) do "
    "local v = e[2][2] "
    "if v ~= nil and string.sub(v, 3, 2 + #ARGV[1]) == ARGV[1] then "
    "rev[#rev + 1] = v "
    "if #rev >= tonumber(ARGV[2]) then break end end end "
    "local out = {} "
    "for i = #rev, 1, -1 do out[#out + 1] = rev[i] end "
    "return out";

struct store;

struct rconn {
	struct store		*st;
	redisAsyncContext	*ac;		/* NULL: down */
	int			 sub;		/* the subscriber */
	int			 up;		/* answered its first command */
	int			 was_up;	/* for the log: a change */
	int			 failing;	/* a failure logged already */
	double			 backoff;
	double			 started;	/* its connect began */
	char			 refused[120];	/* AUTH's or SELECT's error */
	ev_timer		 retry;
};

#define LATER_MAX	64	/* deletes kept while Redis is away */

struct store {
	struct mcp_server	*srv;
	struct ev_loop		*loop;
	char			*shown;		/* for the log: no password */
	char			*ip;		/* resolved, or NULL: unix */
	int			 port;
	char			*path;		/* unix socket */
	char			*user;		/* AUTH user pass, or NULL */
	char			*password;
	int			 db;
	char			 prefix[PREFIX_MAX + 1];
	char			 channel[PREFIX_MAX + 8];
	struct rconn		 cmd;
	struct rconn		 subc;
	int			 npending;	/* commands unanswered */
	double			 progress_at;	/* last answer, or first wait */
	ev_timer		 watchdog;
	int			 freeing;
	char			 why[160];	/* the 503's reason */
	char			 instance[33];
	char			 tag[9];	/* its first 8 digits */
	char			 ichan[PREFIX_MAX + 16];  /* <prefix>inst:<tag> */
	char			 achan[PREFIX_MAX + 16];  /* <prefix>inst:all */
	void			(*ended_fn)(void *, const char *);
	void			*ended_arg;
	store_ev_fn		 ev_fn;		/* <prefix>ev:<sid> */
	void			*ev_arg;
	store_beat_fn		 beat_fn;	/* the calls for the beat */
	void			*beat_arg;
	long			 beat_max;	/* the events' MAXLEN, TTL */
	int			 beat_ttl;
	int			 beating;	/* a beat unanswered */
	int			 beat_again;	/* ... and another wanted */
	int			 beat_on;	/* its keys are in Redis */
	ev_timer		 beat;
	/* Deletes asked for while Redis was away (a first write that may
	 * still land, a session ended): sent when it is back. */
	struct later {
		char		 sid[33];
		char		*val;		/* NULL: DEL and announce */
	}			 later[LATER_MAX];
	int			 nlater;
};

/* One command's answer on its way back to its caller. */
struct op {
	struct store	*st;
	store_fn	 fn;
	store_list_fn	 lfn;		/* an array's, instead */
	store_int_fn	 ifn;		/* an integer's, instead */
	void		*arg;
	size_t		 max;		/* a value's bound; 0: the default */
};

static void	 rconn_start(struct rconn *);
static void	 flush_later(struct store *);
struct cmd;
static int	 send_op(struct store *, struct op *, struct cmd *);
static int	 command(struct store *, store_fn, void *, struct cmd *);
static void	 beat_cb(struct ev_loop *, ev_timer *, int);

/* ---- commands ------------------------------------------------------------ */

/*
 * A command as it is built, word by word: a word is the caller's bytes
 * (which must outlive the send), or formatted into the command's own
 * room (keys, numbers). Past CMD_WORDS the words go to the heap; a word
 * that does not fit its room spoils the command, which then is not sent.
 */
#define CMD_WORDS	12
#define CMD_ROOMS	8
#define CMD_ROOM	(PREFIX_MAX + 48)

struct cmd {
	const char	**v;
	size_t		 *l;
	int		  n;
	int		  cap;
	int		  bad;
	const char	 *vs[CMD_WORDS];
	size_t		  ls[CMD_WORDS];
	char		  room[CMD_ROOMS][CMD_ROOM];
	int		  nroom;
};

static void
cmd_init(struct cmd *c)
{
	c->v = c->vs;
	c->l = c->ls;
	c->n = 0;
	c->cap = CMD_WORDS;
	c->bad = 0;
	c->nroom = 0;
}

static void
cmd_free(struct cmd *c)
{
	if (c->v != c->vs) {
		free(c->v);
		free(c->l);
	}
	cmd_init(c);
}

static void
word(struct cmd *c, const char *s, size_t len)
{
	const char	**v;
	size_t		 *l;
	int		  cap;

	if (c->bad)
		return;
	if (c->n == c->cap) {
		cap = c->cap * 2;
		v = malloc((size_t)cap * sizeof(*v));
		l = malloc((size_t)cap * sizeof(*l));
		if (v == NULL || l == NULL) {
			free(v);
			free(l);
			c->bad = 1;
			return;
		}
		memcpy(v, c->v, (size_t)c->n * sizeof(*v));
		memcpy(l, c->l, (size_t)c->n * sizeof(*l));
		if (c->v != c->vs) {
			free(c->v);
			free(c->l);
		}
		c->v = v;
		c->l = l;
		c->cap = cap;
	}
	c->v[c->n] = s;
	c->l[c->n++] = len;
}

#define WORD(c, lit)	word((c), (lit), sizeof(lit) - 1)

static void
word_s(struct cmd *c, const char *s)
{
	word(c, s, strlen(s));
}

static void __attribute__((format(printf, 2, 3)))
word_f(struct cmd *c, const char *fmt, ...)
{
	va_list	 ap;
	char	*r;
	int	 len;

	if (c->nroom == CMD_ROOMS) {
		c->bad = 1;
		return;
	}
	r = c->room[c->nroom++];
	va_start(ap, fmt);
	len = vsnprintf(r, CMD_ROOM, fmt, ap);
	va_end(ap);
	if (len < 0 || len >= CMD_ROOM) {
		c->bad = 1;
		return;
	}
	word(c, r, (size_t)len);
}

/* The key <prefix>KIND<id>: "session:", "events:", "ev:", "task:"... */
static void
word_key(struct cmd *c, const struct store *st, const char *kind,
    const char *id)
{
	word_f(c, "%s%s%s", st->prefix, kind, id);
}

/* "EVAL SCRIPT NKEYS": the words every script begins with. */
static void
eval(struct cmd *c, const char *script, size_t len, int nkeys)
{
	cmd_init(c);
	WORD(c, "EVAL");
	word(c, script, len);
	word_f(c, "%d", nkeys);
}

#define EVAL(c, script, nkeys)	eval((c), (script), sizeof(script) - 1, \
				    (nkeys))

/* An answer's way back, for a command of ST (NULL: Redis is away). */
static struct op *
op_new(struct store *st, size_t max)
{
	struct op	*op;

	if (st->freeing || !st->cmd.up || st->cmd.ac == NULL)
		return NULL;
	op = calloc(1, sizeof(*op));
	if (op == NULL)
		return NULL;
	op->st = st;
	op->max = max;
	return op;
}


/* ---- the URL ------------------------------------------------------------ */

/* %XX in a user name or password, in place. */
static void
unescape(char *s)
{
	char	*o = s;
	int	 hi, lo;

	for (; *s != '\0'; s++) {
		if (*s == '%' && s[1] != '\0' && s[2] != '\0') {
			hi = s[1] <= '9' ? s[1] - '0' : (s[1] | 0x20) - 'a' + 10;
			lo = s[2] <= '9' ? s[2] - '0' : (s[2] | 0x20) - 'a' + 10;
			if (hi >= 0 && hi < 16 && lo >= 0 && lo < 16) {
				*o++ = (char)(hi * 16 + lo);
				s += 2;
				continue;
			}
		}
		*o++ = *s;
	}
	*o = '\0';
}

/*
 * "redis://[user:pass@]host[:port][/db]" or "unix:///path" into ST;
 * a host name is resolved now (getaddrinfo, blocking: before the loop
 * runs, never on it). 0, or -1 with the reason logged.
 */
static int
parse_url(struct store *st, const char *url)
{
	char		*u, *p, *at, *host, *port, *db, *end;
	char		 addr[INET6_ADDRSTRLEN], shown[256];
	struct addrinfo	 hints, *ai = NULL;
	long		 v;
	int		 rc = -1, e, v6;

	if (strncmp(url, "unix://", 7) == 0) {
		if (url[7] != '/' || strlen(url + 7) >= 108) {
			mcp_log(MCP_LOG_ERR, "redis: unix:///PATH wants an "
			    "absolute path of at most 107 bytes");
			return -1;
		}
		st->path = strdup(url + 7);
		st->shown = strdup(url);
		return st->path != NULL && st->shown != NULL ? 0 : -1;
	}
	if (strncmp(url, "redis://", 8) != 0) {
		/* Only its scheme: the rest may hold a password. */
		mcp_log(MCP_LOG_ERR, "redis: expected redis://[user:pass@]"
		    "host:port[/db] or unix:///path, got a URL of scheme "
		    "\"%.*s\"", (int)strcspn(url, ":/@"), url);
		return -1;
	}
	u = strdup(url + 8);
	if (u == NULL)
		return -1;
	host = u;
	at = strrchr(u, '@');
	if (at != NULL) {
		*at = '\0';
		host = at + 1;
		p = strchr(u, ':');
		if (p != NULL) {
			*p++ = '\0';
			unescape(p);
			free(st->password);
			st->password = strdup(p);
		}
		unescape(u);
		if (u[0] != '\0')
			st->user = strdup(u);
	}
	db = strchr(host, '/');
	if (db != NULL) {
		*db++ = '\0';
		if (*db != '\0') {
			errno = 0;
			v = strtol(db, &end, 10);
			if (errno != 0 || *end != '\0' || v < 0 || v > 65535) {
				mcp_log(MCP_LOG_ERR, "redis: bad database "
				    "number \"%.20s\"", db);
				goto out;
			}
			st->db = (int)v;
		}
	}
	port = NULL;
	if (host[0] == '[') {
		p = strchr(host, ']');
		if (p == NULL)
			goto bad;
		*p = '\0';
		host++;
		if (p[1] == ':')
			port = p + 2;
		else if (p[1] != '\0')
			goto bad;
	} else if ((p = strchr(host, ':')) != NULL) {
		*p = '\0';
		port = p + 1;
	}
	st->port = 6379;
	if (port != NULL) {
		errno = 0;
		v = strtol(port, &end, 10);
		if (errno != 0 || end == port || *end != '\0' || v < 1 ||
		    v > 65535)
			goto bad;
		st->port = (int)v;
	}
	if (host[0] == '\0')
		goto bad;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	e = getaddrinfo(host, NULL, &hints, &ai);
	if (e != 0 || ai == NULL) {
		mcp_log(MCP_LOG_ERR, "redis: cannot resolve %.80s: %s", host,
		    gai_strerror(e));
		goto out;
	}
	v6 = ai->ai_family == AF_INET6;
	if (v6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)(void *)
		    ai->ai_addr)->sin6_addr, addr, sizeof(addr));
	else
		inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)
		    ai->ai_addr)->sin_addr, addr, sizeof(addr));
	freeaddrinfo(ai);
	st->ip = strdup(addr);
	snprintf(shown, sizeof(shown), "redis://%s%.80s%s:%d/%d",
	    v6 ? "[" : "", host, v6 ? "]" : "", st->port, st->db);
	st->shown = strdup(shown);
	rc = st->ip != NULL && st->shown != NULL ? 0 : -1;
	goto out;
bad:
	mcp_log(MCP_LOG_ERR, "redis: expected redis://[user:pass@]host:port"
	    "[/db], got \"redis://%.80s\"", host);
out:
	free(u);
	return rc;
}

/* ---- connections -------------------------------------------------------- */

static const char *
rconn_name(const struct rconn *rc)
{
	return rc->sub ? "subscriber" : "connection";
}

/* RC is down (REASON): retried after its backoff; logged once a state. */
static void
rconn_down(struct rconn *rc, const char *reason)
{
	struct store	*st = rc->st;

	rc->ac = NULL;
	rc->up = 0;
	if (st->freeing)
		return;
	if (rc->refused[0] != '\0')
		reason = rc->refused;
	if (!rc->sub)
		snprintf(st->why, sizeof(st->why), "session store unavailable:"
		    " Redis at %s: %s", st->shown, reason);
	if (rc->was_up)
		mcp_log(MCP_LOG_WARN, "redis: %s to %s lost (%s), "
		    "reconnecting", rconn_name(rc), st->shown, reason);
	else if (!rc->failing)
		mcp_log(MCP_LOG_WARN, "redis: cannot connect to %s (%s), "
		    "retrying", st->shown, reason);
	else
		MCP_LOG(MCP_LOG_DEBUG, "redis: %s to %s: %s", rconn_name(rc),
		    st->shown, reason);
	rc->was_up = 0;
	rc->failing = 1;
	ev_timer_set(&rc->retry, rc->backoff, 0.0);
	ev_timer_start(st->loop, &rc->retry);
	rc->backoff *= 2;
	if (rc->backoff > BACKOFF_MAX)
		rc->backoff = BACKOFF_MAX;
}

/* RC answered: it is up. */
static void
rconn_up(struct rconn *rc)
{
	if (rc->up)
		return;
	rc->up = 1;
	rc->refused[0] = '\0';
	rc->backoff = BACKOFF_MIN;
	if (!rc->was_up && (rc->failing || !rc->sub))
		mcp_log(MCP_LOG_NOTICE, "redis: %s to %s up%s", rconn_name(rc),
		    rc->st->shown, rc->failing ? " again" : "");
	rc->was_up = 1;
	rc->failing = 0;
	if (!rc->sub) {
		flush_later(rc->st);
		/* What changed while Redis was away, written again. */
		mcp__taskshare_again(rc->st->srv);
	} else if (rc->st->ev_fn != NULL)	/* the sessions' channels again */
		rc->st->ev_fn(rc->st->ev_arg, SEV_RESUB, NULL, NULL, 0);
}

static void
connect_cb(const redisAsyncContext *ac, int status)
{
	struct rconn	*rc = ac->data;

	if (status != REDIS_OK)		/* hiredis frees AC */
		rconn_down(rc, ac->errstr[0] != '\0' ? ac->errstr :
		    "connect failed");
}

static void
disconnect_cb(const redisAsyncContext *ac, int status)
{
	struct rconn	*rc = ac->data;

	rconn_down(rc, status == REDIS_OK ? "closed" : ac->errstr[0] !=
	    '\0' ? ac->errstr : "connection lost");
}

/* The answer to AUTH, SELECT or the first PING: an error ends RC. */
static void
hello_cb(redisAsyncContext *ac, void *r, void *privdata)
{
	redisReply	*reply = r;
	struct rconn	*rc = ac->data;

	if (reply == NULL)
		return;		/* going down already */
	if (reply->type == REDIS_REPLY_ERROR) {
		if (!rc->failing || rc->was_up)
			mcp_log(MCP_LOG_ERR, "redis: %s refused (%s): %.120s",
			    (const char *)privdata, rconn_name(rc), reply->str);
		if (rc->refused[0] == '\0')	/* the first says why */
			snprintf(rc->refused, sizeof(rc->refused),
			    "%s refused: %.80s", (const char *)privdata,
			    reply->str);
		rc->was_up = 0;
		rc->failing = 1;
		redisAsyncDisconnect(ac);
		return;
	}
	if (strcmp(privdata, "PING") == 0)
		rconn_up(rc);
}

static void
ended_cb(redisAsyncContext *ac, void *r, void *privdata)
{
	redisReply	*reply = r, *kind, *msg;
	struct rconn	*rc = ac->data;
	struct store	*st = rc->st;

	(void)privdata;
	if (reply == NULL || reply->type != REDIS_REPLY_ARRAY ||
	    reply->elements != 3)
		return;
	kind = reply->element[0];
	msg = reply->element[2];
	if (kind->type != REDIS_REPLY_STRING)
		return;
	if (strcmp(kind->str, "subscribe") == 0) {
		rconn_up(rc);
		return;
	}
	/* An id as we make them, 32 hex digits; anything else is noise. */
	if (strcmp(kind->str, "message") != 0 ||
	    msg->type != REDIS_REPLY_STRING || msg->len != 32 ||
	    !mcp__http_is_id(msg->str))
		return;
	if (st->ended_fn != NULL)
		st->ended_fn(st->ended_arg, msg->str);
}

/*
 * A message on <prefix>inst:<tag> or <prefix>inst:all, relayed by
 * another instance: "K SID JSON", untrusted, to the transport.
 */
static void
inst_cb(redisAsyncContext *ac, void *r, void *privdata)
{
	redisReply	*reply = r, *kind, *msg;
	struct store	*st = privdata;
	char		 sid[33];
	size_t		 i;

	(void)ac;
	if (reply == NULL || reply->type != REDIS_REPLY_ARRAY ||
	    reply->elements != 3 || st->ev_fn == NULL)
		return;
	kind = reply->element[0];
	msg = reply->element[2];
	if (kind->type != REDIS_REPLY_STRING ||
	    strcmp(kind->str, "message") != 0 ||
	    msg->type != REDIS_REPLY_STRING)
		return;
	/* A response as large as a client may send (--max-message is 4
	 * MiB by default), not a session record's bound. */
	if (msg->len > STORE_MAX_EVENT + 35 || msg->len < 36 ||
	    msg->str[1] != ' ' || msg->str[34] != ' ') {
		mcp_log(MCP_LOG_WARN, "redis: a relayed message not of ours "
		    "(%zu bytes): dropped", (size_t)msg->len);
		return;
	}
	for (i = 0; i < 32; i++) {
		sid[i] = msg->str[2 + i];
		if (!((sid[i] >= '0' && sid[i] <= '9') ||
		    (sid[i] >= 'a' && sid[i] <= 'f'))) {
			mcp_log(MCP_LOG_WARN, "redis: a relayed message "
			    "with no session id of ours: dropped");
			return;
		}
	}
	sid[32] = '\0';
	st->ev_fn(st->ev_arg, SEV_RELAY, sid, msg->str, msg->len);
}

static void
rconn_start(struct rconn *rc)
{
	struct store		*st = rc->st;
	redisAsyncContext	*ac;

	rc->refused[0] = '\0';
	if (st->path != NULL)
		ac = redisAsyncConnectUnix(st->path);
	else
		ac = redisAsyncConnect(st->ip, st->port);
	if (ac == NULL) {
		rconn_down(rc, "out of memory");
		return;
	}
	if (ac->err != 0) {
		char	 why[128];

		snprintf(why, sizeof(why), "%s", ac->errstr);
		redisAsyncFree(ac);
		rconn_down(rc, why);
		return;
	}
	/* TCP keepalive: a Redis gone silently (a partition) is noticed
	 * on the subscriber too, which otherwise only ever reads. */
	if (st->path == NULL && redisEnableKeepAlive(&ac->c) != REDIS_OK) {
		redisAsyncFree(ac);
		rconn_down(rc, "cannot enable TCP keepalive");
		return;
	}
	ac->data = rc;
	if (redisLibevAttach(st->loop, ac) != REDIS_OK) {
		redisAsyncFree(ac);
		rconn_down(rc, "cannot attach to the loop");
		return;
	}
	rc->ac = ac;
	rc->started = ev_now(st->loop);
	redisAsyncSetConnectCallback(ac, connect_cb);
	redisAsyncSetDisconnectCallback(ac, disconnect_cb);
	/* Queued now, written once connected, answered in order. */
	if (st->password != NULL && st->user != NULL)
		redisAsyncCommand(ac, hello_cb, "AUTH", "AUTH %s %s",
		    st->user, st->password);
	else if (st->password != NULL)
		redisAsyncCommand(ac, hello_cb, "AUTH", "AUTH %s",
		    st->password);
	if (rc->sub) {
		redisAsyncCommand(ac, ended_cb, NULL, "SUBSCRIBE %b",
		    st->channel, strlen(st->channel));
		redisAsyncCommand(ac, inst_cb, st, "SUBSCRIBE %b %b",
		    st->ichan, strlen(st->ichan), st->achan,
		    strlen(st->achan));
	}
	else {
		if (st->db != 0)
			redisAsyncCommand(ac, hello_cb, "SELECT", "SELECT %d",
			    st->db);
		redisAsyncCommand(ac, hello_cb, "PING", "PING");
	}
}

static void
retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	rconn_start(w->data);
}

/*
 * Once a second: a command unanswered for STORE_TIMEOUT takes the
 * connection down (its callbacks run with no reply, so the requests
 * waiting on them get their 503), since hiredis 0.14 has no timeouts.
 */
static void
watchdog_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct store	*st = w->data;
	struct rconn	*rcs[2] = { &st->cmd, &st->subc };
	int		 i;

	(void)revents;
	/* A connect (or its AUTH) that hangs: a host that drops packets. */
	for (i = 0; i < 2; i++)
		if (rcs[i]->ac != NULL && !rcs[i]->up &&
		    ev_now(loop) - rcs[i]->started > STORE_TIMEOUT) {
			redisAsyncFree(rcs[i]->ac);
			if (rcs[i]->ac != NULL)
				rconn_down(rcs[i], "connect timed out");
		}
	if (st->npending == 0 || st->cmd.ac == NULL ||
	    ev_now(loop) - st->progress_at < STORE_TIMEOUT)
		return;
	mcp_log(MCP_LOG_WARN, "redis: no answer from %s for %.0f s, "
	    "reconnecting", st->shown, STORE_TIMEOUT);
	st->cmd.was_up = 0;
	st->cmd.failing = 1;
	st->cmd.up = 0;			/* no new command meanwhile */
	snprintf(st->cmd.refused, sizeof(st->cmd.refused), "no answer for "
	    "%.0f s", STORE_TIMEOUT);
	redisAsyncFree(st->cmd.ac);	/* disconnect_cb: retried */
	if (st->cmd.ac != NULL)		/* never connected: no callback */
		rconn_down(&st->cmd, "no answer");
}

/* ---- the store ---------------------------------------------------------- */

struct store *
mcp__store_new(struct mcp_server *srv, const struct http_conf *conf)
{
	struct store	*st;
	const char	*prefix;

	st = calloc(1, sizeof(*st));
	if (st == NULL)
		return NULL;
	st->srv = srv;
	st->loop = srv->loop;
	if (mcp__http_new_id(st->instance) != 0)
		goto fail;
	memcpy(st->tag, st->instance, 8);
	if (conf->redis_password != NULL &&
	    (st->password = strdup(conf->redis_password)) == NULL)
		goto fail;
	if (parse_url(st, conf->redis) != 0)
		goto fail;
	if (conf->redis_password != NULL) {	/* the file wins */
		free(st->password);
		st->password = strdup(conf->redis_password);
	}
	prefix = conf->redis_prefix != NULL ? conf->redis_prefix : "mcp:";
	snprintf(st->prefix, sizeof(st->prefix), "%s", prefix);
	snprintf(st->channel, sizeof(st->channel), "%sended", st->prefix);
	snprintf(st->ichan, sizeof(st->ichan), "%sinst:%s", st->prefix,
	    st->tag);
	snprintf(st->achan, sizeof(st->achan), "%sinst:all", st->prefix);
	snprintf(st->why, sizeof(st->why), "session store unavailable: "
	    "Redis at %s: not connected yet", st->shown);
	st->cmd.st = st->subc.st = st;
	st->subc.sub = 1;
	st->cmd.backoff = st->subc.backoff = BACKOFF_MIN;
	ev_timer_init(&st->cmd.retry, retry_cb, 0.0, 0.0);
	st->cmd.retry.data = &st->cmd;
	ev_timer_init(&st->subc.retry, retry_cb, 0.0, 0.0);
	st->subc.retry.data = &st->subc;
	ev_timer_init(&st->beat, beat_cb, BEAT_EVERY, BEAT_EVERY);
	st->beat.data = st;
	ev_timer_init(&st->watchdog, watchdog_cb, 1.0, 1.0);
	st->watchdog.data = st;
	ev_timer_start(st->loop, &st->watchdog);
	mcp_log(MCP_LOG_INFO, "redis: sessions shared through %s, keys "
	    "%ssession:*", st->shown, st->prefix);
	rconn_start(&st->cmd);
	rconn_start(&st->subc);
	return st;
fail:
	mcp__store_free(st);
	return NULL;
}

/* Writes what C holds unsent, waiting at most about 100 ms in all. */
static void
flush_out(redisContext *c)
{
	struct pollfd	 pfd;
	int		 done = 0, i;

	pfd.fd = c->fd;
	pfd.events = POLLOUT;
	for (i = 0; i < 5; i++) {
		if (redisBufferWrite(c, &done) != REDIS_OK || done)
			return;
		if (poll(&pfd, 1, 20) < 0)
			return;
	}
}

void
mcp__store_free(struct store *st)
{
	if (st == NULL)
		return;
	st->freeing = 1;
	ev_timer_stop(st->loop, &st->watchdog);
	ev_timer_stop(st->loop, &st->beat);
	ev_timer_stop(st->loop, &st->cmd.retry);
	ev_timer_stop(st->loop, &st->subc.retry);
	/* What was sent last (the end of a task, at a drain) goes out
	 * first: the loop will not run again to write it. Then pending
	 * callbacks run, with no reply: ST_ERR. */
	if (st->cmd.ac != NULL && st->cmd.up)
		flush_out(&st->cmd.ac->c);
	if (st->cmd.ac != NULL)
		redisAsyncFree(st->cmd.ac);
	if (st->subc.ac != NULL)
		redisAsyncFree(st->subc.ac);
	while (st->nlater > 0)
		free(st->later[--st->nlater].val);
	free(st->shown);
	free(st->ip);
	free(st->path);
	free(st->user);
	if (st->password != NULL) {
		volatile char	*z = st->password;

		while (*z != '\0')
			*z++ = '\0';
	}
	free(st->password);
	free(st);
}

const char *
mcp__store_instance(const struct store *st)
{
	return st->instance;
}

const char *
mcp__store_tag(const struct store *st)
{
	return st->tag;
}

/* "KIND SID JSON", what an instance relays to another, into B. */
static int
relay_msg(struct buf *b, int kind, const char *sid, const char *json,
    size_t len)
{
	if (strlen(sid) != 32 || mcp__buf_addc(b, (char)kind) != MCP_OK ||
	    mcp__buf_addc(b, ' ') != MCP_OK ||
	    mcp__buf_add(b, sid, 32) != MCP_OK ||
	    mcp__buf_addc(b, ' ') != MCP_OK ||
	    mcp__buf_add(b, json, len) != MCP_OK)
		return -1;
	return 0;
}

int
mcp__store_relay(struct store *st, const char *tag, int kind,
    const char *sid, const char *json, size_t len)
{
	struct cmd	 c;
	struct buf	 b = { 0 };
	int		 rc = -1;

	if (relay_msg(&b, kind, sid, json, len) == 0) {
		cmd_init(&c);
		WORD(&c, "PUBLISH");
		word_f(&c, "%sinst:%.8s", st->prefix, tag != NULL ? tag :
		    "all");
		word(&c, b.data, b.len);
		rc = command(st, NULL, NULL, &c);
	}
	mcp__buf_free(&b);
	return rc;
}

const char *
mcp__store_down(const struct store *st)
{
	return st->cmd.up ? NULL : st->why;
}

void
mcp__store_on_ended(struct store *st, void (*fn)(void *, const char *),
    void *arg)
{
	st->ended_fn = fn;
	st->ended_arg = arg;
}

/*
 * An array of strings for OP's caller, untrusted: at most
 * STORE_MAX_ITEMS, each at most STORE_MAX_EVENT bytes, or ST_ERR.
 */
static void
list_answer(struct op *op, redisReply *reply)
{
	const char	**vals = NULL;
	size_t		 *lens = NULL, i, n = 0;
	size_t		  max = op->max != 0 ? op->max : STORE_MAX_EVENT;
	int		  status = ST_ERR;

	if (reply != NULL && reply->type == REDIS_REPLY_ARRAY &&
	    reply->elements <= STORE_MAX_ITEMS) {
		n = reply->elements;
		vals = calloc(n + 1, sizeof(*vals));
		lens = calloc(n + 1, sizeof(*lens));
		status = vals != NULL && lens != NULL ? ST_OK : ST_ERR;
		for (i = 0; status == ST_OK && i < n; i++) {
			if (reply->element[i]->type != REDIS_REPLY_STRING ||
			    reply->element[i]->len > max) {
				mcp_log(MCP_LOG_WARN, "redis: an entry not of "
				    "ours (not a string, or over %zu bytes): "
				    "the answer is refused", max);
				status = ST_ERR;
				break;
			}
			vals[i] = reply->element[i]->str;
			lens[i] = reply->element[i]->len;
		}
	} else if (reply != NULL && reply->type == REDIS_REPLY_ERROR)
		MCP_LOG(MCP_LOG_WARN, "redis: error reply: %.120s",
		    reply->str);
	op->lfn(op->arg, status, status == ST_OK ? n : 0, vals, lens);
	free(vals);
	free(lens);
}

static void
op_cb(redisAsyncContext *ac, void *r, void *privdata)
{
	redisReply	*reply = r;
	struct op	*op = privdata;
	struct store	*st = op->st;
	int		 status = ST_ERR;
	const char	*val = NULL;
	size_t		 len = 0;

	(void)ac;
	st->npending--;
	st->progress_at = ev_now(st->loop);
	if (op->lfn != NULL) {
		list_answer(op, reply);
		free(op);
		return;
	}
	if (op->ifn != NULL) {
		if (reply != NULL && reply->type == REDIS_REPLY_ERROR)
			MCP_LOG(MCP_LOG_WARN, "redis: error reply: %.120s",
			    reply->str);
		op->ifn(op->arg, reply != NULL && reply->type ==
		    REDIS_REPLY_INTEGER ? ST_OK : ST_ERR, reply != NULL &&
		    reply->type == REDIS_REPLY_INTEGER ? reply->integer : 0);
		free(op);
		return;
	}
	if (reply == NULL)
		status = ST_ERR;
	else if (reply->type == REDIS_REPLY_NIL)
		status = ST_NONE;
	else if (reply->type == REDIS_REPLY_ERROR)
		MCP_LOG(MCP_LOG_WARN, "redis: error reply: %.120s",
		    reply->str);
	else if (reply->type == REDIS_REPLY_STRING ||
	    reply->type == REDIS_REPLY_STATUS) {
		if (reply->len > (op->max != 0 ? op->max : STORE_MAX_VALUE)) {
			/* No record of ours (we write none so large): as
			 * if absent, not Redis failing. */
			mcp_log(MCP_LOG_WARN, "redis: a value of %zu bytes, "
			    "over %zu: taken for none", (size_t)reply->len,
			    op->max != 0 ? op->max : STORE_MAX_VALUE);
			status = ST_NONE;
		} else {
			status = ST_OK;
			val = reply->str;
			len = reply->len;
		}
	} else
		status = ST_OK;
	if (op->fn != NULL)
		op->fn(op->arg, status, val, len);
	free(op);
}

/* Sends C (freed); the answer goes to FN (may be NULL). */
static int
command(struct store *st, store_fn fn, void *arg, struct cmd *c)
{
	struct op	*op;

	if ((op = op_new(st, 0)) == NULL) {
		cmd_free(c);
		return -1;
	}
	op->fn = fn;
	op->arg = arg;
	return send_op(st, op, c);
}

/* Sends C (freed) for OP (freed if it cannot go). */
static int
send_op(struct store *st, struct op *op, struct cmd *c)
{
	int	 rc = -1;

	if (c->bad)	/* a bug: a key past its room, or too many */
		mcp_log(MCP_LOG_ERR, "redis: a command of %d words could not "
		    "be built (%.40s): not sent", c->n, c->n > 0 ? c->v[0] :
		    "");
	if (!c->bad && redisAsyncCommandArgv(st->cmd.ac, op_cb, op, c->n,
	    c->v, c->l) == REDIS_OK) {
		if (st->npending++ == 0)
			st->progress_at = ev_now(st->loop);
		rc = 0;
	} else
		free(op);
	cmd_free(c);
	return rc;
}




int
mcp__store_get(struct store *st, const char *sid, store_fn fn, void *arg)
{
	struct cmd	 c;

	cmd_init(&c);
	WORD(&c, "GET");
	word_key(&c, st, "session:", sid);
	return command(st, fn, arg, &c);
}

int
mcp__store_set(struct store *st, const char *sid, const char *val,
    size_t len, int ttl, int new, store_fn fn, void *arg)
{
	struct cmd	 c;

	cmd_init(&c);
	WORD(&c, "SET");
	word_key(&c, st, "session:", sid);
	word(&c, val, len);
	WORD(&c, "EX");
	word_f(&c, "%d", ttl);
	word_s(&c, new ? "NX" : "XX");
	return command(st, fn, arg, &c);
}

static int	 del_now(struct store *, const char *, const char *);

/* Redis is back: the deletes it missed, oldest first. */
static void
flush_later(struct store *st)
{
	int	 i, n = st->nlater;

	st->nlater = 0;
	for (i = 0; i < n; i++) {
		(void)del_now(st, st->later[i].sid, st->later[i].val);
		free(st->later[i].val);
	}
}

int
mcp__store_del(struct store *st, const char *sid, const char *val)
{
	struct later	*l;

	if (del_now(st, sid, val) == 0 || st->freeing || strlen(sid) >
	    sizeof(l->sid) - 1)
		return 0;
	/* Away: kept for when it is back, the oldest dropped when full
	 * (its key then goes by its TTL). */
	if (st->nlater == LATER_MAX) {
		free(st->later[0].val);
		memmove(st->later, st->later + 1,
		    (LATER_MAX - 1) * sizeof(st->later[0]));
		st->nlater--;
	}
	l = &st->later[st->nlater];
	memcpy(l->sid, sid, strlen(sid) + 1);
	l->val = val != NULL ? strdup(val) : NULL;
	if (val != NULL && l->val == NULL)
		return -1;
	st->nlater++;
	return 0;
}


static int
del_now(struct store *st, const char *sid, const char *val)
{
	struct cmd	 c;

	if (val != NULL)
		EVAL(&c, del_if_script, 4);
	else
		EVAL(&c, del_script, 4);
	word_key(&c, st, "session:", sid);
	word_s(&c, st->channel);
	word_key(&c, st, "events:", sid);
	word_key(&c, st, "stasks:", sid);
	word_s(&c, val != NULL ? val : "");
	word_s(&c, sid);
	word_f(&c, "%stask:", st->prefix);
	return command(st, NULL, NULL, &c);
}

/* ---- event logs: <prefix>events:<sid>, <prefix>ev:<sid> ---------------- */

void
mcp__store_on_event(struct store *st, store_ev_fn fn, void *arg)
{
	st->ev_fn = fn;
	st->ev_arg = arg;
}

const char *
mcp__store_sub_down(const struct store *st)
{
	return st->cmd.up && st->subc.up ? NULL : st->why;
}

int
mcp__store_push(struct store *st, const char *sid, int n,
    const char *const *vals, const size_t *lens, long maxlen, int ttl)
{
	struct cmd	 c;
	int		 i;

	EVAL(&c, push_script, 2);
	word_key(&c, st, "events:", sid);
	word_key(&c, st, "ev:", sid);
	word_f(&c, "%ld", maxlen);
	word_f(&c, "%d", ttl);
	for (i = 0; i < n; i++)
		word(&c, vals[i], lens[i]);
	return command(st, NULL, NULL, &c);
}

int
mcp__store_range(struct store *st, const char *sid, const char *route,
    store_list_fn fn, void *arg)
{
	struct cmd	 c;
	struct op	*op;

	if ((op = op_new(st, 0)) == NULL)
		return -1;
	op->lfn = fn;
	op->arg = arg;
	EVAL(&c, range_script, 1);
	word_key(&c, st, "events:", sid);
	word_s(&c, route);
	word_f(&c, "%u", STORE_MAX_ITEMS);
	return send_op(st, op, &c);
}

/* A message, or the answer to a SUBSCRIBE, on a session's channel. */
static void
chan_cb(redisAsyncContext *ac, void *r, void *privdata)
{
	redisReply	*reply = r, *kind, *chan, *msg;
	struct store	*st = privdata;
	size_t		 plen = strlen(st->prefix) + 3;
	char		 sid[33];

	(void)ac;
	if (reply == NULL || reply->type != REDIS_REPLY_ARRAY ||
	    reply->elements != 3 || st->ev_fn == NULL)
		return;
	kind = reply->element[0];
	chan = reply->element[1];
	msg = reply->element[2];
	if (kind->type != REDIS_REPLY_STRING ||
	    chan->type != REDIS_REPLY_STRING || chan->len != plen + 32)
		return;
	memcpy(sid, chan->str + plen, 32);
	sid[32] = '\0';
	if (!mcp__http_is_id(sid))
		return;
	if (strcmp(kind->str, "subscribe") == 0)
		st->ev_fn(st->ev_arg, SEV_SUBSCRIBED, sid, NULL, 0);
	else if (strcmp(kind->str, "message") == 0 &&
	    msg->type == REDIS_REPLY_STRING) {
		if (msg->len > STORE_MAX_EVENT) {
			mcp_log(MCP_LOG_WARN, "redis: a message of %zu bytes "
			    "on %.*s, over %u: dropped", (size_t)msg->len,
			    (int)chan->len, chan->str, STORE_MAX_EVENT);
			return;
		}
		st->ev_fn(st->ev_arg, SEV_MESSAGE, sid, msg->str, msg->len);
	}
}

int
mcp__store_sub(struct store *st, const char *sid, int on)
{
	struct cmd	 c;
	int		 rc;

	if (st->freeing || !st->subc.up || st->subc.ac == NULL)
		return -1;
	cmd_init(&c);
	word_s(&c, on ? "SUBSCRIBE" : "UNSUBSCRIBE");
	word_key(&c, st, "ev:", sid);
	rc = c.bad || redisAsyncCommandArgv(st->subc.ac, on ? chan_cb : NULL,
	    on ? st : NULL, c.n, c.v, c.l) != REDIS_OK ? -1 : 0;
	cmd_free(&c);
	return rc;
}

/* ---- heartbeats: a lost instance's calls answered ---------------------- */

void
mcp__store_on_beat(struct store *st, store_beat_fn fn, void *arg,
    long maxlen, int ttl)
{
	st->beat_fn = fn;
	st->beat_arg = arg;
	st->beat_max = maxlen;
	st->beat_ttl = ttl;
	if (fn != NULL)
		ev_timer_start(st->loop, &st->beat);
	else
		ev_timer_stop(st->loop, &st->beat);
}

static void
beat_done(void *arg, int status, size_t n, const char *const *vals,
    const size_t *lens)
{
	struct store	*st = arg;
	size_t		 i;

	st->beating = 0;
	if (st->beat_again) {
		st->beat_again = 0;
		beat_cb(st->loop, &st->beat, 0);
	}
	for (i = 0; status == ST_OK && i < n; i++)
		mcp_log(MCP_LOG_WARN, "redis: instance %.*s lost (no "
		    "heartbeat for %d s): its calls answered with an error in "
		    "their event logs, its running tasks failed (instance, "
		    "calls, tasks: %.*s)", lens[i] < 8 ?
		    (int)lens[i] : 8, vals[i], BEAT_TTL, (int)(lens[i] > 40 ?
		    40 : lens[i]), vals[i]);
}

static void
beat_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct store	*st = w->data;
	struct buf	 calls = { 0 }, tasks = { 0 };
	struct cmd	 c;
	struct op	*op;
	int		 on;

	(void)loop;
	(void)revents;
	if (st->beating || st->beat_fn == NULL ||
	    (op = op_new(st, 0)) == NULL)
		return;
	if (st->beat_fn(st->beat_arg, &calls) != 0 || calls.len == 0 ||
	    mcp__taskshare_working(st->srv, &tasks) != MCP_OK) {
		free(op);
		mcp__buf_free(&calls);
		mcp__buf_free(&tasks);
		return;
	}
	op->lfn = beat_done;
	op->arg = st;
	EVAL(&c, beat_script, 0);
	word_s(&c, st->prefix);
	word(&c, st->tag, 8);
	word(&c, calls.data, calls.len);
	word_f(&c, "%d", BEAT_TTL);
	word_f(&c, "%ld", st->beat_max);
	word_f(&c, "%d", st->beat_ttl);
	word_s(&c, st->beat_on ? "1" : "0");
	word(&c, tasks.data, tasks.len);
	on = !(calls.len == 2 && memcmp(calls.data, "[]", 2) == 0) ||
	    !(tasks.len == 2 && memcmp(tasks.data, "[]", 2) == 0);
	if (send_op(st, op, &c) == 0) {
		st->beating = 1;
		st->beat_on = on;
	}
	mcp__buf_free(&calls);
	mcp__buf_free(&tasks);
}

/* ---- tasks: <prefix>task:<id>, <prefix>stasks:<sid> ------------------- */


/* A task began here: the heartbeat names it now, not up to a second
 * later (killed meanwhile, its record would say working until its TTL). */
static void
beat_soon(struct store *st)
{
	if (st->beating)
		st->beat_again = 1;
	else
		beat_cb(st->loop, &st->beat, 0);
}

static int
task_put(void *arg, const char *id, const char *sid, const char *rec,
    size_t len, long long ttl_ms, int working)
{
	struct store	*st = arg;
	struct cmd	 c;
	double		 now = ev_now(st->loop) * 1000;
	long long	 life = 2LL * st->srv->task_ttl_ms + 60000;
	int		 done;

	EVAL(&c, task_put_script, sid != NULL ? 2 : 1);
	word_key(&c, st, "task:", id);
	if (sid != NULL)
		word_key(&c, st, "stasks:", sid);
	word(&c, rec, len);
	word_f(&c, "%lld", ttl_ms > 0 ? ttl_ms : 1);
	if (sid != NULL) {
		/* Its creation is in the record; the index needs only an
		 * order, that of the first put (the task's link: NX), and
		 * to know what is surely gone. */
		word_f(&c, "%.0f", now);
		word_s(&c, id);
		word_f(&c, "%.0f", now - (double)life);
		word_f(&c, "%lld", life / 1000);
	}
	if (command(st, NULL, NULL, &c) != 0)
		return -1;
	/* Out now, before the answer that names the task: the client may
	 * ask another instance for it at once. Only the write: an error
	 * is the loop's to find (no callback runs from here). */
	(void)redisBufferWrite(&st->cmd.ac->c, &done);
	if (working)
		beat_soon(st);
	return 0;
}

static int
task_get(void *arg, const char *id, size_t max, tstore_fn fn, void *farg)
{
	struct store	*st = arg;
	struct cmd	 c;
	struct op	*op;

	if ((op = op_new(st, max)) == NULL)
		return -1;
	op->fn = fn;
	op->arg = farg;
	cmd_init(&c);
	WORD(&c, "GET");
	word_key(&c, st, "task:", id);
	return send_op(st, op, &c);
}

static int
task_del(void *arg, const char *id, const char *sid)
{
	struct store	*st = arg;
	struct cmd	 c;

	cmd_init(&c);
	WORD(&c, "DEL");
	word_key(&c, st, "task:", id);
	if (command(st, NULL, NULL, &c) != 0 || sid == NULL)
		return -1;
	cmd_init(&c);
	WORD(&c, "ZREM");
	word_key(&c, st, "stasks:", sid);
	word_s(&c, id);
	return command(st, NULL, NULL, &c);
}

static int
task_list(void *arg, const char *sid, int offset, int limit, size_t max,
    tstore_list_fn fn, void *farg)
{
	struct store	*st = arg;
	struct cmd	 c;
	struct op	*op;

	if ((op = op_new(st, max)) == NULL)
		return -1;
	op->lfn = fn;
	op->arg = farg;
	EVAL(&c, task_list_script, 1);
	word_key(&c, st, "stasks:", sid);
	word_f(&c, "%stask:", st->prefix);
	word_f(&c, "%d", offset);
	word_f(&c, "%d", limit > 0 ? limit : 1);
	return send_op(st, op, &c);
}

static int
task_tell(void *arg, const char *tag, const char *sid, const char *json,
    size_t len)
{
	return mcp__store_relay(arg, tag, RELAY_TASK, sid != NULL ? sid :
	    "00000000000000000000000000000000", json, len);
}

const struct task_store mcp__store_tasks = {
	task_put, task_get, task_del, task_list, task_tell
};

/* ---- legacy SSE streams: <prefix>sse:<sid> ----------------------------- */


/* "<tag> -" or "<tag> s<subject>": who holds the stream, for whom. */
static int
sse_who(struct buf *b, const char *tag, const char *subject)
{
	if (mcp__buf_add(b, tag, 8) != MCP_OK ||
	    mcp__buf_addc(b, ' ') != MCP_OK)
		return -1;
	if (subject == NULL)
		return mcp__buf_addc(b, '-') == MCP_OK ? 0 : -1;
	if (mcp__buf_addc(b, 's') != MCP_OK ||
	    mcp__buf_add(b, subject, strlen(subject)) != MCP_OK)
		return -1;
	return 0;
}

int
mcp__store_sse_hold(struct store *st, const char *sid, const char *subject,
    int ttl)
{
	struct cmd	 c;
	struct buf	 b = { 0 };
	int		 rc = -1;

	if (sse_who(&b, st->tag, subject) == 0) {
		cmd_init(&c);
		WORD(&c, "SET");
		word_key(&c, st, "sse:", sid);
		word(&c, b.data, b.len);
		WORD(&c, "EX");
		word_f(&c, "%d", ttl);
		rc = command(st, NULL, NULL, &c);
	}
	mcp__buf_free(&b);
	return rc;
}

int
mcp__store_sse_drop(struct store *st, const char *sid)
{
	struct cmd	 c;

	cmd_init(&c);
	WORD(&c, "DEL");
	word_key(&c, st, "sse:", sid);
	return command(st, NULL, NULL, &c);
}

int
mcp__store_sse_post(struct store *st, const char *sid, const char *subject,
    const char *json, size_t len, store_int_fn fn, void *arg)
{
	struct cmd	 c;
	struct buf	 msg = { 0 }, who = { 0 };
	struct op	*op;
	int		 rc = -1;

	if (relay_msg(&msg, RELAY_POST, sid, json, len) != 0 ||
	    sse_who(&who, "        ", subject) != 0 ||
	    (op = op_new(st, 0)) == NULL)
		goto out;
	op->ifn = fn;
	op->arg = arg;
	EVAL(&c, sse_post_script, 1);
	word_key(&c, st, "sse:", sid);
	word_s(&c, st->prefix);
	word(&c, msg.data, msg.len);
	word(&c, who.data + 9, who.len - 9);	/* what follows "<tag> " */
	rc = send_op(st, op, &c);
out:
	mcp__buf_free(&msg);
	mcp__buf_free(&who);
	return rc;
}
