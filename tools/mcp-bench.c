/*
 * mcp-bench: a load generator for MCP servers that speak JSON lines on
 * stdio.  It starts the server command as a child with its stdin and
 * stdout on pipes, performs the initialize handshake, and then keeps a
 * window of W pipelined tools/call requests outstanding: first for a
 * warm-up, then for a measured phase of N requests or D seconds.
 * Responses are matched by their integer "id" with a plain scan, never a
 * JSON parse, so that the generator stays far cheaper than any server.
 * It reports throughput, latency percentiles, the server's CPU time per
 * request (the child's process CPU clock, in nanoseconds), and its idle
 * and peak resident memory, as one human-readable line or one JSON line.
 * The main thread does all the I/O on the pipes; a watchdog thread only
 * kills the server's process group when no response has arrived for the
 * timeout, so that a hung server cannot hang the benchmark.
 *
 * With -u URL it speaks the legacy HTTP+SSE transport instead (protocol
 * 2024-11-05): GET URL opens the stream and names the message endpoint in
 * its "endpoint" event; the requests are POSTed over K keep-alive HTTP/1.1
 * connections (raw sockets, Content-Length bodies, one request in flight
 * per connection), and their answers, matched by id as above, arrive as
 * "message" events on the stream.  The server is either started from the
 * command as before (its port taken from its "listening on http://..."
 * log line when the URL's port is 0) or already running, its PID given
 * with -S for the CPU and memory figures.  With -i N it opens N sessions,
 * initializes them and leaves them idle, to measure the server's memory
 * per session and, with -d, its CPU time while they stay open.
 *
 * With -m URL it speaks Streamable HTTP (protocol 2025-03-26 and later):
 * it POSTs initialize to URL, keeps the Mcp-Session-Id of the answer,
 * POSTs notifications/initialized (202), then POSTs the tools/call
 * requests over K keep-alive connections, one request in flight on each.
 * Each answer comes back in its own POST's response body, either
 * application/json (the response) or text/event-stream (a priming event,
 * notifications, then the response; the stream then ends), with
 * Content-Length, chunked or until the connection closes.  With -s it is
 * stateless: no initialize, no session, only the tools/call POSTs.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BENCH_VERSION	"0.1.0"
#define PROTO_VERSION	"2025-06-18"
#define IBUF_SIZE	(1024 * 1024)
#define MAX_SHOWN	5		/* bad responses printed in full */

struct opts {
	long		 conc;		/* -c: requests outstanding */
	long		 count;		/* -n: measured requests */
	double		 secs;		/* -d: measured seconds, or 0 */
	long		 warm;		/* -w: warm-up requests */
	const char	*tool;		/* -t */
	const char	*args;		/* -a: raw JSON object */
	const char	*expect;	/* -e: substring every result holds */
	const char	*label;		/* -l: name in the report */
	const char	*errfile;	/* -E: the server's stderr */
	double		 timeout;	/* -T: seconds without a response */
	int		 json;		/* -j */
	int		 cpu_client;	/* -p, or -1 */
	int		 cpu_server;	/* -P, or -1 */
	char		**cmd;		/* after "--", or NULL */
	const char	*url;		/* -u or -m: HTTP mode */
	int		 mcp;		/* -m: Streamable HTTP */
	int		 stateless;	/* -s: no initialize, no session */
	pid_t		 spid;		/* -S: the server, not our child */
	long		 conns;		/* -k: POST connections */
	long		 idle;		/* -i: idle sessions to open */
	int		 raw;		/* -R: idle sessions not initialized */
	long		 progress;	/* -g: notifications per call, or -1 */
};

struct sse;
struct hconn;

/* One request in flight: its id (0 when the slot is free), the time its
 * batch was written, and with -g the progress notifications received for
 * it so far and the last progress value. */
struct slot {
	uint64_t	 id;
	uint64_t	 t;
	long		 nprog;
	double		 lastprog;
};

struct bench {
	const struct opts *o;
	pid_t		 pid;
	int		 wfd;		/* the server's stdin */
	int		 rfd;		/* the server's stdout */

	char		*pre;		/* request text before the id */
	size_t		 prelen;
	char		*mid;		/* with -g: between the id and the id
					 * again as progressToken, else "" */
	size_t		 midlen;
	char		*suf;		/* after the id, newline included */
	size_t		 suflen;
	size_t		 explen;

	char		*obuf;		/* a batch of requests */
	size_t		 ocap;
	size_t		 olen;
	size_t		 ooff;		/* bytes of obuf already written */

	char		*ibuf;		/* responses read, not yet handled */
	size_t		 icap;
	size_t		 ilen;

	struct slot	*ring;		/* indexed by id & mask */
	uint64_t	 mask;
	uint64_t	 next_id;
	long		 outstanding;

	int		 record;	/* measured phase: keep latencies */
	uint64_t	*lat;		/* nanoseconds */
	size_t		 nlat;
	size_t		 latcap;

	long		 errors;	/* error or wrong result */
	long		 unexpected;	/* unknown or duplicate id */
	long		 missing;	/* never answered */
	long		 other;		/* lines without an id */
	long		 nprogress;	/* progress notifications, measured */
	int		 shown;
	int		 eof;
	char		 proto[64];	/* protocolVersion the server chose */

	/* HTTP+SSE mode */
	pid_t		 spid;		/* whose CPU and memory, or 0 */
	int		 ep;		/* epoll */
	struct sse	*ss;		/* the sessions */
	long		 nss;
	long		 nopen;		/* sessions started */
	long		 ready;		/* sessions set up */
	long		 failed;	/* sessions that failed to set up */
	long		 closed;	/* streams ended by the server later */
	struct hconn	*hc;		/* the POST connections */
	long		 nhc;
	long		 livec;		/* not given up on */
	long		*freec;		/* idle connections, a stack */
	long		 nfreec;
	long		*postq;		/* sessions waiting to POST, a ring */
	long		 qhead, qlen;
	char		*callhdr;	/* a call's request up to its length */
	size_t		 callhdrlen;
	long		 http_errors;	/* non-2xx answers, lost requests */
	long		 reconnects;
	long		 keepalives;	/* comment lines on the streams */
	uint64_t	 stream_bytes;
	double		 stop_s;	/* SIGTERM to exit, or -1 */
	int		 killed;	/* it took SIGKILL */

	/* Streamable HTTP mode */
	char		 sid[256];	/* Mcp-Session-Id, or "" */
	int		 hs_failed;	/* the handshake failed */
	long		 bodies_json;	/* 2xx response bodies of each type */
	long		 bodies_sse;
};

static atomic_ulong	 progress;	/* bumped on every read */
static atomic_int	 watch_armed;
static atomic_int	 watch_stop;
static atomic_int	 watch_fired;
static pid_t		 child_pid;	/* also its process group, or 0 */
static pthread_t	 main_thread;
static double		 watch_secs;

static void
usage(void)
{
	fprintf(stderr,
	    "usage: mcp-bench [-j] [-a args] [-c window] [-d seconds] "
	    "[-E file]\n"
	    "                 [-e expect] [-g progress] [-l label] [-n count] "
	    "[-P cpu] [-p cpu]\n"
	    "                 [-T timeout] [-t tool] [-w warmup] "
	    "-- command [arg ...]\n"
	    "       mcp-bench -u url [-jR] [-a args] [-c window] "
	    "[-d seconds | -n count]\n"
	    "                 [-E file] [-e expect] [-g progress] "
	    "[-i sessions] [-k conns] [-l label]\n"
	    "                 [-P cpu] [-p cpu] [-T timeout] [-t tool] "
	    "[-w warmup]\n"
	    "                 [-S pid | -- command [arg ...]]\n"
	    "       mcp-bench -m url [-js] [-a args] [-c window] "
	    "[-d seconds | -n count]\n"
	    "                 [-E file] [-e expect] [-g progress] [-k conns] "
	    "[-l label] [-P cpu]\n"
	    "                 [-p cpu] [-T timeout] [-t tool] [-w warmup]\n"
	    "                 [-S pid | -- command [arg ...]]\n");
	exit(2);
}

static void
die(const char *msg)
{
	fprintf(stderr, "mcp-bench: %s: %s\n", msg, strerror(errno));
	exit(1);
}

static void
diex(const char *msg)
{
	fprintf(stderr, "mcp-bench: %s\n", msg);
	exit(1);
}

static void *
xmalloc(size_t n)
{
	void	*p;

	p = malloc(n);
	if (p == NULL)
		die("malloc");
	return p;
}

/* Exit with a message: S is no value for the option WHAT. */
static void
bad_value(const char *what, const char *s)
{
	fprintf(stderr, "mcp-bench: %s: bad value \"%s\"\n", what, s);
	exit(2);
}

/*
 * Parse the whole of S as a decimal integer in [MIN, MAX]; exit with a
 * message naming the option WHAT otherwise.
 */
static long
parse_long(const char *s, long min, long max, const char *what)
{
	char	*end;
	long	 v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		bad_value(what, s);
	return v;
}

static double
parse_double(const char *s, double min, const char *what)
{
	char	*end;
	double	 v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v >= min))
		bad_value(what, s);
	return v;
}

static uint64_t
now_ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t
self_cpu_ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * CPU time used so far by process PID, in nanoseconds, from the most
 * precise source that works: the process CPU clock (all threads, dead
 * ones included), else the sum of /proc/PID/task/TID/schedstat, else
 * utime+stime from /proc/PID/stat in clock ticks.  *SRC names the source.
 */
static uint64_t
child_cpu_ns(pid_t pid, const char **src)
{
	struct timespec	 ts;
	clockid_t	 cid;
	char		 path[320], buf[1024];
	DIR		*d;
	struct dirent	*de;
	FILE		*f;
	uint64_t	 sum;
	unsigned long long v, ut, st;
	char		*p;
	int		 i, ok;

	if (clock_getcpuclockid(pid, &cid) == 0 &&
	    clock_gettime(cid, &ts) == 0) {
		*src = "clock";
		return (uint64_t)ts.tv_sec * 1000000000u +
		    (uint64_t)ts.tv_nsec;
	}

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (d != NULL) {
		sum = 0;
		ok = 0;
		for (;;) {
			de = readdir(d);
			if (de == NULL)
				break;
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path),
			    "/proc/%d/task/%s/schedstat", (int)pid, de->d_name);
			f = fopen(path, "r");
			if (f == NULL)
				continue;
			if (fscanf(f, "%llu", &v) == 1) {
				sum += v;
				ok = 1;
			}
			fclose(f);
		}
		closedir(d);
		if (ok) {
			*src = "schedstat";
			return sum;
		}
	}

	*src = "stat";
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	if (fgets(buf, sizeof(buf), f) == NULL) {
		fclose(f);
		return 0;
	}
	fclose(f);
	/* The command name may hold spaces: fields count from the last ')'. */
	p = strrchr(buf, ')');
	if (p == NULL)
		return 0;
	/* After ')' come fields 3 (state) onwards; utime is 14, stime 15. */
	for (i = 3; i <= 14 && p != NULL; i++)
		p = strchr(p + 1, ' ');
	if (p == NULL || sscanf(p, " %llu %llu", &ut, &st) != 2)
		return 0;
	return (uint64_t)(ut + st) * (1000000000u /
	    (uint64_t)sysconf(_SC_CLK_TCK));
}

