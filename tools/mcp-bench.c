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
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <sys/types.h>
#include <sys/wait.h>

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
	char		**cmd;		/* after "--" */
};

/* One request in flight: its id (0 when the slot is free) and the time
 * its batch was written. */
struct slot {
	uint64_t	 id;
	uint64_t	 t;
};

struct bench {
	const struct opts *o;
	pid_t		 pid;
	int		 wfd;		/* the server's stdin */
	int		 rfd;		/* the server's stdout */

	char		*pre;		/* request text before the id */
	size_t		 prelen;
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
	int		 shown;
	int		 eof;
	char		 proto[64];	/* protocolVersion the server chose */
};

static atomic_ulong	 progress;	/* bumped on every read */
static atomic_int	 watch_armed;
static atomic_int	 watch_stop;
static atomic_int	 watch_fired;
static pid_t		 child_pid;	/* also its process group */
static pthread_t	 main_thread;
static double		 watch_secs;

static void
usage(void)
{
	fprintf(stderr,
	    "usage: mcp-bench [-j] [-a args] [-c window] [-d seconds] "
	    "[-E file]\n"
	    "                 [-e expect] [-l label] [-n count] [-P cpu] "
	    "[-p cpu]\n"
	    "                 [-T timeout] [-t tool] [-w warmup] "
	    "-- command [arg ...]\n");
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
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max) {
		fprintf(stderr, "mcp-bench: %s: bad value \"%s\"\n", what, s);
		exit(2);
	}
	return v;
}

static double
parse_double(const char *s, double min, const char *what)
{
	char	*end;
	double	 v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v >= min)) {
		fprintf(stderr, "mcp-bench: %s: bad value \"%s\"\n", what, s);
		exit(2);
	}
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
			    "killing the server\n", watch_secs);
			atomic_store(&watch_fired, 1);
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
 * Write what is left of the current batch without blocking.  Returns 0,
 * or -1 when the server has closed its stdin.
 */
static int
flush_out(struct bench *b)
{
	ssize_t	 n;

	while (b->ooff < b->olen) {
		n = write(b->wfd, b->obuf + b->ooff, b->olen - b->ooff);
		if (n > 0) {
			b->ooff += (size_t)n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return 0;
		return -1;
	}
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
		nd = sizeof(digits);
		do {
			digits[--nd] = (char)('0' + id % 10);
			id /= 10;
		} while (id != 0);
		memcpy(p, b->pre, b->prelen);
		p += b->prelen;
		memcpy(p, digits + nd, sizeof(digits) - (size_t)nd);
		p += sizeof(digits) - (size_t)nd;
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

	if (len > 0 && line[len - 1] == '\r')
		len--;
	if (len == 0)
		return;
	end = line + len;
	p = find_key(line, len, "\"id\"", 4);
	if (p == NULL) {
		b->other++;	/* a notification or a log line */
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
 * Close the server's stdin and wait for it to exit: 5 s, then SIGTERM,
 * then SIGKILL.  Returns 0 if it exited on its own with status 0 or
 * because of our signals, 1 if it failed or crashed.
 */
static int
reap(struct bench *b)
{
	static const int sigs[] = { 0, SIGTERM, SIGKILL };
	struct timespec	 ts = { 0, 10 * 1000 * 1000 };
	pid_t		 r;
	int		 status, i, k, done;

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
		for (k = 0; k < 500 && !done; k++) {
			while (read(b->rfd, b->ibuf, b->icap) > 0)
				continue;
			r = waitpid(b->pid, &status, WNOHANG);
			if (r == b->pid)
				done = 1;
			else if (r == -1 && errno != EINTR)
				die("waitpid");
			else
				nanosleep(&ts, NULL);
		}
	}
	if (!done)
		diex("the server cannot be killed");
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
	r = snprintf(b->suf, n, ",\"method\":\"tools/call\",\"params\":"
	    "{\"name\":\"%s\",\"arguments\":%s}}\n", o->tool, o->args);
	if (r < 0 || (size_t)r >= n)
		diex("template too long");
	b->suflen = (size_t)r;
	if (memchr(o->args, '\n', strlen(o->args)) != NULL)
		diex("-a: the arguments must fit on one line");
	b->ocap = (size_t)o->conc * (b->prelen + 20 + b->suflen);
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
	ccpu = b->nlat > 0 ? (double)cns / (double)b->nlat / 1e3 : 0;

	fprintf(o->json ? stderr : stdout,
	    "%s c=%ld n=%zu: %.0f req/s, p50 %.1f us, p99 %.1f us, "
	    "server cpu %.2f us/req, client cpu %.2f us/req, "
	    "rss idle %ld KiB peak %ld KiB, errors %ld, missing %ld\n",
	    label, o->conc, b->nlat, rps, pct(b, 0.50), pct(b, 0.99),
	    scpu, ccpu, idle, peak, b->errors + b->unexpected, b->missing);
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
		printf("\",\"cmd\":\"");
		for (i = 0; o->cmd[i] != NULL; i++) {
			if (i > 0)
				putchar(' ');
			json_str(stdout, o->cmd[i]);
		}
		printf("\"}\n");
	}
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
	count_set = 0;
	for (;;) {
		ch = getopt(argc, argv, "a:c:d:E:e:hjl:n:P:p:T:t:w:");
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
	if (argc < 1)
		usage();
	if (count_set && o.secs > 0)
		diex("-n and -d exclude each other");
	o.cmd = argv;
	own_expect = NULL;
	if (o.expect == NULL) {
		own_expect = default_expect(o.args);
		o.expect = own_expect;
	}
	label = o.label != NULL ? o.label : o.cmd[0];

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
	free(b.pre);
	free(b.suf);
	free(b.obuf);
	free(b.ibuf);
	free(b.ring);
	free(b.lat);
	free(own_expect);
	return rc == 0 ? 0 : 1;
}
