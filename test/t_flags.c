/*
 * t_flags.c: unit tests for the application's flags (src/main/flags.c)
 * and the environment of the standard command line (src/main/cli.c),
 * through mcp_server_add_flag and mcp_server_main in this process. Each
 * case makes a server, sets the environment, runs mcp_server_main with
 * stdin on /dev/null (so a good command line serves stdio, meets the end
 * of input and returns) and stdout and stderr in files, then reads the
 * flags back, and the standard settings through main/main.h. Single-
 * threaded but for the server's own workers.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "main/main.h"
#include "tap.h"

static char	 out[65536];	/* the last run's stdout */
static char	 err[65536];	/* and its stderr */

/* FILE's content into BUF, then FILE emptied. */
static void
slurp(int fd, char *buf, size_t size)
{
	ssize_t	 n;
	size_t	 len = 0;

	lseek(fd, 0, SEEK_SET);
	while (len < size - 1) {
		n = read(fd, buf + len, size - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	if (ftruncate(fd, 0) != 0)
		buf[0] = '\0';
	lseek(fd, 0, SEEK_SET);
}

/* mcp_server_main(SRV, ARGV...) with stdout and stderr caught. */
static int
run(mcp_server *srv, char **argv)
{
	static int	 ofd = -1, efd = -1;
	char		 opath[] = "/tmp/t_flags.out.XXXXXX";
	char		 epath[] = "/tmp/t_flags.err.XXXXXX";
	int		 argc, rc, save1, save2;

	if (ofd < 0) {
		ofd = mkstemp(opath);
		efd = mkstemp(epath);
		unlink(opath);
		unlink(epath);
	}
	for (argc = 0; argv[argc] != NULL; argc++)
		continue;
	fflush(stdout);
	fflush(stderr);
	save1 = dup(1);
	save2 = dup(2);
	dup2(ofd, 1);
	dup2(efd, 2);
	rc = mcp_server_main(srv, argc, argv);
	fflush(stderr);
	dup2(save1, 1);
	dup2(save2, 2);
	close(save1);
	close(save2);
	slurp(ofd, out, sizeof(out));
	slurp(efd, err, sizeof(err));
	return rc;
}

static int
starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

#define ARGV(...)	((char *[]){ "t_flags", __VA_ARGS__, NULL })
#define NOARGS		((char *[]){ "t_flags", NULL })

/* A server named "t" (so its variables are T_*) with a flag of each type. */
static mcp_server *
server(void)
{
	mcp_server	*srv = mcp_server_new("t", "1.0");
	int		 rc;

	rc = mcp_server_add_flag(srv, "db", MCP_FLAG_STR | MCP_FLAG_REQUIRED,
	    NULL, "the database file");
	if (rc == MCP_OK)
		rc = mcp_server_add_flag(srv, "port", MCP_FLAG_INT, "5432",
		    "the port");
	if (rc == MCP_OK)
		rc = mcp_server_add_flag(srv, "cache", MCP_FLAG_BOOL, "true",
		    "cache results");
	if (rc == MCP_OK)
		rc = mcp_server_add_flag(srv, "readonly", MCP_FLAG_BOOL, NULL,
		    "refuse writes");
	if (rc == MCP_OK)
		rc = mcp_server_add_flag(srv, "name", MCP_FLAG_STR, NULL, NULL);
	if (rc != MCP_OK) {
		diag("setup: %s", mcp_strerror(rc));
		exit(1);
	}
	return srv;
}

static void
clear_env(void)
{
	static const char *vars[] = { "T_DB", "T_PORT", "T_CACHE",
	    "T_READONLY", "T_NAME", "DB", "X9_DB", "MY_DB", "MCP_WORKERS",
	    "MCP_GRACE_MS", "MCP_DRAIN_TIMEOUT", "MCP_ALLOW_HOST",
	    "MCP_STATELESS", "MCP_LOG_LEVEL", "MCP_MAX_MESSAGE",
	    "MCP_METRICS", "MCP_STDIO", "MCP_METRICS_LISTEN", NULL };
	int	 i;

	for (i = 0; vars[i] != NULL; i++)
		unsetenv(vars[i]);
	mcp_log_set_level(MCP_LOG_NOTICE);
}

static void
registration(void)
{
	mcp_server	*srv = mcp_server_new("t", "1.0");
	char		 longname[MCP_FLAG_NAME_MAX + 2];
	const char	*bad[] = { "", "Db", "-db", "1db", "d b", "db_x", "d=b",
	    NULL };
	int		 i;

	is_int(mcp_server_add_flag(NULL, "db", MCP_FLAG_STR, NULL, NULL),
	    MCP_ENOMEM, "a NULL server: MCP_ENOMEM");
	is_int(mcp_server_add_flag(srv, NULL, MCP_FLAG_STR, NULL, NULL),
	    MCP_EINVAL, "a NULL name: MCP_EINVAL");
	for (i = 0; bad[i] != NULL; i++)
		is_int(mcp_server_add_flag(srv, bad[i], MCP_FLAG_STR, NULL,
		    NULL), MCP_EINVAL, "name \"%s\": MCP_EINVAL", bad[i]);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	is_int(mcp_server_add_flag(srv, longname, MCP_FLAG_STR, NULL, NULL),
	    MCP_EINVAL, "a name of %d bytes: MCP_EINVAL",
	    MCP_FLAG_NAME_MAX + 1);
	longname[MCP_FLAG_NAME_MAX] = '\0';
	is_int(mcp_server_add_flag(srv, longname, MCP_FLAG_STR, NULL, NULL),
	    MCP_OK, "a name of %d bytes: MCP_OK", MCP_FLAG_NAME_MAX);
	is_int(mcp_server_add_flag(srv, "http", MCP_FLAG_STR, NULL, NULL),
	    MCP_EEXIST, "a standard option's name (http): MCP_EEXIST");
	is_int(mcp_server_add_flag(srv, "help", MCP_FLAG_BOOL, NULL, NULL),
	    MCP_EEXIST, "help: MCP_EEXIST");
	is_int(mcp_server_add_flag(srv, "db", MCP_FLAG_STR, NULL, "x"),
	    MCP_OK, "db: MCP_OK");
	is_int(mcp_server_add_flag(srv, "db", MCP_FLAG_INT, NULL, "x"),
	    MCP_EEXIST, "db again: MCP_EEXIST");
	is_int(mcp_server_add_flag(srv, "t0", 0, NULL, NULL), MCP_EINVAL,
	    "type 0: MCP_EINVAL");
	is_int(mcp_server_add_flag(srv, "t4", 4, NULL, NULL), MCP_EINVAL,
	    "type 4: MCP_EINVAL");
	is_int(mcp_server_add_flag(srv, "tr", MCP_FLAG_REQUIRED, NULL, NULL),
	    MCP_EINVAL, "MCP_FLAG_REQUIRED without a type: MCP_EINVAL");
	is_int(mcp_server_add_flag(srv, "rd", MCP_FLAG_INT | MCP_FLAG_REQUIRED,
	    "1", NULL), MCP_EINVAL, "required with a default: MCP_EINVAL");
	is_int(mcp_server_add_flag(srv, "rb", MCP_FLAG_BOOL |
	    MCP_FLAG_REQUIRED, NULL, NULL), MCP_EINVAL,
	    "a required boolean: MCP_EINVAL");
	is_int(mcp_server_add_flag(srv, "bi", MCP_FLAG_INT, "12x", NULL),
	    MCP_EINVAL, "an integer defaulting to \"12x\": MCP_EINVAL");
	is_int(mcp_server_add_flag(srv, "bi", MCP_FLAG_INT, " 12", NULL),
	    MCP_EINVAL, "an integer defaulting to \" 12\": MCP_EINVAL");
	is_int(mcp_server_add_flag(srv, "bb", MCP_FLAG_BOOL, "maybe", NULL),
	    MCP_EINVAL, "a boolean defaulting to \"maybe\": MCP_EINVAL");
	is_int(mcp_server_add_flag(srv, "bb", MCP_FLAG_BOOL, "YES", NULL),
	    MCP_OK, "a boolean defaulting to \"YES\": MCP_OK");
	is_int(mcp_server_flag_bool(srv, "bb"), 1, "and it is true");
	is_int(mcp_server_add_flag(srv, "neg", MCP_FLAG_INT, "-42", NULL),
	    MCP_OK, "an integer defaulting to -42: MCP_OK");
	is_int(mcp_server_flag_int(srv, "neg"), -42, "and it is -42");

	is_int(mcp_server_set_flag_env(srv, "nope", "X"), MCP_ENOENT,
	    "set_flag_env of no flag: MCP_ENOENT");
	is_int(mcp_server_set_flag_env(srv, "db", "A-B"), MCP_EINVAL,
	    "set_flag_env \"A-B\": MCP_EINVAL");
	is_int(mcp_server_set_flag_env(srv, "db", ""), MCP_EINVAL,
	    "set_flag_env \"\": MCP_EINVAL");
	is_int(mcp_server_set_flag_env(srv, "db", NULL), MCP_OK,
	    "set_flag_env NULL: MCP_OK");
	is_int(mcp_server_set_env_prefix(srv, "a-b"), MCP_EINVAL,
	    "set_env_prefix \"a-b\": MCP_EINVAL");
	is_int(mcp_server_set_env_prefix(srv, NULL), MCP_EINVAL,
	    "set_env_prefix NULL: MCP_EINVAL");
	is_int(mcp_server_set_env_prefix(NULL, "X"), MCP_ENOMEM,
	    "set_env_prefix on a NULL server: MCP_ENOMEM");

	is_str(mcp_server_flag_str(srv, "nope"), NULL,
	    "flag_str of no flag: NULL");
	is_int(mcp_server_flag_int(srv, "bb"), 0,
	    "flag_int of a boolean: 0");
	is_int(mcp_server_flag_bool(srv, "neg"), 0,
	    "flag_bool of an integer: 0");
	is_str(mcp_server_flag_str(NULL, "db"), NULL,
	    "flag_str on a NULL server: NULL");
	mcp_server_free(srv);
}

static void
defaults(void)
{
	mcp_server	*srv = server();

	is_str(mcp_server_flag_str(srv, "db"), NULL,
	    "before main: db has no value");
	is_int(mcp_server_flag_int(srv, "port"), 5432,
	    "before main: port is its default, 5432");
	is_str(mcp_server_flag_str(srv, "port"), "5432",
	    "flag_str of an integer flag: its text");
	is_int(mcp_server_flag_bool(srv, "cache"), 1,
	    "before main: cache is its default, true");
	is_int(mcp_server_flag_bool(srv, "readonly"), 0,
	    "a boolean without a default is false");
	is_int(run(srv, ARGV("--db", "x.db")), MCP_OK,
	    "main --db x.db: MCP_OK");
	is_str(mcp_server_flag_str(srv, "db"), "x.db", "db is x.db");
	is_int(mcp_server_flag_int(srv, "port"), 5432,
	    "port is still its default");
	is_int(mcp_server_flag_bool(srv, "cache"), 1,
	    "cache is still its default");
	is_str(mcp_server_flag_str(srv, "name"), NULL,
	    "name, given nowhere, has no value");
	mcp_server_free(srv);
}

/* Flag, then environment, then default: for each type. */
static void
precedence(void)
{
	mcp_server	*srv;

	clear_env();
	setenv("T_DB", "env.db", 1);
	setenv("T_PORT", "7", 1);
	setenv("T_CACHE", "no", 1);
	setenv("T_READONLY", "TRUE", 1);
	srv = server();
	is_int(run(srv, ARGV("--port", "9", "--readonly=false")), MCP_OK,
	    "main --port 9 --readonly=false, with T_DB, T_PORT, T_CACHE, "
	    "T_READONLY: MCP_OK");
	is_str(mcp_server_flag_str(srv, "db"), "env.db",
	    "string: the environment's (T_DB), over none");
	is_int(mcp_server_flag_int(srv, "port"), 9,
	    "integer: the flag's 9 over T_PORT=7");
	is_int(mcp_server_flag_bool(srv, "cache"), 0,
	    "boolean: T_CACHE=no over the default true");
	is_int(mcp_server_flag_bool(srv, "readonly"), 0,
	    "boolean: --readonly=false over T_READONLY=TRUE");
	mcp_server_free(srv);

	srv = server();
	is_int(run(srv, ARGV("--db=cli.db", "--cache", "--readonly")), MCP_OK,
	    "main --db=cli.db --cache --readonly, same environment: MCP_OK");
	is_str(mcp_server_flag_str(srv, "db"), "cli.db",
	    "string: --db over T_DB");
	is_int(mcp_server_flag_int(srv, "port"), 7,
	    "integer: T_PORT=7 over the default 5432");
	is_int(mcp_server_flag_bool(srv, "cache"), 1,
	    "boolean: a bare --cache over T_CACHE=no");
	is_int(mcp_server_flag_bool(srv, "readonly"), 1,
	    "boolean: a bare --readonly is true");
	mcp_server_free(srv);

	setenv("T_PORT", "", 1);
	setenv("T_DB", "", 1);
	srv = server();
	is_int(run(srv, ARGV("--db", "a")), MCP_OK, "main with T_PORT=\"\"");
	is_int(mcp_server_flag_int(srv, "port"), 5432,
	    "an empty variable counts as unset: the default");
	mcp_server_free(srv);
	srv = server();
	is_int(run(srv, NOARGS), MCP_EUSAGE,
	    "T_DB=\"\" does not give the required --db: MCP_EUSAGE");
	mcp_server_free(srv);
	clear_env();
}

static void
usage_errors(void)
{
	mcp_server	*srv;

	clear_env();
	srv = server();
	is_int(run(srv, NOARGS), MCP_EUSAGE, "required --db missing: "
	    "MCP_EUSAGE");
	ok(strstr(err, "t_flags: --db is required (or T_DB in the "
	    "environment)") != NULL, "the message names the flag and its "
	    "variable");
	ok(strstr(err, "usage: t_flags --db VALUE [--stdio]") != NULL,
	    "the usage line names the required flag");
	ok(out[0] == '\0', "nothing on stdout");
	mcp_server_free(srv);

	srv = server();
	is_int(run(srv, ARGV("--db", "a", "--port", "80x")), MCP_EUSAGE,
	    "--port 80x: MCP_EUSAGE");
	ok(strstr(err, "--port: expected an integer, not \"80x\"") != NULL,
	    "the message names --port and the value");
	mcp_server_free(srv);

	srv = server();
	is_int(run(srv, ARGV("--db", "a", "--port", "99999999999999999999")),
	    MCP_EUSAGE, "--port past a long long: MCP_EUSAGE");
	mcp_server_free(srv);

	setenv("T_PORT", "eighty", 1);
	srv = server();
	is_int(run(srv, ARGV("--db", "a")), MCP_EUSAGE,
	    "T_PORT=eighty: MCP_EUSAGE");
	ok(strstr(err, "T_PORT (--port): expected an integer, not "
	    "\"eighty\"") != NULL, "the message names the variable and the "
	    "flag");
	mcp_server_free(srv);
	srv = server();
	is_int(run(srv, ARGV("--db", "a", "--port", "1")), MCP_OK,
	    "a bad T_PORT under --port 1 is never read: MCP_OK");
	is_int(mcp_server_flag_int(srv, "port"), 1, "port is 1");
	mcp_server_free(srv);
	unsetenv("T_PORT");

	srv = server();
	is_int(run(srv, ARGV("--db", "a", "--cache=maybe")), MCP_EUSAGE,
	    "--cache=maybe: MCP_EUSAGE");
	ok(strstr(err, "--cache: expected true or false") != NULL,
	    "the message names --cache");
	mcp_server_free(srv);

	srv = server();
	is_int(run(srv, ARGV("--db", "a", "--nope")), MCP_EUSAGE,
	    "an unknown flag: MCP_EUSAGE");
	mcp_server_free(srv);
	srv = server();
	is_int(run(srv, ARGV("--db")), MCP_EUSAGE,
	    "--db without its value: MCP_EUSAGE");
	mcp_server_free(srv);
}

static void
environment_names(void)
{
	mcp_server	*srv;

	clear_env();
	setenv("MY_DB", "mine", 1);
	setenv("T_NAME", "ignored", 1);
	srv = server();
	if (mcp_server_set_flag_env(srv, "db", "MY_DB") != MCP_OK ||
	    mcp_server_set_flag_env(srv, "name", NULL) != MCP_OK)
		diag("set_flag_env failed");
	is_int(run(srv, NOARGS), MCP_OK, "db from MY_DB "
	    "(mcp_server_set_flag_env)");
	is_str(mcp_server_flag_str(srv, "db"), "mine", "db is MY_DB's");
	is_str(mcp_server_flag_str(srv, "name"), NULL,
	    "a flag whose variable is NULL reads none (T_NAME is set)");
	mcp_server_free(srv);
	clear_env();

	setenv("X9_DB", "x9", 1);
	setenv("T_DB", "t", 1);
	srv = server();
	if (mcp_server_set_env_prefix(srv, "X9") != MCP_OK)
		diag("set_env_prefix failed");
	is_int(run(srv, NOARGS), MCP_OK, "prefix X9");
	is_str(mcp_server_flag_str(srv, "db"), "x9", "db is X9_DB's, not "
	    "T_DB's");
	mcp_server_free(srv);
	clear_env();

	setenv("DB", "bare", 1);
	srv = server();
	if (mcp_server_set_env_prefix(srv, "") != MCP_OK)
		diag("set_env_prefix failed");
	is_int(run(srv, NOARGS), MCP_OK, "an empty prefix");
	is_str(mcp_server_flag_str(srv, "db"), "bare", "db is DB's");
	mcp_server_free(srv);
	clear_env();

	/* Named "my-db.server": MY_DB_SERVER_DB. */
	setenv("MY_DB_SERVER_DB", "derived", 1);
	srv = mcp_server_new("my-db.server", "1");
	if (mcp_server_add_flag(srv, "db", MCP_FLAG_STR, NULL, NULL) !=
	    MCP_OK)
		diag("add_flag failed");
	is_int(run(srv, NOARGS), MCP_OK, "server \"my-db.server\"");
	is_str(mcp_server_flag_str(srv, "db"), "derived",
	    "its prefix is MY_DB_SERVER: anything but letters and digits "
	    "as _");
	mcp_server_free(srv);
	unsetenv("MY_DB_SERVER_DB");

	/* "mcp-log" and "level": MCP_LOG_LEVEL, --log-level's. */
	srv = mcp_server_new("mcp-log", "1");
	if (mcp_server_add_flag(srv, "level", MCP_FLAG_STR, NULL, NULL) !=
	    MCP_OK)
		diag("add_flag failed");
	is_int(run(srv, NOARGS), MCP_EINVAL, "a flag whose variable is a "
	    "standard option's (MCP_LOG_LEVEL): MCP_EINVAL");
	ok(strstr(err, "MCP_LOG_LEVEL") != NULL, "logged, naming it");
	if (mcp_server_set_flag_env(srv, "level", "MCP_LOG_APP_LEVEL") !=
	    MCP_OK)
		diag("set_flag_env failed");
	is_int(run(srv, NOARGS), MCP_OK, "given another: MCP_OK");
	mcp_server_free(srv);
}

static void
help(void)
{
	mcp_server	*srv = server();

	is_int(run(srv, ARGV("--help")), MCP_OK,
	    "--help: MCP_OK, the required --db missing");
	ok(starts(out, "usage: t_flags --db VALUE [--stdio]"),
	    "on stdout, the usage line first, naming --db");
	ok(strstr(out, "Options of t_flags:\n  --db VALUE              the "
	    "database file (required; env T_DB)\n") != NULL,
	    "--db with its help, required, and its variable");
	ok(strstr(out, "  --port N                the port (default: 5432; "
	    "env T_PORT)\n") != NULL, "--port, its default and variable");
	ok(strstr(out, "  --cache                 cache results (default: "
	    "true; env T_CACHE)\n") != NULL, "--cache");
	ok(strstr(out, "  --name VALUE            (env T_NAME)\n") != NULL,
	    "--name, with no help");
	ok(strstr(out, "Standard options:\n  --stdio ") != NULL,
	    "then the standard options");
	ok(strstr(out, "--max-message BYTES") != NULL &&
	    strstr(out, "MCP_MAX_MESSAGE") != NULL,
	    "--max-message, and how to set it from the environment");
	ok(err[0] == '\0', "nothing on stderr");
	mcp_server_free(srv);

	srv = mcp_server_new("plain", "1");
	is_int(run(srv, ARGV("--help")), MCP_OK, "--help of a server without "
	    "flags");
	ok(starts(out, "usage: t_flags [--stdio] [--http ADDR:PORT] "
	    "[options]\n") && strstr(out, "Options of") == NULL &&
	    strstr(out, "Standard options") == NULL,
	    "the usage line and the standard options alone");
	mcp_server_free(srv);
}

/* The standard options from the environment. */
static void
standard(void)
{
	mcp_server	*srv;
	struct host	*h;

	clear_env();
	setenv("MCP_WORKERS", "3", 1);
	srv = server();
	h = mcp__host(srv);
	is_int(run(srv, ARGV("--db", "a")), MCP_OK, "MCP_WORKERS=3");
	is_int(h->workers, 3, "3 workers");
	mcp_server_free(srv);
	srv = server();
	h = mcp__host(srv);
	is_int(run(srv, ARGV("--db", "a", "--workers", "2")), MCP_OK,
	    "MCP_WORKERS=3 --workers 2");
	is_int(h->workers, 2, "2 workers: the flag wins");
	mcp_server_free(srv);
	setenv("MCP_WORKERS", "abc", 1);
	srv = server();
	is_int(run(srv, ARGV("--db", "a")), MCP_EUSAGE,
	    "MCP_WORKERS=abc: MCP_EUSAGE");
	ok(strstr(err, "MCP_WORKERS (--workers): bad value \"abc\"") != NULL,
	    "the message names the variable and the flag");
	mcp_server_free(srv);
	clear_env();

	setenv("MCP_GRACE_MS", "100", 1);
	srv = server();
	h = mcp__host(srv);
	is_int(run(srv, ARGV("--db", "a", "--drain-timeout", "2")), MCP_OK,
	    "MCP_GRACE_MS=100 --drain-timeout 2");
	is_int(h->grace_ms, 2000, "grace 2000 ms: one setting, the flag's");
	mcp_server_free(srv);
	srv = server();
	h = mcp__host(srv);
	is_int(run(srv, ARGV("--db", "a")), MCP_OK, "MCP_GRACE_MS=100");
	is_int(h->grace_ms, 100, "grace 100 ms");
	mcp_server_free(srv);
	clear_env();

	setenv("MCP_ALLOW_HOST", " a.example, b.example ,,", 1);
	srv = server();
	h = mcp__host(srv);
	is_int(run(srv, ARGV("--db", "a")), MCP_OK,
	    "MCP_ALLOW_HOST=\" a.example, b.example ,,\"");
	ok(h->hconf.nallow_hosts == 2 &&
	    strcmp(h->hconf.allow_hosts[0], "a.example") == 0 &&
	    strcmp(h->hconf.allow_hosts[1], "b.example") == 0,
	    "two hosts, a.example and b.example");
	mcp_server_free(srv);
	srv = server();
	h = mcp__host(srv);
	is_int(run(srv, ARGV("--db", "a", "--allow-host", "c.example")),
	    MCP_OK, "the same and --allow-host c.example");
	ok(h->hconf.nallow_hosts == 1 &&
	    strcmp(h->hconf.allow_hosts[0], "c.example") == 0,
	    "c.example alone: the command line replaces the list");
	mcp_server_free(srv);
	clear_env();

	setenv("MCP_STATELESS", "yes", 1);
	setenv("MCP_METRICS", "0", 1);
	srv = server();
	h = mcp__host(srv);
	is_int(run(srv, ARGV("--db", "a")), MCP_OK,
	    "MCP_STATELESS=yes MCP_METRICS=0");
	ok(h->hconf.stateless == 1 && h->hconf.metrics == 0,
	    "stateless, no metrics");
	mcp_server_free(srv);
	srv = server();
	h = mcp__host(srv);
	is_int(run(srv, ARGV("--db", "a", "--stateless=0", "--metrics")),
	    MCP_OK, "the same and --stateless=0 --metrics");
	ok(h->hconf.stateless == 0 && h->hconf.metrics == 1,
	    "not stateless, metrics: the flags win");
	mcp_server_free(srv);
	setenv("MCP_STATELESS", "maybe", 1);
	srv = server();
	is_int(run(srv, ARGV("--db", "a")), MCP_EUSAGE,
	    "MCP_STATELESS=maybe: MCP_EUSAGE");
	mcp_server_free(srv);
	srv = server();
	is_int(run(srv, ARGV("--db", "a", "--json-response=sometimes")),
	    MCP_EUSAGE, "--json-response=sometimes: MCP_EUSAGE");
	ok(strstr(err, "--json-response: expected true or false") != NULL,
	    "the message names --json-response");
	mcp_server_free(srv);
	clear_env();

	setenv("MCP_MAX_MESSAGE", "1000", 1);
	srv = server();
	is_int(run(srv, ARGV("--db", "a")), MCP_OK, "MCP_MAX_MESSAGE=1000");
	is_int(srv->max_message, 1000, "max message 1000");
	mcp_server_free(srv);
	setenv("MCP_MAX_MESSAGE", "10", 1);
	srv = server();
	is_int(run(srv, ARGV("--db", "a")), MCP_EUSAGE,
	    "MCP_MAX_MESSAGE=10, under its range: MCP_EUSAGE");
	mcp_server_free(srv);
	clear_env();

	setenv("MCP_LOG_LEVEL", "debug", 1);
	srv = server();
	is_int(run(srv, ARGV("--db", "a")), MCP_OK, "MCP_LOG_LEVEL=debug");
	is_int(mcp_log_get_level(), MCP_LOG_DEBUG, "the level is debug");
	ok(strstr(err, "info: ") != NULL, "and info lines were logged");
	mcp_server_free(srv);
	setenv("MCP_LOG_LEVEL", "err", 1);
	srv = server();
	is_int(run(srv, ARGV("--db", "a", "-v")), MCP_OK,
	    "MCP_LOG_LEVEL=err -v");
	is_int(mcp_log_get_level(), MCP_LOG_WARN, "warn: -v counts from it");
	ok(strstr(err, "info: ") == NULL, "and no info lines were logged");
	mcp_server_free(srv);
	setenv("MCP_LOG_LEVEL", "loud", 1);
	srv = server();
	is_int(run(srv, ARGV("--db", "a")), MCP_EUSAGE,
	    "MCP_LOG_LEVEL=loud: MCP_EUSAGE");
	ok(strstr(err, "MCP_LOG_LEVEL (--log-level): unknown level "
	    "\"loud\"") != NULL, "the message names it");
	mcp_server_free(srv);
	srv = server();
	is_int(run(srv, ARGV("--db", "a", "--log-level", "info")), MCP_OK,
	    "MCP_LOG_LEVEL=loud --log-level info: MCP_OK");
	is_int(mcp_log_get_level(), MCP_LOG_INFO, "the level is info");
	mcp_server_free(srv);
	clear_env();

	setenv("MCP_METRICS_LISTEN", "127.0.0.1:0", 1);
	srv = server();
	h = mcp__host(srv);
	is_int(run(srv, ARGV("--db", "a")), MCP_OK,
	    "MCP_METRICS_LISTEN=127.0.0.1:0, beside stdio");
	ok(h->hconf.metrics_listen != NULL &&
	    strcmp(h->hconf.metrics_listen, "127.0.0.1:0") == 0,
	    "metrics listen on 127.0.0.1:0");
	ok(strstr(err, "metrics on http://127.0.0.1:") != NULL,
	    "and it listened there");
	ok(getenv("MCP_METRICS_LISTEN") == NULL,
	    "MCP_METRICS_LISTEN is out of the environment, for children");
	mcp_server_free(srv);

	setenv("MCP_STDIO", "no", 1);
	srv = server();
	is_int(run(srv, ARGV("--db", "a")), MCP_OK,
	    "MCP_STDIO=no without --http: still stdio, the default");
	mcp_server_free(srv);
	clear_env();
}

int
main(void)
{
	int	 fd;

	/* A good command line serves stdio: let it end at once. */
	fd = open("/dev/null", O_RDONLY);
	if (fd < 0 || dup2(fd, 0) < 0)
		return 1;
	clear_env();
	registration();
	defaults();
	precedence();
	usage_errors();
	environment_names();
	help();
	standard();
	return tap_done();
}