/* The value in kB of the field NAME ("VmRSS:") of /proc/PID/status. */
static long
proc_status_kb(pid_t pid, const char *name)
{
	char	 path[64], line[256];
	FILE	*f;
	size_t	 n;
	long	 v;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	n = strlen(name);
	v = -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, name, n) == 0) {
			v = strtol(line + n, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

/*
 * The watchdog: when armed and no read has made progress for watch_secs,
 * kill the server's process group, then interrupt the main thread with
 * SIGUSR1 until it stops us, in case a process outside the group still
 * holds the pipe open.  The main thread then counts the missing
 * responses, so the benchmark always ends.
 */
static void *
watchdog(void *arg)
{
	struct timespec	 ts = { 0, 100 * 1000 * 1000 };
	unsigned long	 last, cur;
	uint64_t	 since;

	(void)arg;
	last = atomic_load(&progress);
	since = now_ns();
	while (!atomic_load(&watch_stop)) {
		nanosleep(&ts, NULL);
		cur = atomic_load(&progress);
		if (cur != last || !atomic_load(&watch_armed)) {
			last = cur;
			since = now_ns();
			continue;
		}
		if ((double)(now_ns() - since) / 1e9 >= watch_secs) {
			fprintf(stderr, "mcp-bench: no response for %.1f s, "
			    "%s\n", watch_secs, child_pid > 0 ?
			    "killing the server" : "giving up");
			atomic_store(&watch_fired, 1);
			if (child_pid > 0)
				kill(-child_pid, SIGKILL);
			break;
		}
	}
	while (!atomic_load(&watch_stop)) {
		pthread_kill(main_thread, SIGUSR1);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* SIGUSR1 only interrupts a blocking read or poll (no SA_RESTART). */
static void
on_usr1(int sig)
{
	(void)sig;
}

static int		 reaped;	/* the child has been waited for */

/* Leaving early (diex): take the server down with us. */
static void
kill_child(void)
{
	if (child_pid > 0 && !reaped)
		kill(-child_pid, SIGKILL);
}

/* Interrupted by the user: take the server down with us. */
static void
on_fatal(int sig)
{
	if (child_pid > 0)
		kill(-child_pid, SIGTERM);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void
set_signals(void)
{
	struct sigaction	 sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_fatal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void
pin(pid_t pid, int cpu)
{
	cpu_set_t	 set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(pid, sizeof(set), &set) == -1)
		die("sched_setaffinity");
}

/*
 * In the forked child, once its descriptors are set up: pin it to the
 * server's CPU if asked, restore the signals we catch and exec the
 * server.  Does not return.
 */
static void
exec_server(const struct opts *o)
{
	if (o->cpu_server >= 0)
		pin(0, o->cpu_server);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGUSR1, SIG_DFL);
	execvp(o->cmd[0], o->cmd);
	fprintf(stderr, "mcp-bench: exec %s: %s\n", o->cmd[0],
	    strerror(errno));
	_exit(127);
}

/*
 * Start the server in a process group of its own, so that a wrapper
 * script and everything it starts can be killed together: its stdin and
 * stdout become our pipes, its stderr is ours or ERRFILE.  Pinning
 * happens in the child before exec, so the server never runs a moment on
 * the wrong CPU.
 */
static void
spawn(struct bench *b)
{
	const struct opts *o = b->o;
	int		 in[2], out[2], fd;

	if (pipe(in) == -1 || pipe(out) == -1)
		die("pipe");
	b->pid = fork();
	if (b->pid == -1)
		die("fork");
	if (b->pid == 0) {
		setpgid(0, 0);
		if (dup2(in[0], 0) == -1 || dup2(out[1], 1) == -1)
			_exit(127);
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		if (o->errfile != NULL) {
			fd = open(o->errfile, O_WRONLY | O_CREAT | O_APPEND,
			    0644);
			if (fd == -1 || dup2(fd, 2) == -1)
				_exit(127);
			close(fd);
		}
		exec_server(o);
	}
	setpgid(b->pid, b->pid);	/* whichever of us runs first */
	close(in[0]);
	close(out[1]);
	b->wfd = in[1];
	b->rfd = out[0];
	/* Writes never block, so a full pipe cannot deadlock us. */
	if (fcntl(b->wfd, F_SETFL, fcntl(b->wfd, F_GETFL) | O_NONBLOCK) == -1)
		die("fcntl");
	fcntl(b->wfd, F_SETFD, FD_CLOEXEC);
	fcntl(b->rfd, F_SETFD, FD_CLOEXEC);
	/* Bigger pipes mean fewer wake-ups; failure is harmless. */
	fcntl(b->wfd, F_SETPIPE_SZ, 1024 * 1024);
	fcntl(b->rfd, F_SETPIPE_SZ, 1024 * 1024);
	child_pid = b->pid;
}

/* Write all of BUF, waiting as needed; for the handshake only. */
static void
write_all(struct bench *b, const char *buf, size_t len)
{
	struct pollfd	 pfd;
	ssize_t		 n;

	while (len > 0) {
		n = write(b->wfd, buf, len);
		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN) {
			pfd.fd = b->wfd;
			pfd.events = POLLOUT;
			poll(&pfd, 1, -1);
			continue;
		}
		diex("the server closed its stdin");
	}
}

/*
 * Write BUF from *OFF up to LEN to FD without blocking, advancing *OFF.
 * Returns 1 when all of it is written, 0 when FD would block, -1 when it
 * failed (errno set, unless write returned 0).
 */
static int
write_from(int fd, const char *buf, size_t *off, size_t len)
{
	ssize_t	 n;

	while (*off < len) {
		n = write(fd, buf + *off, len - *off);
		if (n > 0) {
			*off += (size_t)n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return 0;
		return -1;
	}
	return 1;
}

/*
 * Write what is left of the current batch without blocking.  Returns 0,
 * or -1 when the server has closed its stdin.
 */
static int
flush_out(struct bench *b)
{
	int	 r;

	r = write_from(b->wfd, b->obuf, &b->ooff, b->olen);
	if (r <= 0)
		return r;
	b->olen = b->ooff = 0;
	return 0;
}

/*
 * Fill the window: build up to WANT requests into one buffer, stamp them
 * with one clock read and send them with one write.  Returns how many
 * were queued.
 */
static long
refill(struct bench *b, long want)
{
	char		 digits[24];
	char		*p;
	uint64_t	 id, first, t;
	struct slot	*s;
	long		 k;
	int		 nd;

	p = b->obuf;
	first = b->next_id;
	for (k = 0; k < want; k++) {
		id = b->next_id;
		s = &b->ring[id & b->mask];
		if (s->id != 0)
			break;	/* an old request still holds the slot */
		s->id = id;
		s->nprog = 0;
		nd = sizeof(digits);
		do {
			digits[--nd] = (char)('0' + id % 10);
			id /= 10;
		} while (id != 0);
		memcpy(p, b->pre, b->prelen);
		p += b->prelen;
		memcpy(p, digits + nd, sizeof(digits) - (size_t)nd);
		p += sizeof(digits) - (size_t)nd;
		if (b->midlen > 0) {
			memcpy(p, b->mid, b->midlen);
			p += b->midlen;
			memcpy(p, digits + nd, sizeof(digits) - (size_t)nd);
			p += sizeof(digits) - (size_t)nd;
		}
		memcpy(p, b->suf, b->suflen);
		p += b->suflen;
		b->next_id++;
	}
	if (k == 0)
		return 0;
	t = now_ns();
	for (id = first; id < b->next_id; id++)
		b->ring[id & b->mask].t = t;
	b->outstanding += k;
	b->olen = (size_t)(p - b->obuf);
	b->ooff = 0;
	if (flush_out(b) == -1)
		b->eof = 1;
	return k;
}

static void
show_bad(struct bench *b, const char *why, const char *line, size_t len)
{
	if (b->shown >= MAX_SHOWN)
		return;
	b->shown++;
	fprintf(stderr, "mcp-bench: %s: %.*s%s\n", why,
	    (int)(len > 400 ? 400 : len), line, len > 400 ? "..." : "");
}

/* Find "KEY" followed by optional blanks and a colon; return what follows
 * the colon and blanks, or NULL. */
static const char *
find_key(const char *line, size_t len, const char *key, size_t klen)
{
	const char	*p, *end;

	end = line + len;
	p = line;
	for (;;) {
		p = memmem(p, (size_t)(end - p), key, klen);
		if (p == NULL)
			return NULL;
		p += klen;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p < end && *p == ':') {
			p++;
			while (p < end && (*p == ' ' || *p == '\t'))
				p++;
			return p;
		}
	}
}

/*
 * A line without an id: with -g, a notifications/progress for a request
 * in flight (its progressToken is the request's id) is counted for that
 * request, and its progress must be above the last; anything else is
 * another line.
 */
static void
handle_note(struct bench *b, const char *line, size_t len)
{
	const char	*p, *end;
	struct slot	*s;
	uint64_t	 id;
	double		 v;
	char		*e;

	end = line + len;
	if (b->o->progress < 0 || memmem(line, len,
	    "\"notifications/progress\"", 24) == NULL) {
		b->other++;	/* a notification or a log line */
		return;
	}
	p = find_key(line, len, "\"progressToken\"", 15);
	id = 0;
	while (p != NULL && p < end && isdigit((unsigned char)*p))
		id = id * 10 + (uint64_t)(*p++ - '0');
	s = &b->ring[id & b->mask];
	if (id == 0 || s->id != id) {
		b->unexpected++;
		show_bad(b, "progress for no request in flight", line, len);
		return;
	}
	/* A ',' or '}' follows the number: strtod stops within the line. */
	p = find_key(line, len, "\"progress\"", 10);
	v = p != NULL ? strtod(p, &e) : 0;
	if (p == NULL || e == p || e > end ||
	    (s->nprog > 0 && !(v > s->lastprog))) {
		b->errors++;
		show_bad(b, "progress missing or not increasing", line, len);
	}
	s->nprog++;
	s->lastprog = v;
	if (b->record)
		b->nprogress++;
}

/*
 * Handle one response line received at time T: match its id to a slot,
 * check that it carries a result with the expected text, and record the
 * latency in the measured phase.
 */
static void
handle_line(struct bench *b, const char *line, size_t len, uint64_t t)
{
	const char	*p, *end;
	struct slot	*s;
	uint64_t	 id;
	char		 why[96];

	if (len > 0 && line[len - 1] == '\r')
		len--;
	if (len == 0)
		return;
	end = line + len;
	p = find_key(line, len, "\"id\"", 4);
	if (p == NULL) {
		handle_note(b, line, len);
		return;
	}
	if (p >= end || !isdigit((unsigned char)*p)) {
		b->errors++;
		show_bad(b, "response without an integer id", line, len);
		return;
	}
	id = 0;
	while (p < end && isdigit((unsigned char)*p))
		id = id * 10 + (uint64_t)(*p++ - '0');
	s = &b->ring[id & b->mask];
	if (id == 0 || s->id != id) {
		b->unexpected++;
		show_bad(b, "unknown or duplicate id", line, len);
		return;
	}
	s->id = 0;
	b->outstanding--;
	if (b->o->progress >= 0 && s->nprog != b->o->progress) {
		b->errors++;
		snprintf(why, sizeof(why), "%ld progress notifications before "
		    "the response, not %ld", s->nprog, b->o->progress);
		show_bad(b, why, line, len);
	}
	if (b->record) {
		if (b->nlat == b->latcap) {
			b->latcap = b->latcap ? b->latcap * 2 : 65536;
			b->lat = realloc(b->lat, b->latcap * sizeof(*b->lat));
			if (b->lat == NULL)
				die("realloc");
		}
		b->lat[b->nlat++] = t - s->t;
	}
	if (memmem(line, len, "\"result\"", 8) == NULL) {
		b->errors++;
		show_bad(b, "no result", line, len);
		return;
	}
	p = find_key(line, len, "\"isError\"", 9);
	if (p != NULL && end - p >= 4 && memcmp(p, "true", 4) == 0) {
		b->errors++;
		show_bad(b, "isError", line, len);
		return;
	}
	if (b->explen == 0)
		return;
	/* Look where an echo puts it first: memmem is slow for long text. */
	p = find_key(line, len, "\"text\"", 6);
	if (p != NULL && p < end && *p == '"' &&
	    (size_t)(end - p - 1) >= b->explen &&
	    memcmp(p + 1, b->o->expect, b->explen) == 0)
		return;
	if (memmem(line, len, b->o->expect, b->explen) == NULL) {
		b->errors++;
		show_bad(b, "wrong text", line, len);
	}
}

/*
 * Read once (blocking) and handle every complete line.  Returns the time
 * of the read, or 0 at EOF.
 */
static uint64_t
read_some(struct bench *b)
{
	char		*start, *nl, *end;
	ssize_t		 n;
	uint64_t	 t;

	if (b->ilen == b->icap) {
		b->icap *= 2;
		b->ibuf = realloc(b->ibuf, b->icap);
		if (b->ibuf == NULL)
			die("realloc");
	}
	for (;;) {
		n = read(b->rfd, b->ibuf + b->ilen, b->icap - b->ilen);
		if (n >= 0 || errno != EINTR || atomic_load(&watch_fired))
			break;
	}
	if (n <= 0) {
		b->eof = 1;
		return 0;
	}
	t = now_ns();
	atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
	b->ilen += (size_t)n;
	start = b->ibuf;
	end = b->ibuf + b->ilen;
	for (;;) {
		nl = memchr(start, '\n', (size_t)(end - start));
		if (nl == NULL)
			break;
		handle_line(b, start, (size_t)(nl - start), t);
		start = nl + 1;
	}
	b->ilen = (size_t)(end - start);
	if (b->ilen > 0 && start != b->ibuf)
		memmove(b->ibuf, start, b->ilen);
	return t;
}

/*
 * Run one phase: COUNT requests, or as many as fit in SECS seconds when
 * SECS > 0, with the window kept full, then drain.  Returns 0, or -1 if
 * the server went away (the unanswered requests are counted missing).
 */
static int
run_phase(struct bench *b, long count, double secs)
{
	struct pollfd	 pfd[2];
	uint64_t	 deadline, t;
	long		 left, want;
	int		 stop;

	left = count;
	stop = 0;
	deadline = secs > 0 ? now_ns() + (uint64_t)(secs * 1e9) : 0;
	for (;;) {
		if (b->olen == 0 && !stop && !b->eof) {
			want = b->o->conc - b->outstanding;
			if (deadline == 0 && want > left)
				want = left;
			if (want > 0) {
				want = refill(b, want);
				if (deadline == 0)
					left -= want;
			}
			if (deadline == 0 && left == 0)
				stop = 1;
		}
		if (b->eof)
			break;
		if (b->outstanding == 0 && b->olen == 0 && stop)
			return 0;
		if (b->olen > 0) {
			pfd[0].fd = b->rfd;
			pfd[0].events = POLLIN;
			pfd[1].fd = b->wfd;
			pfd[1].events = POLLOUT;
			if (poll(pfd, 2, -1) == -1) {
				if (errno != EINTR)
					die("poll");
				if (atomic_load(&watch_fired))
					break;
				continue;
			}
			if (pfd[1].revents & (POLLOUT | POLLERR | POLLHUP) &&
			    flush_out(b) == -1)
				b->eof = 1;
			if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
		}
		t = read_some(b);
		if (t == 0)
			break;
		if (deadline != 0 && t >= deadline)
			stop = 1;
	}
	b->missing += b->outstanding;
	return -1;
}

/* Send initialize, wait for its answer, send notifications/initialized. */
static void
handshake(struct bench *b)
{
	static const char init[] =
	    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"" PROTO_VERSION "\","
	    "\"capabilities\":{},\"clientInfo\":{\"name\":\"mcp-bench\","
	    "\"version\":\"" BENCH_VERSION "\"}}}\n";
	static const char inited[] =
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
	char		*start, *nl, *end;
	const char	*p, *q;
	size_t		 len;
	ssize_t		 n;
	int		 done;

	write_all(b, init, sizeof(init) - 1);
	done = 0;
	while (!done) {
		if (b->ilen == b->icap)
			diex("initialize: response too long");
		n = read(b->rfd, b->ibuf + b->ilen, b->icap - b->ilen);
		if (n == -1 && errno == EINTR && !atomic_load(&watch_fired))
			continue;
		if (n <= 0)
			diex(atomic_load(&watch_fired) ?
			    "no answer to initialize" :
			    "the server exited before answering initialize");
		atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
		b->ilen += (size_t)n;
		start = b->ibuf;
		end = b->ibuf + b->ilen;
		while (!done) {
			nl = memchr(start, '\n', (size_t)(end - start));
			if (nl == NULL)
				break;
			len = (size_t)(nl - start);
			p = find_key(start, len, "\"id\"", 4);
			if (p != NULL && *p == '0') {
				if (memmem(start, len, "\"result\"", 8) ==
				    NULL) {
					fprintf(stderr, "mcp-bench: initialize "
					    "failed: %.*s\n", (int)len, start);
					exit(1);
				}
				p = find_key(start, len,
				    "\"protocolVersion\"", 17);
				if (p != NULL && *p == '"') {
					q = memchr(p + 1, '"',
					    (size_t)(nl - p - 1));
					if (q != NULL && (size_t)(q - p - 1) <
					    sizeof(b->proto))
						memcpy(b->proto, p + 1,
						    (size_t)(q - p - 1));
				}
				done = 1;
			}
			start = nl + 1;
		}
		b->ilen = (size_t)(end - start);
		memmove(b->ibuf, start, b->ilen);
	}
	write_all(b, inited, sizeof(inited) - 1);
}

/*
 * Wait up to 5 s for the server to exit, reading and discarding its
 * stdout meanwhile if DRAIN.  Returns 1 once it is reaped, its wait
 * status in *STATUS, 0 if it is still running.
 */
static int
wait_server(struct bench *b, int *status, int drain)
{
	struct timespec	 ts = { 0, 10 * 1000 * 1000 };
	pid_t		 r;
	int		 k;

	for (k = 0; k < 500; k++) {
		if (drain)
			while (read(b->rfd, b->ibuf, b->icap) > 0)
				continue;
		r = waitpid(b->pid, status, WNOHANG);
		if (r == b->pid)
			return 1;
		if (r == -1 && errno != EINTR)
			die("waitpid");
		nanosleep(&ts, NULL);
	}
	return 0;
}

/*
 * Close the server's stdin and wait for it to exit: 5 s, then SIGTERM,
 * then SIGKILL.  Returns 0 if it exited on its own with status 0 or
 * because of our signals, 1 if it failed or crashed.
 */
static int
reap(struct bench *b)
{
	static const int sigs[] = { 0, SIGTERM, SIGKILL };
	int		 status, i, done;

	close(b->wfd);
	b->wfd = -1;
	/* Keep draining stdout so a server flushing output cannot block. */
	fcntl(b->rfd, F_SETFL, fcntl(b->rfd, F_GETFL) | O_NONBLOCK);
	done = 0;
	for (i = 0; i < 3 && !done; i++) {
		if (sigs[i] != 0) {
			fprintf(stderr, "mcp-bench: the server did not exit "
			    "after EOF; sending %s\n",
			    sigs[i] == SIGTERM ? "SIGTERM" : "SIGKILL");
			kill(-b->pid, sigs[i]);
		}
		done = wait_server(b, &status, 1);
	}
	if (!done)
		diex("the server cannot be killed");
	reaped = 1;
	i--;	/* the index of the last signal sent */
	if (WIFEXITED(status)) {
		if (WEXITSTATUS(status) == 0 || i > 0)
			return 0;
		fprintf(stderr, "mcp-bench: the server exited with status "
		    "%d\n", WEXITSTATUS(status));
		return 1;
	}
	if (WIFSIGNALED(status)) {
		if ((i > 0 && WTERMSIG(status) == sigs[i]) ||
		    atomic_load(&watch_fired))
			return 0;
		fprintf(stderr, "mcp-bench: the server died of signal %d\n",
		    WTERMSIG(status));
		return 1;
	}
	return 1;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t	 x;
	uint64_t	 y;

	x = *(const uint64_t *)a;
	y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile P (0..1) of the sorted latencies, in us. */
static double
pct(const struct bench *b, double p)
{
	size_t	 i;

	if (b->nlat == 0)
		return 0;
	i = (size_t)(p * (double)b->nlat + 0.999999);
	if (i > 0)
		i--;
	if (i >= b->nlat)
		i = b->nlat - 1;
	return (double)b->lat[i] / 1e3;
}

/* Print S as the contents of a JSON string. */
static void
json_str(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
}

/*
 * Build the request template around the id: PRE ends with "id":, SUF
 * holds the method, tool name and arguments and the newline.
 */
static void
build_template(struct bench *b)
{
	static const char pre[] = "{\"jsonrpc\":\"2.0\",\"id\":";
	static const char mid[] = ",\"method\":\"tools/call\","
	    "\"params\":{\"_meta\":{\"progressToken\":";
	const struct opts *o = b->o;
	size_t		 n;
	int		 r;

	b->pre = xmalloc(sizeof(pre));
	memcpy(b->pre, pre, sizeof(pre));
	b->prelen = sizeof(pre) - 1;
	for (n = 0; o->tool[n] != '\0'; n++)
		if (o->tool[n] == '"' || o->tool[n] == '\\' ||
		    (unsigned char)o->tool[n] < 0x20)
			diex("-t: the tool name needs no JSON escaping");
	n = strlen(o->tool) + strlen(o->args) + 128;
	b->suf = xmalloc(n);
	if (o->progress >= 0) {
		/* The id once more, as the progress token. */
		b->mid = xmalloc(sizeof(mid));
		memcpy(b->mid, mid, sizeof(mid));
		r = snprintf(b->suf, n, "},\"name\":\"%s\",\"arguments\":%s}}\n",
		    o->tool, o->args);
	} else {
		b->mid = xmalloc(1);
		b->mid[0] = '\0';
		r = snprintf(b->suf, n, ",\"method\":\"tools/call\","
		    "\"params\":{\"name\":\"%s\",\"arguments\":%s}}\n",
		    o->tool, o->args);
	}
	if (r < 0 || (size_t)r >= n)
		diex("template too long");
	b->suflen = (size_t)r;
	b->midlen = strlen(b->mid);
	if (memchr(o->args, '\n', strlen(o->args)) != NULL)
		diex("-a: the arguments must fit on one line");
	b->ocap = (size_t)o->conc * (b->prelen + 20 + b->midlen + 20 +
	    b->suflen);
	b->obuf = xmalloc(b->ocap);
}

/*
 * The text every result must contain, unless -e says otherwise: the raw
 * value of a "text" member of the arguments, since an echo server returns
 * it as it came.  Escapes a server may write differently (\u and \/) end
 * it early.  NULL when there is none.
 */
static char *
default_expect(const char *args)
{
	const char	*p, *q;
	char		*s;

	p = find_key(args, strlen(args), "\"text\"", 6);
	if (p == NULL || *p != '"')
		return NULL;
	for (q = ++p; *q != '\0' && *q != '"'; q++) {
		if (*q != '\\')
			continue;
		if (q[1] == 'u' || q[1] == '/' || q[1] == '\0')
			break;
		q++;
	}
	s = xmalloc((size_t)(q - p) + 1);
	memcpy(s, p, (size_t)(q - p));
	s[q - p] = '\0';
	return s;
}

/*
 * Print the results: the human-readable line on stdout, or with -j on
 * stderr with the JSON object on stdout.  ELNS, SNS and CNS are the
 * measured phase's wall time, server CPU and own CPU in nanoseconds.
 * Sorts the latencies.
 */
static void
report(struct bench *b, const char *label, uint64_t elns, uint64_t sns,
    uint64_t cns, long idle, long peak, const char *src, int bad_exit)
{
	const struct opts *o = b->o;
	uint64_t	 sum;
	double		 el, rps, scpu, ccpu, mean;
	size_t		 i;

	qsort(b->lat, b->nlat, sizeof(*b->lat), cmp_u64);
	sum = 0;
	for (i = 0; i < b->nlat; i++)
		sum += b->lat[i];
	el = (double)elns / 1e9;
	rps = el > 0 ? (double)b->nlat / el : 0;
	mean = b->nlat > 0 ? (double)sum / (double)b->nlat / 1e3 : 0;
	scpu = b->nlat > 0 ? (double)sns / (double)b->nlat / 1e3 : 0;
	if (strcmp(src, "gone") == 0)
		scpu = -1;
	ccpu = b->nlat > 0 ? (double)cns / (double)b->nlat / 1e3 : 0;

	fprintf(o->json ? stderr : stdout,
	    "%s c=%ld n=%zu: %.0f req/s, p50 %.1f us, p99 %.1f us, "
	    "server cpu %.2f us/req, client cpu %.2f us/req, "
	    "rss idle %ld KiB peak %ld KiB, errors %ld, missing %ld\n",
	    label, o->conc, b->nlat, rps, pct(b, 0.50), pct(b, 0.99),
	    scpu, ccpu, idle, peak, b->errors + b->unexpected +
	    b->http_errors, b->missing);
	if (o->mcp)
		fprintf(o->json ? stderr : stdout, "%s response bodies: %ld "
		    "application/json, %ld text/event-stream\n", label,
		    b->bodies_json, b->bodies_sse);
	if (o->progress >= 0)
		fprintf(o->json ? stderr : stdout, "%s progress: %ld "
		    "notifications, %.0f/s, %.2f per call\n", label,
		    b->nprogress, el > 0 ? (double)b->nprogress / el : 0,
		    b->nlat > 0 ? (double)b->nprogress / (double)b->nlat : 0);
	if (o->json) {
		printf("{\"label\":\"");
		json_str(stdout, label);
		printf("\",\"c\":%ld,\"n\":%zu,\"warmup\":%ld,"
		    "\"elapsed_s\":%.4f,\"rps\":%.1f,\"p50_us\":%.1f,"
		    "\"p90_us\":%.1f,\"p99_us\":%.1f,\"p999_us\":%.1f,"
		    "\"max_us\":%.1f,\"mean_us\":%.1f,"
		    "\"server_cpu_us\":%.3f,\"client_cpu_us\":%.3f,"
		    "\"cpu_source\":\"%s\",\"idle_rss_kib\":%ld,"
		    "\"peak_rss_kib\":%ld,\"errors\":%ld,\"unexpected\":%ld,"
		    "\"missing\":%ld,\"other_lines\":%ld,"
		    "\"server_exit_ok\":%s,\"pin_client\":%d,"
		    "\"pin_server\":%d,\"protocol\":\"",
		    o->conc, b->nlat, o->warm, el, rps, pct(b, 0.50),
		    pct(b, 0.90), pct(b, 0.99), pct(b, 0.999),
		    pct(b, 1.0), mean, scpu, ccpu, src, idle, peak,
		    b->errors, b->unexpected, b->missing, b->other,
		    bad_exit ? "false" : "true", o->cpu_client, o->cpu_server);
		json_str(stdout, b->proto);
		printf("\",\"transport\":\"%s\"", o->mcp ? (o->stateless ?
		    "streamable-stateless" : "streamable") : o->url != NULL ?
		    "sse" : "stdio");
		if (o->progress >= 0)
			printf(",\"progress\":%ld,\"progress_per_s\":%.1f,"
			    "\"progress_per_call\":%.3f", b->nprogress,
			    el > 0 ? (double)b->nprogress / el : 0,
			    b->nlat > 0 ? (double)b->nprogress /
			    (double)b->nlat : 0);
		if (o->mcp)
			printf(",\"bodies_json\":%ld,\"bodies_sse\":%ld",
			    b->bodies_json, b->bodies_sse);
		if (o->url != NULL) {
			printf(",\"conns\":%ld,\"http_errors\":%ld,"
			    "\"reconnects\":%ld,\"stop_s\":%.3f,"
			    "\"killed\":%s,\"url\":\"", o->conns,
			    b->http_errors, b->reconnects, b->stop_s,
			    b->killed ? "true" : "false");
			json_str(stdout, o->url);
			putchar('"');
		}
		printf(",\"cmd\":\"");
		for (i = 0; o->cmd != NULL && o->cmd[i] != NULL; i++) {
			if (i > 0)
				putchar(' ');
			json_str(stdout, o->cmd[i]);
		}
		printf("\"}\n");
	}
}

/*
 * HTTP+SSE mode.
 *
 * Each session is a GET stream (struct sse) whose bytes are decoded in
 * place (chunked or not) into SSE lines.  POSTs go over a pool of
 * connections (struct hconn) with at most one request in flight each: a
 * connection is free again when its response (202) is complete, while
 * the request stays in the window until its answer comes down the stream.
 * The two can arrive in either order.  Everything runs on one epoll set,
 * level-triggered, in the main thread; the watchdog only watches progress.
 */

#define TAG_SSE		(1ULL << 32)
#define TAG_CONN	(2ULL << 32)
#define SSE_BUF_LOAD	(1024 * 1024)	/* the stream of the load run */
#define SSE_BUF_IDLE	2048		/* each idle session's, to start */
#define CONN_BUF	4096
#define MAX_CONNECTING	256		/* idle mode: sessions being opened */
#define MAX_CONN_FAILS	3		/* connects in a row without a reply */

enum sse_phase {
	P_HEAD,		/* GET sent, waiting for the response head */
	P_ENDPOINT,	/* waiting for the endpoint event */
	P_INIT,		/* initialize queued or sent, waiting for its answer */
	P_INITED,	/* notifications/initialized queued or sent */
	P_READY,
	P_DEAD
};

enum { EV_MESSAGE, EV_ENDPOINT, EV_OTHER };
enum { CS_SIZE, CS_EXT, CS_DATA, CS_TAIL, CS_END };
enum { PK_CALL, PK_INIT, PK_INITED };

struct sse {
	int		 fd;
	int		 phase;
	int		 chunked;
	int		 cstate;	/* chunk decoder */
	uint64_t	 csize;
	int		 event;		/* type of the event being read */
	int		 queued;	/* on the POST queue */
	char		*in;		/* head, then decoded body bytes */
	size_t		 len;
	size_t		 cap;
	char		*path;		/* the message endpoint */
	size_t		 pathlen;
};

struct hconn {
	int		 fd;
	int		 busy;		/* a request sent, no full response */
	int		 kind;		/* PK_* */
	int		 wantout;	/* EPOLLOUT registered */
	int		 fails;		/* lost in a row without a response */
	int		 dead;		/* given up on */
	long		 sess;
	uint64_t	 id;		/* PK_CALL: the request's id */
	char		*out;
	size_t		 olen;
	size_t		 ooff;
	size_t		 ocap;
	char		*in;
	size_t		 ilen;
	size_t		 icap;

	/* Streamable HTTP: the response being read */
	int		 mphase;	/* MP_* */
	int		 framing;	/* MF_* */
	uint64_t	 remain;	/* MF_LEN: body bytes still to come */
	int		 cst;		/* MF_CHUNKED: decoder state, MC_* */
	uint64_t	 csz;		/* MF_CHUNKED: chunk bytes to come */
	int		 status;
	int		 sse;		/* a 2xx text/event-stream body */
	int		 hclose;	/* Connection: close */
	int		 got;		/* the JSON-RPC answer has come */
	char		*body;		/* decoded body bytes not yet handled */
	size_t		 blen;
	size_t		 bcap;
};

/* A response head. */
struct head {
	int		 status;
	long		 clen;		/* Content-Length, or -1 */
	int		 chunked;
	int		 close;		/* Connection: close */
	int		 sse;		/* Content-Type: text/event-stream */
};

static struct {
	char		 host[300];	/* the Host header, port included */
	char		 name[256];	/* the host, without brackets */
	int		 port;
	char		*path;		/* of the GET */
	struct sockaddr_storage sa;
	socklen_t	 salen;
} url;

static char *
xstrndup(const char *s, size_t n)
{
	char	*p;

	p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

/* Make room for N more bytes in *P of length LEN and capacity *CAP. */
static void
grow(char **p, size_t len, size_t *cap, size_t n)
{
	if (*cap - len >= n)
		return;
	while (*cap - len < n)
		*cap = *cap ? *cap * 2 : 4096;
	*p = realloc(*p, *cap);
	if (*p == NULL)
		die("realloc");
}

/*
 * Split http://HOST[:PORT][/PATH] (HOST a name, an IPv4 address or an
 * IPv6 one in brackets; PATH default DEFPATH).  Resolved later, since
 * port 0 is only known once the server has logged its real one.
 */
static void
parse_url(const char *u, const char *defpath)
{
	const char	*h, *e, *p;
	char		*end;
	long		 port;

	if (strncmp(u, "http://", 7) != 0)
		diex("-u, -m: only http:// URLs");
	h = u + 7;
	if (*h == '[') {
		e = strchr(h, ']');
		if (e == NULL)
			diex("-u: no ] after an IPv6 address");
		p = e + 1;
		h++;
	} else {
		e = h + strcspn(h, ":/");
		p = e;
	}
	if (e == h || (size_t)(e - h) >= sizeof(url.name))
		diex("-u: bad host");
	memcpy(url.name, h, (size_t)(e - h));
	url.name[e - h] = '\0';
	port = 80;
	if (*p == ':') {
		port = strtol(p + 1, &end, 10);
		if (end == p + 1 || port < 0 || port > 65535 ||
		    (*end != '\0' && *end != '/'))
			diex("-u: bad port");
		p = end;
	}
	url.port = (int)port;
	url.path = xstrndup(*p == '/' ? p : defpath, strlen(*p == '/' ?
	    p : defpath));
}

/* Resolve the host and set the Host header, once the port is known. */
static void
resolve_url(void)
{
	struct addrinfo	 hints, *res;
	char		 port[16];
	int		 r;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(port, sizeof(port), "%d", url.port);
	r = getaddrinfo(url.name, port, &hints, &res);
	if (r != 0) {
		fprintf(stderr, "mcp-bench: %s: %s\n", url.name,
		    gai_strerror(r));
		exit(1);
	}
	memcpy(&url.sa, res->ai_addr, res->ai_addrlen);
	url.salen = res->ai_addrlen;
	freeaddrinfo(res);
	snprintf(url.host, sizeof(url.host), "%s%s%s:%d",
	    strchr(url.name, ':') != NULL ? "[" : "", url.name,
	    strchr(url.name, ':') != NULL ? "]" : "", url.port);
}

/* A non-blocking socket connecting to the server, or -1. */
static int
tcp_open(void)
{
	int	 fd, one;

	fd = socket(url.sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0);
	if (fd == -1)
		die("socket");
	one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&url.sa, url.salen) == -1 &&
	    errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	return fd;
}

static void
ep_set(struct bench *b, int op, int fd, uint32_t events, uint64_t tag)
{
	struct epoll_event	 ev;

	ev.events = events;
	ev.data.u64 = tag;
	if (epoll_ctl(b->ep, op, fd, &ev) == -1)
		die("epoll_ctl");
}

/*
 * Parse a response head at P..P+N.  Returns its length (the blank line
 * included), 0 if it is not complete, -1 if it is not HTTP.
 */
static long
parse_head(const char *p, size_t n, struct head *h)
{
	const char	*e, *l, *nl, *v;
	size_t		 k;

	e = memmem(p, n, "\r\n\r\n", 4);
	if (e == NULL)
		return n > 65536 ? -1 : 0;
	memset(h, 0, sizeof(*h));
	h->clen = -1;
	if (e - p < 12 || memcmp(p, "HTTP/1.", 7) != 0 || p[8] != ' ' ||
	    !isdigit((unsigned char)p[9]))
		return -1;
	h->status = (int)strtol(p + 9, NULL, 10);
	for (l = memchr(p, '\n', (size_t)(e + 2 - p)) + 1; l < e + 2;
	    l = nl + 1) {
		nl = memchr(l, '\n', (size_t)(e + 2 - l));
		if (nl == NULL)
			break;
		v = memchr(l, ':', (size_t)(nl - l));
		if (v == NULL)
			continue;
		k = (size_t)(v - l);
		for (v++; v < nl && (*v == ' ' || *v == '\t'); v++)
			continue;
		if (k == 14 && strncasecmp(l, "content-length", k) == 0)
			h->clen = strtol(v, NULL, 10);
		else if (k == 17 &&
		    strncasecmp(l, "transfer-encoding", k) == 0)
			h->chunked = memmem(v, (size_t)(nl - v), "chunked", 7)
			    != NULL;
		else if (k == 10 && strncasecmp(l, "connection", k) == 0)
			h->close = strncasecmp(v, "close", 5) == 0;
		else if (k == 12 && strncasecmp(l, "content-type", k) == 0)
			h->sse = strncasecmp(v, "text/event-stream", 17) == 0;
	}
	return (long)(e + 4 - p);
}

/*
 * The length of the complete chunked body at P..P+N, trailers included;
 * 0 if it is not complete, -1 if it is not chunked.
 */
static long
chunked_len(const char *p, size_t n)
{
	const char	*q, *end, *nl;
	unsigned long	 sz;
	char		*x;

	q = p;
	end = p + n;
	for (;;) {
		nl = memchr(q, '\n', (size_t)(end - q));
		if (nl == NULL)
			return 0;
		sz = strtoul(q, &x, 16);
		if (x == q)
			return -1;
		q = nl + 1;
		if (sz == 0)
			break;
		if ((size_t)(end - q) < sz + 2)
			return 0;
		q += sz + 2;
	}
	for (;;) {	/* trailers, up to the empty line */
		nl = memchr(q, '\n', (size_t)(end - q));
		if (nl == NULL)
			return 0;
		if (nl == q || (nl == q + 1 && *q == '\r'))
			return (long)(nl + 1 - p);
		q = nl + 1;
	}
}

/*
 * Decode the chunked bytes at P..P+N of stream S in place: their data
 * goes to OUT (OUT <= P).  Returns the new end of the decoded data.
 */
static char *
dechunk(struct sse *s, char *out, const char *p, size_t n)
{
	const char	*end;
	size_t		 k;
	int		 c;

	end = p + n;
	while (p < end && s->cstate != CS_END) {
		switch (s->cstate) {
		case CS_SIZE:
			c = (unsigned char)*p++;
			if (isxdigit(c))
				s->csize = s->csize * 16 + (uint64_t)(isdigit(c) ?
				    c - '0' : (c | 0x20) - 'a' + 10);
			else if (c == '\n')
				s->cstate = s->csize ? CS_DATA : CS_END;
			else if (c != '\r')
				s->cstate = CS_EXT;
			break;
		case CS_EXT:
			if (*p++ == '\n')
				s->cstate = s->csize ? CS_DATA : CS_END;
			break;
		case CS_DATA:
			k = (size_t)(end - p);
			if (k > s->csize)
				k = (size_t)s->csize;
			memmove(out, p, k);
			out += k;
			p += k;
			s->csize -= k;
			if (s->csize == 0)
				s->cstate = CS_TAIL;
			break;
		case CS_TAIL:
			if (*p++ == '\n') {
				s->cstate = CS_SIZE;
				s->csize = 0;
			}
			break;
		}
	}
	return out;
}

static void
queue_post(struct bench *b, long si)
{
	if (b->ss[si].queued)
		return;
	b->ss[si].queued = 1;
	b->postq[(b->qhead + b->qlen) % b->nss] = si;
	b->qlen++;
}

/* Session SI failed to set up, or its stream ended. */
static void
sse_end(struct bench *b, long si, const char *why)
{
	struct sse	*s = &b->ss[si];

	if (s->phase == P_DEAD)
		return;
	if (s->phase == P_READY) {
		b->closed++;
		if (b->o->idle == 0)
			b->eof = 1;
	} else {
		b->failed++;
		if (b->failed <= MAX_SHOWN)
			fprintf(stderr, "mcp-bench: session %ld: %s\n", si, why);
	}
	s->phase = P_DEAD;
	if (s->fd != -1) {
		epoll_ctl(b->ep, EPOLL_CTL_DEL, s->fd, NULL);
		close(s->fd);
		s->fd = -1;
	}
}

/* Start session SI: connect and send the GET. */
static void
sse_open(struct bench *b, long si)
{
	struct sse	*s = &b->ss[si];
	int		 r;

	s->fd = tcp_open();
	s->phase = P_HEAD;
	s->cap = b->o->idle > 0 ? SSE_BUF_IDLE : SSE_BUF_LOAD;
	s->in = xmalloc(s->cap);
	if (s->fd == -1) {
		sse_end(b, si, strerror(errno));
		return;
	}
	/* Written once connected (EPOLLOUT), so the connect cannot block. */
	ep_set(b, EPOLL_CTL_ADD, s->fd, EPOLLOUT, TAG_SSE | (uint64_t)si);
	r = snprintf(s->in, s->cap, "GET %s HTTP/1.1\r\nHost: %s\r\n"
	    "Accept: text/event-stream\r\nCache-Control: no-cache\r\n\r\n",
	    url.path, url.host);
	if (r < 0 || (size_t)r >= s->cap)
		diex("-u: URL too long");
	s->len = (size_t)r;
	b->nopen++;
}

/* The endpoint event's data: keep the path and query. */
static void
sse_endpoint(struct bench *b, long si, const char *d, size_t n)
{
	struct sse	*s = &b->ss[si];
	const char	*p, *slash;
	size_t		 dirlen;

	if (s->phase != P_ENDPOINT)
		return;
	p = memmem(d, n, "://", 3);
	if (p != NULL) {	/* absolute: drop the scheme and authority */
		p = memchr(p + 3, '/', (size_t)(d + n - p - 3));
		if (p == NULL)
			p = d + n;
		s->path = xstrndup(p, (size_t)(d + n - p));
	} else if (n > 0 && d[0] == '/')
		s->path = xstrndup(d, n);
	else {			/* relative to the GET's directory */
		slash = strrchr(url.path, '/');
		dirlen = slash != NULL ? (size_t)(slash - url.path) + 1 : 0;
		s->path = xmalloc(dirlen + n + 2);
		if (dirlen == 0)
			s->path[dirlen++] = '/';
		else
			memcpy(s->path, url.path, dirlen);
		memcpy(s->path + dirlen, d, n);
		s->path[dirlen + n] = '\0';
	}
	s->pathlen = strlen(s->path);
	if (s->pathlen == 0 || memchr(s->path, ' ', s->pathlen) != NULL ||
	    memchr(s->path, '\r', s->pathlen) != NULL) {
		sse_end(b, si, "bad endpoint event");
		return;
	}
	if (b->o->idle > 0 && b->o->raw) {
		s->phase = P_READY;
		b->ready++;
		return;
	}
	s->phase = P_INIT;
	queue_post(b, si);
}

/* A "message" event's data on session SI, read at time T. */
static void
sse_message(struct bench *b, long si, const char *d, size_t n, uint64_t t)
{
	struct sse	*s = &b->ss[si];
	const char	*p, *q, *end;

	if (s->phase == P_READY && b->o->idle == 0) {
		handle_line(b, d, n, t);
		return;
	}
	end = d + n;
	p = s->phase == P_INIT ? find_key(d, n, "\"id\"", 4) : NULL;
	if (p == NULL || p >= end || *p != '0' ||
	    (p + 1 < end && isdigit((unsigned char)p[1]))) {
		b->other++;	/* a notification, or not for us */
		return;
	}
	if (memmem(d, n, "\"result\"", 8) == NULL) {
		show_bad(b, "initialize failed", d, n);
		sse_end(b, si, "initialize failed");
		return;
	}
	if (b->proto[0] == '\0') {
		p = find_key(d, n, "\"protocolVersion\"", 17);
		if (p != NULL && p < end && *p == '"') {
			q = memchr(p + 1, '"', (size_t)(end - p - 1));
			if (q != NULL && (size_t)(q - p - 1) < sizeof(b->proto))
				memcpy(b->proto, p + 1, (size_t)(q - p - 1));
		}
	}
	s->phase = P_INITED;
	queue_post(b, si);
}

/* One SSE line (without its newline) of session SI. */
static void
sse_line(struct bench *b, long si, const char *l, size_t n, uint64_t t)
{
	struct sse	*s = &b->ss[si];
	const char	*v;
	size_t		 k;

	if (n > 0 && l[n - 1] == '\r')
		n--;
	if (n == 0) {
		s->event = EV_MESSAGE;	/* the event is dispatched */
		return;
	}
	if (l[0] == ':') {
		b->keepalives++;
		return;
	}
	v = memchr(l, ':', n);
	k = v != NULL ? (size_t)(v - l) : n;
	if (v == NULL)
		v = l + n;
	else if (++v < l + n && *v == ' ')
		v++;
	if (k == 4 && memcmp(l, "data", 4) == 0) {
		if (s->event == EV_MESSAGE)
			sse_message(b, si, v, (size_t)(l + n - v), t);
		else if (s->event == EV_ENDPOINT)
			sse_endpoint(b, si, v, (size_t)(l + n - v));
	} else if (k == 5 && memcmp(l, "event", 5) == 0) {
		k = (size_t)(l + n - v);
		if (k == 7 && memcmp(v, "message", 7) == 0)
			s->event = EV_MESSAGE;
		else if (k == 8 && memcmp(v, "endpoint", 8) == 0)
			s->event = EV_ENDPOINT;
		else
			s->event = EV_OTHER;
	}
}

/*
 * Session SI's socket is ready: send the GET once connected, read and
 * handle what came.  Returns the time of the read, or 0.
 */
static uint64_t
sse_io(struct bench *b, long si, uint32_t events)
{
	struct sse	*s = &b->ss[si];
	struct head	 h;
	char		*p, *nl, *end, *start;
	ssize_t		 n;
	long		 hl;
	uint64_t	 t;
	int		 err;
	socklen_t	 elen;
	char		 why[64];

	if (s->fd == -1)
		return 0;
	if (s->phase == P_HEAD && s->len > 0 && (events & EPOLLOUT)) {
		elen = sizeof(err);
		if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &elen) == -1
		    || err != 0) {
			sse_end(b, si, strerror(err ? err : errno));
			return 0;
		}
		/* A request this small goes in one write on a new socket. */
		n = write(s->fd, s->in, s->len);
		if (n != (ssize_t)s->len) {
			sse_end(b, si, "cannot send the GET");
			return 0;
		}
		s->len = 0;
		ep_set(b, EPOLL_CTL_MOD, s->fd, EPOLLIN, TAG_SSE | (uint64_t)si);
		return 0;
	}
	if (s->cap - s->len < 1024) {
		s->cap *= 2;
		s->in = realloc(s->in, s->cap);
		if (s->in == NULL)
			die("realloc");
	}
	n = read(s->fd, s->in + s->len, s->cap - s->len);
	if (n == -1 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0) {
		sse_end(b, si, n == 0 ? "the server closed the stream" :
		    strerror(errno));
		return 0;
	}
	t = now_ns();
	atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
	b->stream_bytes += (uint64_t)n;
	p = s->in + s->len;
	if (s->phase == P_HEAD) {
		s->len += (size_t)n;
		hl = parse_head(s->in, s->len, &h);
		if (hl == 0)
			return t;
		if (hl < 0 || h.status != 200 || !h.sse) {
			if (hl < 0)
				snprintf(why, sizeof(why), "GET: not HTTP");
			else if (h.status != 200)
				snprintf(why, sizeof(why), "GET: HTTP status "
				    "%d", h.status);
			else
				snprintf(why, sizeof(why), "GET: not "
				    "text/event-stream");
			sse_end(b, si, why);
			return t;
		}
		s->chunked = h.chunked;
		s->phase = P_ENDPOINT;
		s->len -= (size_t)hl;
		memmove(s->in, s->in + hl, s->len);
		n = (ssize_t)s->len;
		s->len = 0;
		p = s->in;
	}
	if (s->chunked) {
		end = dechunk(s, s->in + s->len, p, (size_t)n);
		s->len = (size_t)(end - s->in);
	} else
		s->len += (size_t)n;
	start = s->in;
	end = s->in + s->len;
	while (s->phase != P_DEAD &&
	    (nl = memchr(start, '\n', (size_t)(end - start))) != NULL) {
		sse_line(b, si, start, (size_t)(nl - start), t);
		start = nl + 1;
	}
	if (s->phase == P_DEAD)
		return t;
	s->len = (size_t)(end - start);
	if (s->len > 0 && start != s->in)
		memmove(s->in, start, s->len);
	if (s->chunked && s->cstate == CS_END)
		sse_end(b, si, "the server ended the stream");
	return t;
}

/* (Re)connect connection C. */
static void
conn_open(struct bench *b, struct hconn *c)
{
	c->fd = tcp_open();
	if (c->fd == -1)
		die("connect");
	c->ilen = c->olen = c->ooff = 0;
	c->wantout = 0;
	c->mphase = 0;	/* MP_HEAD */
	c->blen = 0;
	ep_set(b, EPOLL_CTL_ADD, c->fd, EPOLLIN, TAG_CONN |
	    (uint64_t)(c - b->hc));
}

/* A free connection, or NULL. */
static struct hconn *
conn_get(struct bench *b)
{
	struct hconn	*c;

	if (b->nfreec == 0)
		return NULL;
	c = &b->hc[b->freec[--b->nfreec]];
	if (c->fd == -1)
		conn_open(b, c);
	return c;
}

static void conn_lost(struct bench *, struct hconn *, const char *);
static uint64_t mconn_io(struct bench *, struct hconn *, uint32_t);

/* Write what C has queued.  Returns -1 if the connection was lost. */
static int
conn_flush(struct bench *b, struct hconn *c)
{
	int	 r;

	r = write_from(c->fd, c->out, &c->ooff, c->olen);
	if (r == 0) {
		if (!c->wantout) {
			c->wantout = 1;
			ep_set(b, EPOLL_CTL_MOD, c->fd, EPOLLIN | EPOLLOUT,
			    TAG_CONN | (uint64_t)(c - b->hc));
		}
		return 0;
	}
	if (r == -1) {
		conn_lost(b, c, strerror(errno));
		return -1;
	}
	c->olen = c->ooff = 0;
	if (c->wantout) {
		c->wantout = 0;
		ep_set(b, EPOLL_CTL_MOD, c->fd, EPOLLIN, TAG_CONN |
		    (uint64_t)(c - b->hc));
	}
	return 0;
}

/* Append N bytes to C's output. */
static void
conn_put(struct hconn *c, const char *s, size_t n)
{
	grow(&c->out, c->olen, &c->ocap, n);
	memcpy(c->out + c->olen, s, n);
	c->olen += n;
}

static size_t
fmt_u64(char *buf, uint64_t v)
{
	char	 d[24];
	int	 n;

	n = sizeof(d);
	do {
		d[--n] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	memcpy(buf, d + n, sizeof(d) - (size_t)n);
	return sizeof(d) - (size_t)n;
}

/* Queue a POST of BODY to session S's endpoint on C. */
static void
conn_post(struct bench *b, struct hconn *c, const struct sse *s,
    const char *body, size_t n)
{
	char	 num[24];

	(void)b;
	conn_put(c, "POST ", 5);
	conn_put(c, s->path, s->pathlen);
	conn_put(c, " HTTP/1.1\r\nHost: ", 17);
	conn_put(c, url.host, strlen(url.host));
	conn_put(c, "\r\nContent-Type: application/json\r\n"
	    "Content-Length: ", 50);
	conn_put(c, num, fmt_u64(num, n));
	conn_put(c, "\r\n\r\n", 4);
	conn_put(c, body, n);
}

static void
conn_release(struct bench *b, struct hconn *c)
{
	c->busy = 0;
	if (!c->dead)
		b->freec[b->nfreec++] = c - b->hc;
}

/*
 * Connection C failed or was closed by the server.  A request in flight
 * on it is lost: a call counts as missing, a handshake step fails its
 * session.  The connection is reopened when next used, unless it failed
 * MAX_CONN_FAILS times in a row.
 */
static void
conn_lost(struct bench *b, struct hconn *c, const char *why)
{
	struct slot	*s;

	epoll_ctl(b->ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	b->reconnects++;
	if (!c->busy)
		return;		/* an idle keep-alive timed out */
	b->http_errors++;
	if (b->http_errors <= MAX_SHOWN)
		fprintf(stderr, "mcp-bench: connection lost with a request "
		    "in flight: %s\n", why);
	if (c->kind == PK_CALL) {
		s = &b->ring[c->id & b->mask];
		if (s->id == c->id) {
			s->id = 0;
			b->outstanding--;
			b->missing++;
		}
	} else if (b->o->mcp)
		b->hs_failed = 1;
	else
		sse_end(b, c->sess, "handshake POST lost");
	if (++c->fails >= MAX_CONN_FAILS) {
		c->dead = 1;
		if (--b->livec == 0) {
			fprintf(stderr, "mcp-bench: cannot keep a connection "
			    "to the server\n");
			b->eof = 1;
		}
	}
	conn_release(b, c);
}

/* A complete response on C, status H->status, body BODY..+N. */
static void
conn_done(struct bench *b, struct hconn *c, const struct head *h,
    const char *body, size_t n)
{
	struct slot	*s;
	char		 why[64];

	if (!c->busy) {
		b->http_errors++;
		show_bad(b, "response to no request", body, n);
		return;
	}
	c->fails = 0;
	if (h->status >= 200 && h->status < 300) {
		if (c->kind == PK_INITED) {
			b->ss[c->sess].phase = P_READY;
			b->ready++;
		}
		conn_release(b, c);
		return;
	}
	b->http_errors++;
	snprintf(why, sizeof(why), "POST: HTTP status %d", h->status);
	show_bad(b, why, body, n);
	if (c->kind == PK_CALL) {
		s = &b->ring[c->id & b->mask];
		if (s->id == c->id) {
			s->id = 0;
			b->outstanding--;
		}
	} else
		sse_end(b, c->sess, why);
	conn_release(b, c);
}

/* Connection C is ready: flush, read and handle responses. */
static void
conn_io(struct bench *b, struct hconn *c, uint32_t events)
{
	struct head	 h;
	ssize_t		 n;
	long		 hl, bl;
	size_t		 used;
	int		 closing;

	if (c->fd == -1)
		return;
	if ((events & EPOLLOUT) && conn_flush(b, c) == -1)
		return;
	if (!(events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
		return;
	grow(&c->in, c->ilen, &c->icap, CONN_BUF);
	n = read(c->fd, c->in + c->ilen, c->icap - c->ilen);
	if (n == -1 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		conn_lost(b, c, n == 0 ? "closed by the server" :
		    strerror(errno));
		return;
	}
	atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
	c->ilen += (size_t)n;
	used = 0;
	closing = 0;
	while (!closing) {
		hl = parse_head(c->in + used, c->ilen - used, &h);
		if (hl == 0)
			break;
		if (hl < 0) {
			conn_lost(b, c, "a response that is not HTTP");
			return;
		}
		if (h.chunked) {
			bl = chunked_len(c->in + used + hl,
			    c->ilen - used - (size_t)hl);
			if (bl == 0)
				break;
			if (bl < 0) {
				conn_lost(b, c, "bad chunked body");
				return;
			}
		} else {
			bl = h.clen > 0 ? h.clen : 0;
			if ((long)(c->ilen - used) - hl < bl)
				break;
		}
		closing = h.close;
		conn_done(b, c, &h, c->in + used + hl, (size_t)bl);
		used += (size_t)(hl + bl);
	}
	c->ilen -= used;
	if (c->ilen > 0 && used > 0)
		memmove(c->in, c->in + used, c->ilen);
	if (closing)
		conn_lost(b, c, "Connection: close");
}

/* POST the next handshake step of queued sessions on free connections. */
static void
post_queued(struct bench *b)
{
	static const char init[] =
	    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"" PROTO_VERSION "\","
	    "\"capabilities\":{},\"clientInfo\":{\"name\":\"mcp-bench\","
	    "\"version\":\"" BENCH_VERSION "\"}}}";
	static const char inited[] =
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
	struct hconn	*c;
	struct sse	*s;
	long		 si;

	while (b->qlen > 0 && b->nfreec > 0) {
		si = b->postq[b->qhead];
		b->qhead = (b->qhead + 1) % b->nss;
		b->qlen--;
		s = &b->ss[si];
		s->queued = 0;
		if (s->phase != P_INIT && s->phase != P_INITED)
			continue;
		c = conn_get(b);
		c->busy = 1;
		c->sess = si;
		c->kind = s->phase == P_INIT ? PK_INIT : PK_INITED;
		if (c->kind == PK_INIT)
			conn_post(b, c, s, init, sizeof(init) - 1);
		else
			conn_post(b, c, s, inited, sizeof(inited) - 1);
		conn_flush(b, c);
	}
}

/* Wait for events (up to MS ms, -1 for ever) and handle them. */
static uint64_t
pump(struct bench *b, int ms)
{
	struct epoll_event	 evs[256];
	uint64_t		 t, last;
	int			 i, n;

	last = 0;
	n = epoll_wait(b->ep, evs, 256, ms);
	if (n == -1) {
		if (errno != EINTR)
			die("epoll_wait");
		return 0;
	}
	for (i = 0; i < n; i++) {
		if ((evs[i].data.u64 & ~0xffffffffULL) == TAG_SSE) {
			t = sse_io(b, (long)(evs[i].data.u64 & 0xffffffffULL),
			    evs[i].events);
			if (t > last)
				last = t;
		} else if (b->o->mcp) {
			t = mconn_io(b, &b->hc[evs[i].data.u64 &
			    0xffffffffULL], evs[i].events);
			if (t > last)
				last = t;
		} else
			conn_io(b, &b->hc[evs[i].data.u64 & 0xffffffffULL],
			    evs[i].events);
	}
	return last;
}

/*
 * Open and set up NSS sessions, at most MAX_CONNECTING in progress at a
 * time so that the server's listen queue never overflows.  Returns 0
 * when they are all ready, -1 if any failed or the watchdog fired.
 */
static int
setup_sessions(struct bench *b)
{
	while (b->ready + b->failed < b->nss) {
		if (atomic_load(&watch_fired))
			return -1;
		while (b->nopen < b->nss &&
		    b->nopen - b->ready - b->failed < MAX_CONNECTING)
			sse_open(b, b->nopen);
		post_queued(b);
		if (b->livec == 0)
			return -1;
		pump(b, 100);
	}
	return b->failed > 0 ? -1 : 0;
}

/*
 * The POSTs of a tools/call start with the same text up to the
 * Content-Length value: build it once.
 */
static void
build_callhdr(struct bench *b)
{
	const struct sse *s = &b->ss[0];
	size_t		 n;

	n = s->pathlen + strlen(url.host) + 128;
	b->callhdr = xmalloc(n);
	b->callhdrlen = (size_t)snprintf(b->callhdr, n, "POST %s HTTP/1.1\r\n"
	    "Host: %s\r\nContent-Type: application/json\r\n"
	    "Content-Length: ", s->path, url.host);
}

/* Send up to WANT calls on free connections.  Returns how many. */
static long
send_calls(struct bench *b, long want)
{
	struct hconn	*c;
	struct slot	*s;
	char		 digits[24], len[24];
	size_t		 nd, nl, blen, need;
	uint64_t	 id;
	long		 k;
	char		*p;

	for (k = 0; k < want && b->nfreec > 0; k++) {
		id = b->next_id;
		s = &b->ring[id & b->mask];
		if (s->id != 0)
			break;	/* an old request still holds the slot */
		c = conn_get(b);
		nd = fmt_u64(digits, id);
		blen = b->prelen + nd + (b->midlen > 0 ? b->midlen + nd : 0) +
		    b->suflen - 1;			/* no newline */
		nl = fmt_u64(len, blen);
		need = b->callhdrlen + nl + 4 + blen;
		grow(&c->out, c->olen, &c->ocap, need);
		p = c->out + c->olen;
		memcpy(p, b->callhdr, b->callhdrlen);
		p += b->callhdrlen;
		memcpy(p, len, nl);
		p += nl;
		memcpy(p, "\r\n\r\n", 4);
		p += 4;
		memcpy(p, b->pre, b->prelen);
		p += b->prelen;
		memcpy(p, digits, nd);
		p += nd;
		if (b->midlen > 0) {
			memcpy(p, b->mid, b->midlen);
			p += b->midlen;
			memcpy(p, digits, nd);
			p += nd;
		}
		memcpy(p, b->suf, b->suflen - 1);
		c->olen += need;
		c->busy = 1;
		c->kind = PK_CALL;
		c->id = id;
		s->id = id;
		s->nprog = 0;
		s->t = now_ns();
		b->next_id++;
		b->outstanding++;
		conn_flush(b, c);
	}
	return k;
}

/* run_phase() for HTTP+SSE. */
static int
run_phase_http(struct bench *b, long count, double secs)
{
	uint64_t	 deadline, t;
	long		 left, want;
	int		 stop;

	left = count;
	stop = 0;
	deadline = secs > 0 ? now_ns() + (uint64_t)(secs * 1e9) : 0;
	for (;;) {
		if (!stop && !b->eof) {
			want = b->o->conc - b->outstanding;
			if (deadline == 0 && want > left)
				want = left;
			if (want > 0) {
				want = send_calls(b, want);
				if (deadline == 0)
					left -= want;
			}
			if (deadline == 0 && left == 0)
				stop = 1;
		}
		if (b->eof || atomic_load(&watch_fired))
			break;
		/* Drained when the answers and the 202s are all in. */
		if (stop && b->outstanding == 0 && b->nfreec == b->livec)
			return 0;
		t = pump(b, -1);
		if (deadline != 0 && t >= deadline)
			stop = 1;
	}
	b->missing += b->outstanding;
	b->outstanding = 0;
	return -1;
}

/*
 * Streamable HTTP mode (-m).
 *
 * The POST connections of the HTTP+SSE mode carry everything: each
 * request's answer comes back in its own response, whose body is read as
 * it arrives (Content-Length, chunked, or up to the connection's close).
 * An application/json body is handled once complete; a text/event-stream
 * body line by line, so a call's latency ends at the event that holds its
 * response, not at the end of the stream.  A connection is free again when
 * its response is complete.
 */

enum { MP_HEAD, MP_BODY };
enum { MF_LEN, MF_CHUNKED, MF_CLOSE };
enum { MC_SIZE, MC_EXT, MC_DATA, MC_DATA_END, MC_TRAILER, MC_TRAILER_LINE,
	MC_END };

static void
body_put(struct hconn *c, const char *p, size_t n)
{
	grow(&c->body, c->blen, &c->bcap, n);
	memcpy(c->body + c->blen, p, n);
	c->blen += n;
}

/*
 * Decode the chunked bytes P..P+N of C's response into its body.  Returns
 * how many it used: it stops after the last chunk and its trailers
 * (c->cst is then MC_END).
 */
static size_t
mdechunk(struct hconn *c, const char *p, size_t n)
{
	size_t	 i, k;
	int	 ch;

	i = 0;
	while (i < n && c->cst != MC_END) {
		switch (c->cst) {
		case MC_SIZE:
			ch = (unsigned char)p[i++];
			if (isxdigit(ch))
				c->csz = c->csz * 16 + (uint64_t)(isdigit(ch) ?
				    ch - '0' : (ch | 0x20) - 'a' + 10);
			else if (ch == '\n')
				c->cst = c->csz ? MC_DATA : MC_TRAILER;
			else if (ch != '\r')
				c->cst = MC_EXT;
			break;
		case MC_EXT:
			if (p[i++] == '\n')
				c->cst = c->csz ? MC_DATA : MC_TRAILER;
			break;
		case MC_DATA:
			k = n - i;
			if (k > c->csz)
				k = (size_t)c->csz;
			body_put(c, p + i, k);
			i += k;
			c->csz -= k;
			if (c->csz == 0)
				c->cst = MC_DATA_END;
			break;
		case MC_DATA_END:
			if (p[i++] == '\n') {
				c->cst = MC_SIZE;
				c->csz = 0;
			}
			break;
		case MC_TRAILER:	/* at the start of a trailer line */
			ch = (unsigned char)p[i++];
			if (ch == '\n')
				c->cst = MC_END;
			else if (ch != '\r')
				c->cst = MC_TRAILER_LINE;
			break;
		case MC_TRAILER_LINE:
			if (p[i++] == '\n')
				c->cst = MC_TRAILER;
			break;
		}
	}
	return i;
}

/* One JSON-RPC message D..D+N that came on C at time T. */
static void
mmessage(struct bench *b, struct hconn *c, const char *d, size_t n,
    uint64_t t)
{
	const char	*p, *q, *end;

	end = d + n;
	if (c->kind == PK_CALL) {
		handle_line(b, d, n, t);
		if (b->ring[c->id & b->mask].id != c->id)
			c->got = 1;
		return;
	}
	p = c->kind == PK_INIT ? find_key(d, n, "\"id\"", 4) : NULL;
	if (p == NULL || p >= end || *p != '0' ||
	    (p + 1 < end && isdigit((unsigned char)p[1]))) {
		b->other++;	/* a notification, or not for us */
		return;
	}
	c->got = 1;
	if (memmem(d, n, "\"result\"", 8) == NULL) {
		show_bad(b, "initialize failed", d, n);
		b->hs_failed = 1;
		return;
	}
	p = find_key(d, n, "\"protocolVersion\"", 17);
	if (p != NULL && p < end && *p == '"') {
		q = memchr(p + 1, '"', (size_t)(end - p - 1));
		if (q != NULL && (size_t)(q - p - 1) < sizeof(b->proto)) {
			memcpy(b->proto, p + 1, (size_t)(q - p - 1));
			b->proto[q - p - 1] = '\0';
		}
	}
}

/*
 * Handle the complete lines of C's event-stream body (all of it when
 * FINAL): each data line is one message; ids, event names and retry
 * fields do not matter here, and the priming event's data is empty.
 */
static void
msse_lines(struct bench *b, struct hconn *c, uint64_t t, int final)
{
	char		*start, *end, *nl, *l, *v;
	size_t		 n;

	start = c->body;
	end = c->body + c->blen;
	while (start < end) {
		nl = memchr(start, '\n', (size_t)(end - start));
		if (nl == NULL && !final)
			break;
		l = start;
		n = (size_t)((nl != NULL ? nl : end) - start);
		start = nl != NULL ? nl + 1 : end;
		if (n > 0 && l[n - 1] == '\r')
			n--;
		if (n == 0)
			continue;
		if (l[0] == ':') {
			b->keepalives++;
			continue;
		}
		if (n < 5 || memcmp(l, "data:", 5) != 0)
			continue;
		v = l + 5;
		if (v < l + n && *v == ' ')
			v++;
		if (v < l + n)
			mmessage(b, c, v, (size_t)(l + n - v), t);
	}
	c->blen = (size_t)(end - start);
	if (c->blen > 0 && start != c->body)
		memmove(c->body, start, c->blen);
}

/* The response head H of length HL on C: how its body is framed. */
static void
mhead(struct bench *b, struct hconn *c, const struct head *h, const char *p,
    long hl)
{
	const char	*l, *nl, *e, *v;

	c->status = h->status;
	c->sse = h->sse && h->status >= 200 && h->status < 300;
	c->hclose = h->close;
	c->blen = 0;
	c->got = 0;
	if (h->chunked) {
		c->framing = MF_CHUNKED;
		c->cst = MC_SIZE;
		c->csz = 0;
	} else if (h->clen >= 0) {
		c->framing = MF_LEN;
		c->remain = (uint64_t)h->clen;
	} else if (h->status == 204 || h->status == 304) {
		c->framing = MF_LEN;
		c->remain = 0;
	} else
		c->framing = MF_CLOSE;
	if (c->kind != PK_INIT || h->status < 200 || h->status >= 300)
		return;
	/* Keep the session id, with the blanks around it trimmed. */
	e = p + hl;
	for (l = p; l < e; l = nl + 1) {
		nl = memchr(l, '\n', (size_t)(e - l));
		if (nl == NULL)
			break;
		if (nl - l < 15 || strncasecmp(l, "mcp-session-id:", 15) != 0)
			continue;
		for (v = l + 15; v < nl && (*v == ' ' || *v == '\t'); v++)
			continue;
		while (nl > v && (nl[-1] == '\r' || nl[-1] == ' ' ||
		    nl[-1] == '\t'))
			nl--;
		if ((size_t)(nl - v) < sizeof(b->sid)) {
			memcpy(b->sid, v, (size_t)(nl - v));
			b->sid[nl - v] = '\0';
		}
		break;
	}
}

/* C's response is complete (read at time T). */
static void
mdone(struct bench *b, struct hconn *c, uint64_t t)
{
	struct slot	*s;
	char		 why[96];
	int		 ok2xx, lost;

	ok2xx = c->status >= 200 && c->status < 300;
	lost = 0;
	if (!ok2xx) {
		b->http_errors++;
		snprintf(why, sizeof(why), "POST: HTTP status %d", c->status);
		show_bad(b, why, c->body, c->blen);
		lost = 1;
	} else if (c->sse) {
		msse_lines(b, c, t, 1);
		b->bodies_sse++;
	} else if (c->kind != PK_INITED) {
		b->bodies_json++;
		if (c->blen > 0)
			mmessage(b, c, c->body, c->blen, t);
	}
	if (ok2xx && c->kind != PK_INITED && !c->got) {
		b->errors++;
		show_bad(b, "the response ended without the answer",
		    c->body, c->blen);
		lost = 1;
	}
	if (lost) {
		if (c->kind == PK_CALL) {
			s = &b->ring[c->id & b->mask];
			if (s->id == c->id) {
				s->id = 0;
				b->outstanding--;
				b->missing++;
			}
		} else
			b->hs_failed = 1;
	}
	c->blen = 0;
	c->mphase = MP_HEAD;
	c->fails = 0;
	if (c->ilen > 0) {
		b->http_errors++;
		show_bad(b, "bytes after the response", c->in, c->ilen);
		c->ilen = 0;
		c->hclose = 1;
	}
	if (c->hclose || c->framing == MF_CLOSE) {
		/* Reopened when next used. */
		epoll_ctl(b->ep, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
		c->fd = -1;
		b->reconnects++;
	}
	c->busy = 0;
	conn_release(b, c);
}

/*
 * Connection C is ready (Streamable HTTP): flush, read, handle.  Returns
 * the time of the read, or 0.
 */
static uint64_t
mconn_io(struct bench *b, struct hconn *c, uint32_t events)
{
	struct head	 h;
	ssize_t		 n;
	uint64_t	 t, k;
	size_t		 used, avail;
	long		 hl;
	int		 done;

	if (c->fd == -1)
		return 0;
	if ((events & EPOLLOUT) && conn_flush(b, c) == -1)
		return 0;
	if (!(events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
		return 0;
	grow(&c->in, c->ilen, &c->icap, CONN_BUF);
	n = read(c->fd, c->in + c->ilen, c->icap - c->ilen);
	if (n == -1 && (errno == EINTR || errno == EAGAIN))
		return 0;
	t = now_ns();
	if (n == 0 && c->busy && c->mphase == MP_BODY &&
	    c->framing == MF_CLOSE) {
		mdone(b, c, t);		/* the body ends with the connection */
		return t;
	}
	if (n <= 0) {
		conn_lost(b, c, n == 0 ? "closed by the server" :
		    strerror(errno));
		c->mphase = MP_HEAD;
		return 0;
	}
	atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
	c->ilen += (size_t)n;
	if (!c->busy) {
		b->http_errors++;
		show_bad(b, "response to no request", c->in, c->ilen);
		conn_lost(b, c, "a response to no request");
		return 0;
	}
	used = 0;
	if (c->mphase == MP_HEAD) {
		hl = parse_head(c->in, c->ilen, &h);
		if (hl == 0)
			return t;
		if (hl < 0) {
			conn_lost(b, c, "a response that is not HTTP");
			c->mphase = MP_HEAD;
			return t;
		}
		mhead(b, c, &h, c->in, hl);
		used = (size_t)hl;
		c->mphase = MP_BODY;
	}
	avail = c->ilen - used;
	done = 0;
	switch (c->framing) {
	case MF_LEN:
		k = avail < c->remain ? avail : c->remain;
		body_put(c, c->in + used, (size_t)k);
		used += (size_t)k;
		c->remain -= k;
		done = c->remain == 0;
		break;
	case MF_CHUNKED:
		used += mdechunk(c, c->in + used, avail);
		done = c->cst == MC_END;
		break;
	default:
		body_put(c, c->in + used, avail);
		used += avail;
		break;
	}
	c->ilen -= used;
	if (c->ilen > 0 && used > 0)
		memmove(c->in, c->in + used, c->ilen);
	if (c->sse && !done)
		msse_lines(b, c, t, 0);
	if (done)
		mdone(b, c, t);
	return t;
}

/* Queue a handshake POST (PK_INIT or PK_INITED) of BODY on C. */
static void
mpost(struct bench *b, struct hconn *c, int kind, const char *body, size_t n)
{
	static const char types[] = "\r\nContent-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n";
	char	 num[24];

	conn_put(c, "POST ", 5);
	conn_put(c, url.path, strlen(url.path));
	conn_put(c, " HTTP/1.1\r\nHost: ", 17);
	conn_put(c, url.host, strlen(url.host));
	conn_put(c, types, sizeof(types) - 1);
	if (b->sid[0] != '\0') {
		conn_put(c, "Mcp-Session-Id: ", 16);
		conn_put(c, b->sid, strlen(b->sid));
		conn_put(c, "\r\n", 2);
	}
	if (b->proto[0] != '\0') {
		conn_put(c, "MCP-Protocol-Version: ", 22);
		conn_put(c, b->proto, strlen(b->proto));
		conn_put(c, "\r\n", 2);
	}
	conn_put(c, "Content-Length: ", 16);
	conn_put(c, num, fmt_u64(num, n));
	conn_put(c, "\r\n\r\n", 4);
	conn_put(c, body, n);
	c->busy = 1;
	c->kind = kind;
	c->mphase = MP_HEAD;
	conn_flush(b, c);
}

/* Wait until C's response is in; 0, or -1 if the step failed. */
static int
mwait(struct bench *b, struct hconn *c)
{
	while (c->busy && !b->hs_failed && b->livec > 0) {
		if (atomic_load(&watch_fired))
			return -1;
		pump(b, 100);
	}
	return b->hs_failed || b->livec == 0 ? -1 : 0;
}

/*
 * The stateful handshake: initialize (keeping the session id and the
 * protocol version), then notifications/initialized, which must get a
 * 2xx.  Returns 0, or -1 with a message.
 */
static int
mhandshake(struct bench *b)
{
	static const char init[] =
	    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
	    "\"params\":{\"protocolVersion\":\"" PROTO_VERSION "\","
	    "\"capabilities\":{},\"clientInfo\":{\"name\":\"mcp-bench\","
	    "\"version\":\"" BENCH_VERSION "\"}}}";
	static const char inited[] =
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
	struct hconn	*c;

	c = conn_get(b);
	mpost(b, c, PK_INIT, init, sizeof(init) - 1);
	if (mwait(b, c) != 0) {
		fprintf(stderr, "mcp-bench: initialize failed\n");
		return -1;
	}
	if (b->sid[0] == '\0') {
		fprintf(stderr, "mcp-bench: no Mcp-Session-Id on the answer "
		    "to initialize (-s for a stateless server)\n");
		return -1;
	}
	c = conn_get(b);
	mpost(b, c, PK_INITED, inited, sizeof(inited) - 1);
	if (mwait(b, c) != 0) {
		fprintf(stderr, "mcp-bench: notifications/initialized "
		    "failed\n");
		return -1;
	}
	return 0;
}

/*
 * The tools/call POSTs start with the same text up to the Content-Length
 * value: the headers, with the session's when there is one.
 */
static void
build_mcallhdr(struct bench *b)
{
	size_t		 n;
	int		 r;

	n = strlen(url.path) + strlen(url.host) + strlen(b->sid) +
	    strlen(b->proto) + 256;
	b->callhdr = xmalloc(n);
	r = snprintf(b->callhdr, n, "POST %s HTTP/1.1\r\nHost: %s\r\n"
	    "Content-Type: application/json\r\n"
	    "Accept: application/json, text/event-stream\r\n"
	    "%s%s%s%s%s%s"
	    "Content-Length: ", url.path, url.host,
	    b->sid[0] != '\0' ? "Mcp-Session-Id: " : "", b->sid,
	    b->sid[0] != '\0' ? "\r\n" : "",
	    b->proto[0] != '\0' ? "MCP-Protocol-Version: " : "", b->proto,
	    b->proto[0] != '\0' ? "\r\n" : "");
	if (r < 0 || (size_t)r >= n)
		diex("request header too long");
	b->callhdrlen = (size_t)r;
}

static void
set_nofile(long need)
{
	struct rlimit	 rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)need) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ||
		    rl.rlim_max > (rlim_t)need ? (rlim_t)need : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur !=
	    RLIM_INFINITY && rl.rlim_cur < (rlim_t)need) {
		fprintf(stderr, "mcp-bench: need %ld descriptors, the limit "
		    "is %lu\n", need, (unsigned long)rl.rlim_cur);
		exit(1);
	}
}

/* Pin every thread of PID (not our child) to CPU. */
static void
pin_all(pid_t pid, int cpu)
{
	char		 path[64];
	DIR		*d;
	struct dirent	*de;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (d == NULL)
		die(path);
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			pin((pid_t)strtol(de->d_name, NULL, 10), cpu);
	closedir(d);
}

static int	 relay_in = -1, relay_out = 2;
static pthread_t relay_thr;
static int	 relay_started;

/* Copy the server's log from the pipe to the -E file or our stderr. */
static void *
relay(void *arg)
{
	char	 buf[4096];
	ssize_t	 n;

	(void)arg;
	for (;;) {
		n = read(relay_in, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (write(relay_out, buf, (size_t)n) < 0)
			continue;
	}
	return NULL;
}

/*
 * Start the server for HTTP mode, in its own process group, stdin from
 * /dev/null, stdout and stderr to the -E file or ours.  When the URL's
 * port is 0, read its log through a pipe until "http://HOST:PORT" and
 * take that port, then keep copying the log in a thread; otherwise wait
 * until the port accepts connections.
 */
static void
spawn_http(struct bench *b)
{
	const struct opts *o = b->o;
	struct pollfd	 pfd;
	char		 line[4096];
	size_t		 len;
	ssize_t		 n;
	uint64_t	 until;
	const char	*p, *nl;
	char		*end;
	long		 port;
	int		 lp[2], fd, logfd;

	logfd = 2;
	if (o->errfile != NULL) {
		logfd = open(o->errfile, O_WRONLY | O_CREAT | O_APPEND |
		    O_CLOEXEC, 0644);
		if (logfd == -1)
			die(o->errfile);
	}
	lp[0] = lp[1] = -1;
	if (url.port == 0 && pipe2(lp, O_CLOEXEC) == -1)
		die("pipe");
	b->pid = fork();
	if (b->pid == -1)
		die("fork");
	if (b->pid == 0) {
		setpgid(0, 0);
		fd = open("/dev/null", O_RDONLY);
		if (fd == -1 || dup2(fd, 0) == -1)
			_exit(127);
		fd = lp[1] != -1 ? lp[1] : logfd;
		if (dup2(fd, 1) == -1 || dup2(fd, 2) == -1)
			_exit(127);
		exec_server(o);
	}
	setpgid(b->pid, b->pid);
	child_pid = b->pid;
	b->spid = b->pid;
	until = now_ns() + (uint64_t)(o->timeout * 1e9);
	if (url.port != 0) {
		resolve_url();
		for (;;) {
			fd = socket(url.sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC,
			    0);
			if (fd == -1)
				die("socket");
			if (connect(fd, (struct sockaddr *)&url.sa, url.salen)
			    == 0) {
				close(fd);
				break;
			}
			close(fd);
			if (now_ns() > until || waitpid(b->pid, NULL, WNOHANG)
			    == b->pid)
				diex("the server does not accept connections");
			usleep(20000);
		}
		if (logfd != 2)
			close(logfd);
		return;
	}
	close(lp[1]);
	len = 0;
	port = 0;
	while (port == 0) {
		pfd.fd = lp[0];
		pfd.events = POLLIN;
		if (now_ns() > until)
			diex("the server logged no \"http://HOST:PORT\"");
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		n = read(lp[0], line + len, sizeof(line) - 1 - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			diex("the server exited before listening");
		if (write(logfd, line + len, (size_t)n) < 0)
			(void)0;
		len += (size_t)n;
		line[len] = '\0';
		while (port == 0 && (nl = strchr(line, '\n')) != NULL) {
			p = strstr(line, "http://");
			if (p != NULL && p < nl) {
				p += 7;
				if (*p == '[')
					p = strchr(p, ']');
				else
					p = p + strcspn(p, ":/\n");
				if (p != NULL && p < nl && *p == ']')
					p++;
				if (p != NULL && p < nl && *p == ':') {
					port = strtol(p + 1, &end, 10);
					if (port <= 0 || port > 65535)
						port = 0;
				}
			}
			len -= (size_t)(nl + 1 - line);
			memmove(line, nl + 1, len + 1);
		}
		if (len == sizeof(line) - 1)
			len = 0;	/* a very long line: forget it */
	}
	url.port = (int)port;
	resolve_url();
	relay_in = lp[0];
	relay_out = logfd;
	if (pthread_create(&relay_thr, NULL, relay, NULL) != 0)
		diex("pthread_create failed");
	relay_started = 1;
}

/*
 * Stop the server we started: SIGTERM to its group, 5 s, SIGKILL.
 * Returns 0 if it exited 0 or died of our signal, 1 if it had exited
 * before (unless the watchdog killed it) or failed.
 */
static int
reap_http(struct bench *b)
{
	static const int sigs[] = { SIGTERM, SIGKILL };
	struct timespec	 dl;
	uint64_t	 t0;
	pid_t		 r;
	int		 status, i, done;

	b->stop_s = -1;
	if (b->pid <= 0)
		return 0;
	r = waitpid(b->pid, &status, WNOHANG);
	if (r == b->pid) {
		reaped = 1;
		if (atomic_load(&watch_fired))
			return 0;
		fprintf(stderr, "mcp-bench: the server exited before the "
		    "end\n");
		return 1;
	}
	done = 0;
	t0 = now_ns();
	for (i = 0; i < 2 && !done; i++) {
		kill(-b->pid, sigs[i]);
		done = wait_server(b, &status, 0);
		if (!done && i == 0) {
			fprintf(stderr, "mcp-bench: the server did not exit "
			    "on SIGTERM; sending SIGKILL\n");
			b->killed = 1;
		}
	}
	if (!done)
		diex("the server cannot be killed");
	reaped = 1;
	b->stop_s = (double)(now_ns() - t0) / 1e9;
	if (relay_started) {
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += 1;
		pthread_timedjoin_np(relay_thr, NULL, &dl);
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
		fprintf(stderr, "mcp-bench: the server exited with status "
		    "%d\n", WEXITSTATUS(status));
		return 1;
	}
	if (WIFSIGNALED(status) && WTERMSIG(status) != SIGTERM &&
	    WTERMSIG(status) != SIGKILL) {
		fprintf(stderr, "mcp-bench: the server died of signal %d\n",
		    WTERMSIG(status));
		return 1;
	}
	return 0;
}

/* CPU time of the server in ns, or 0 without one. */
static uint64_t
server_cpu(const struct bench *b, const char **src)
{
	if (b->spid <= 0) {
		*src = "none";
		return 0;
	}
	return child_cpu_ns(b->spid, src);
}

static long
server_kb(const struct bench *b, const char *field)
{
	return b->spid > 0 ? proc_status_kb(b->spid, field) : -1;
}

static void
close_all(struct bench *b)
{
	long	 i;

	for (i = 0; i < b->nss; i++)
		if (b->ss[i].fd != -1) {
			close(b->ss[i].fd);
			b->ss[i].fd = -1;
		}
	for (i = 0; i < b->nhc; i++)
		if (b->hc[i].fd != -1) {
			close(b->hc[i].fd);
			b->hc[i].fd = -1;
		}
}

static void
free_http(struct bench *b)
{
	long	 i;

	for (i = 0; i < b->nss; i++) {
		free(b->ss[i].in);
		free(b->ss[i].path);
	}
	for (i = 0; i < b->nhc; i++) {
		free(b->hc[i].in);
		free(b->hc[i].out);
		free(b->hc[i].body);
	}
	free(b->ss);
	free(b->hc);
	free(b->freec);
	free(b->postq);
	free(b->callhdr);
	free(url.path);
	if (b->ep != -1)
		close(b->ep);
}

/* Free the buffers both transports use. */
static void
free_bench(struct bench *b)
{
	free(b->pre);
	free(b->mid);
	free(b->suf);
	free(b->obuf);
	free(b->ibuf);
	free(b->ring);
	free(b->lat);
}

/* Allocate NSS sessions and NHC connections, all closed. */
static void
init_http(struct bench *b, long nss, long nhc)
{
	long	 i;

	b->ep = epoll_create1(EPOLL_CLOEXEC);
	if (b->ep == -1)
		die("epoll_create1");
	b->nss = nss;
	b->ss = calloc((size_t)nss, sizeof(*b->ss));
	b->postq = calloc((size_t)nss, sizeof(*b->postq));
	b->nhc = nhc;
	b->hc = calloc((size_t)nhc, sizeof(*b->hc));
	b->freec = calloc((size_t)nhc, sizeof(*b->freec));
	if (b->ss == NULL || b->postq == NULL || b->hc == NULL ||
	    b->freec == NULL)
		die("calloc");
	for (i = 0; i < nss; i++)
		b->ss[i].fd = -1;
	/* Pushed in reverse, so connection 0 is used first. */
	for (i = 0; i < nhc; i++) {
		b->hc[i].fd = -1;
		b->freec[i] = nhc - 1 - i;
	}
	b->nfreec = b->livec = nhc;
	set_nofile(nss + nhc + 64);
}

/*
 * The idle run: open -i sessions, initialize them (unless -R), let the
 * server settle for a second and read its memory, then with -d hold them
 * open for that long, counting what arrives (keepalives), and read the
 * server's CPU time over the hold.
 */
static int
run_idle(struct bench *b, const char *label)
{
	const struct opts *o = b->o;
	const char	*src;
	uint64_t	 t0, t1, c0, c1, until, now;
	long		 rss0, rss1, rss2, hwm, i;
	double		 setup, hold, per, cpums;
	int		 rc, bad_exit;

	rss0 = server_kb(b, "VmRSS:");
	t0 = now_ns();
	atomic_store(&watch_armed, 1);
	rc = setup_sessions(b);
	t1 = now_ns();
	atomic_store(&watch_armed, 0);
	setup = (double)(t1 - t0) / 1e9;
	/* The POST connections are not part of an idle session. */
	for (i = 0; i < b->nhc; i++)
		if (b->hc[i].fd != -1) {
			epoll_ctl(b->ep, EPOLL_CTL_DEL, b->hc[i].fd, NULL);
			close(b->hc[i].fd);
			b->hc[i].fd = -1;
		}
	/* Settle for a second, still reading the streams. */
	until = now_ns() + 1000000000u;
	while ((now = now_ns()) < until)
		pump(b, (int)((until - now) / 1000000u) + 1);
	rss1 = server_kb(b, "VmRSS:");
	hwm = server_kb(b, "VmHWM:");
	b->keepalives = 0;
	b->stream_bytes = 0;
	c0 = server_cpu(b, &src);
	t0 = now_ns();
	until = t0 + (uint64_t)(o->secs * 1e9);
	while ((now = now_ns()) < until)
		pump(b, (int)((until - now) / 1000000u) + 1);
	t1 = now_ns();
	c1 = server_cpu(b, &src);
	rss2 = server_kb(b, "VmRSS:");
	hold = o->secs > 0 ? (double)(t1 - t0) / 1e9 : 0;
	per = b->ready > 0 && rss0 >= 0 && rss1 >= 0 ?
	    (double)(rss1 - rss0) / (double)b->ready : 0;
	/* -1 when the server is gone and its CPU time with it. */
	cpums = c1 >= c0 && rss2 >= 0 ? (double)(c1 - c0) / 1e6 : -1;
	close_all(b);
	bad_exit = reap_http(b);

	fprintf(o->json ? stderr : stdout,
	    "%s idle: %ld sessions%s (%ld failed) in %.2f s, rss %ld -> %ld "
	    "KiB, %.1f KiB/session; hold %.1f s: server cpu %.1f ms, rss "
	    "%ld KiB, keepalives %ld, closed %ld\n", label, b->ready,
	    o->raw ? " (not initialized)" : "", b->failed, setup, rss0, rss1,
	    per, hold, cpums, rss2, b->keepalives, b->closed);
	if (o->json) {
		printf("{\"label\":\"");
		json_str(stdout, label);
		printf("\",\"transport\":\"sse\",\"mode\":\"idle\","
		    "\"sessions\":%ld,\"ready\":%ld,\"failed\":%ld,"
		    "\"initialized\":%s,\"setup_s\":%.3f,"
		    "\"rss_before_kib\":%ld,\"rss_after_kib\":%ld,"
		    "\"hwm_kib\":%ld,\"rss_per_session_kib\":%.2f,"
		    "\"hold_s\":%.3f,\"rss_end_kib\":%ld,"
		    "\"server_cpu_ms\":%.3f,"
		    "\"cpu_source\":\"%s\",\"keepalives\":%ld,"
		    "\"stream_bytes\":%llu,\"closed\":%ld,\"http_errors\":%ld,"
		    "\"stop_s\":%.3f,\"killed\":%s,\"server_exit_ok\":%s,"
		    "\"url\":\"", o->idle, b->ready,
		    b->failed, o->raw ? "false" : "true", setup, rss0, rss1,
		    hwm, per, hold, rss2, cpums, src, b->keepalives,
		    (unsigned long long)b->stream_bytes, b->closed,
		    b->http_errors, b->stop_s, b->killed ? "true" : "false",
		    bad_exit ? "false" : "true");
		json_str(stdout, o->url);
		printf("\"}\n");
	}
	if (rc != 0 || b->failed > 0 || b->closed > 0 || bad_exit)
		return 1;
	return 0;
}

/* The load run over HTTP; main() for -m, and for -u without -i. */
static int
run_http(struct bench *b, const char *label)
{
	const struct opts *o = b->o;
	const char	*src;
	uint64_t	 c0, c1, s0, s1, t0, t1;
	long		 idle, peak;
	int		 rc, bad_exit;

	atomic_store(&watch_armed, 1);
	if (o->mcp) {
		if (!o->stateless && mhandshake(b) != 0)
			diex(atomic_load(&watch_fired) ? "no answer to the "
			    "handshake" : "cannot set up the session");
		build_mcallhdr(b);
	} else {
		if (setup_sessions(b) != 0)
			diex(atomic_load(&watch_fired) ? "no answer to "
			    "initialize" : "cannot set up the session");
		build_callhdr(b);
	}
	idle = server_kb(b, "VmRSS:");

	rc = 0;
	if (o->warm > 0)
		rc = run_phase_http(b, o->warm, 0);
	b->record = 1;
	s0 = server_cpu(b, &src);
	c0 = self_cpu_ns();
	t0 = now_ns();
	if (rc == 0)
		rc = run_phase_http(b, o->count, o->secs);
	t1 = now_ns();
	c1 = self_cpu_ns();
	s1 = server_cpu(b, &src);
	peak = server_kb(b, "VmHWM:");
	if (s1 < s0 || (b->spid > 0 && peak < 0)) {
		src = "gone";	/* and its CPU time with it */
		s1 = s0;
	}

	atomic_store(&watch_armed, 0);
	atomic_store(&watch_stop, 1);
	close_all(b);
	bad_exit = reap_http(b);

	report(b, label, t1 - t0, s1 - s0, c1 - c0, idle, peak, src,
	    bad_exit);
	fflush(stdout);
	if (b->other > 0)
		fprintf(stderr, "mcp-bench: %ld messages without an id on "
		    "the %s\n", b->other, o->mcp ? "POST streams" : "stream");
	if (b->reconnects > 0)
		fprintf(stderr, "mcp-bench: %ld connections closed by the "
		    "server\n", b->reconnects);
	if (b->errors > 0 || b->unexpected > 0 || b->missing > 0 ||
	    b->http_errors > 0 || rc != 0 || b->nlat == 0 || bad_exit)
		return 1;
	return 0;
}

int
main(int argc, char *argv[])
{
	struct opts	 o;
	struct bench	 b;
	pthread_t	 wd;
	const char	*src, *label;
	uint64_t	 c0, c1, s0, s1, t0, t1;
	long		 idle, peak;
	size_t		 ringsz;
	char		*own_expect;
	int		 ch, rc, count_set, bad_exit;

	memset(&o, 0, sizeof(o));
	o.conc = 1;
	o.count = 200000;
	o.warm = 10000;
	o.tool = "echo";
	o.args = "{\"text\":\"hello world\"}";
	o.timeout = 10;
	o.cpu_client = o.cpu_server = -1;
	o.progress = -1;
	count_set = 0;
	for (;;) {
		ch = getopt(argc, argv, "a:c:d:E:e:g:hi:jk:l:m:n:P:p:RS:sT:t:u:w:");
		if (ch == -1)
			break;
		switch (ch) {
		case 'a':
			o.args = optarg;
			break;
		case 'c':
			o.conc = parse_long(optarg, 1, 1 << 20, "-c");
			break;
		case 'd':
			o.secs = parse_double(optarg, 0.001, "-d");
			break;
		case 'E':
			o.errfile = optarg;
			break;
		case 'e':
			o.expect = optarg;
			break;
		case 'g':
			o.progress = parse_long(optarg, 0, 1000000, "-g");
			break;
		case 'i':
			o.idle = parse_long(optarg, 1, 1000000, "-i");
			break;
		case 'k':
			o.conns = parse_long(optarg, 1, 65536, "-k");
			break;
		case 'R':
			o.raw = 1;
			break;
		case 'S':
			o.spid = (pid_t)parse_long(optarg, 1, INT_MAX, "-S");
			break;
		case 'u':
			if (o.mcp)
				diex("-u and -m exclude each other");
			o.url = optarg;
			break;
		case 'm':
			if (o.url != NULL && !o.mcp)
				diex("-u and -m exclude each other");
			o.url = optarg;
			o.mcp = 1;
			break;
		case 's':
			o.stateless = 1;
			break;
		case 'j':
			o.json = 1;
			break;
		case 'l':
			o.label = optarg;
			break;
		case 'n':
			o.count = parse_long(optarg, 1, LONG_MAX / 2, "-n");
			count_set = 1;
			break;
		case 'P':
			o.cpu_server = (int)parse_long(optarg, 0,
			    CPU_SETSIZE - 1, "-P");
			break;
		case 'p':
			o.cpu_client = (int)parse_long(optarg, 0,
			    CPU_SETSIZE - 1, "-p");
			break;
		case 'T':
			o.timeout = parse_double(optarg, 0.1, "-T");
			break;
		case 't':
			o.tool = optarg;
			break;
		case 'w':
			o.warm = parse_long(optarg, 0, LONG_MAX / 2, "-w");
			break;
		default:
			usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (o.url == NULL && argc < 1)
		usage();
	if (o.url == NULL && (o.idle || o.conns || o.raw || o.spid))
		diex("-i, -k, -R and -S need -u or -m");
	if (o.mcp && (o.idle || o.raw))
		diex("-i and -R need -u");
	if (o.stateless && !o.mcp)
		diex("-s needs -m");
	if (o.spid > 0 && argc > 0)
		diex("-S and a command exclude each other");
	if (count_set && o.secs > 0)
		diex("-n and -d exclude each other");
	o.cmd = argc > 0 ? argv : NULL;
	own_expect = NULL;
	if (o.expect == NULL) {
		own_expect = default_expect(o.args);
		o.expect = own_expect;
	}
	label = o.label != NULL ? o.label : o.cmd != NULL ? o.cmd[0] : o.url;

	memset(&b, 0, sizeof(b));
	b.o = &o;
	b.explen = o.expect != NULL ? strlen(o.expect) : 0;
	build_template(&b);
	b.icap = IBUF_SIZE;
	b.ibuf = xmalloc(b.icap);
	/* Far more slots than the window: a request still unanswered
	 * ringsz ids later holds up the window, but only then. */
	for (ringsz = 65536; ringsz < (size_t)o.conc * 16; ringsz *= 2)
		continue;
	b.ring = calloc(ringsz, sizeof(*b.ring));
	if (b.ring == NULL)
		die("calloc");
	b.mask = ringsz - 1;
	b.next_id = 1;
	if (o.secs == 0) {
		b.latcap = (size_t)o.count;
		b.lat = xmalloc(b.latcap * sizeof(*b.lat));
	}

	main_thread = pthread_self();
	set_signals();
	atexit(kill_child);
	if (o.url != NULL) {
		b.ep = -1;
		parse_url(o.url, o.mcp ? "/mcp" : "/sse");
		b.spid = o.spid;
		if (o.cmd != NULL)
			spawn_http(&b);
		else if (url.port == 0)
			diex("-u: port 0 needs a command to start");
		else
			resolve_url();
		if (o.spid > 0 && o.cpu_server >= 0)
			pin_all(o.spid, o.cpu_server);
		if (o.cpu_client >= 0)
			pin(0, o.cpu_client);
		if (o.conns == 0)
			o.conns = o.idle > 0 ? 16 : o.conc < 256 ? o.conc : 256;
		init_http(&b, o.idle > 0 ? o.idle : 1, o.conns);
		watch_secs = o.timeout;
		if (pthread_create(&wd, NULL, watchdog, NULL) != 0)
			diex("pthread_create failed");
		rc = o.idle > 0 ? run_idle(&b, label) : run_http(&b, label);
		atomic_store(&watch_stop, 1);
		pthread_join(wd, NULL);
		free_http(&b);
		free_bench(&b);
		free(own_expect);
		return rc;
	}
	spawn(&b);
	if (o.cpu_client >= 0)
		pin(0, o.cpu_client);
	watch_secs = o.timeout;
	atomic_store(&watch_armed, 1);
	if (pthread_create(&wd, NULL, watchdog, NULL) != 0)
		diex("pthread_create failed");

	handshake(&b);
	idle = proc_status_kb(b.pid, "VmRSS:");

	rc = 0;
	if (o.warm > 0)
		rc = run_phase(&b, o.warm, 0);
	b.record = 1;
	s0 = child_cpu_ns(b.pid, &src);
	c0 = self_cpu_ns();
	t0 = now_ns();
	if (rc == 0)
		rc = run_phase(&b, o.count, o.secs);
	t1 = now_ns();
	c1 = self_cpu_ns();
	s1 = child_cpu_ns(b.pid, &src);
	peak = proc_status_kb(b.pid, "VmHWM:");

	atomic_store(&watch_armed, 0);
	atomic_store(&watch_stop, 1);
	pthread_join(wd, NULL);
	bad_exit = reap(&b);

	report(&b, label, t1 - t0, s1 - s0, c1 - c0, idle, peak, src,
	    bad_exit);
	fflush(stdout);
	if (b.other > 0)
		fprintf(stderr, "mcp-bench: %ld lines without an id on the "
		    "server's stdout\n", b.other);
	if (b.errors > 0 || b.unexpected > 0 || b.missing > 0 || rc != 0 ||
	    b.nlat == 0 || bad_exit)
		rc = 1;
	close(b.rfd);
	free_bench(&b);
	free(own_expect);
	return rc == 0 ? 0 : 1;
}
