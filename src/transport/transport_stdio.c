/*
 * transport_stdio.c: MCP over JSON lines on two file descriptors (0 and
 * 1), non-blocking and driven by libev on the loop thread. Input is split
 * into lines with a size cap: a longer line streams past unbuffered,
 * scanned for its id, and is answered with an error by that id, so memory
 * stays bounded whatever arrives and its caller still gets an answer.
 * Output is queued and written just before the loop blocks; while the
 * queue is over its cap (a client that stops reading), input pauses, so
 * nothing is lost and nothing grows without bound.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "transport/transport.h"

#define READ_CHUNK	(64 * 1024)
#define OUT_FLUSH_AT	(64 * 1024)	/* write at once past this */

struct stdio_transport {
	struct mcp_server	*srv;
	struct session		*sess;
	int			 in_fd;
	int			 out_fd;
	int			 in_flags;	/* restored at the end */
	int			 out_flags;
	ev_io			 rio;
	ev_io			 wio;
	struct buf		 in;
	size_t			 scanned;	/* see split() */
	int			 skipping;	/* inside an oversized line */
	struct idscan		 scan;		/* ... looking for its id */
	struct buf		 out;
	size_t			 out_cap;
	int			 paused;	/* input stopped: output full */
	int			 blocked;	/* input held: job queue full */
	int			 eof;		/* no more input */
	int			 broken;	/* output failed: client gone */
	void			(*ended)(struct mcp_server *);
};

static int	 stdio_send(struct session *, void *, const char *, size_t,
		    int);

static const struct session_ops stdio_ops = {
	stdio_send,
	NULL,
	NULL,
};

static void	 try_write(struct stdio_transport *);

static void
input_start(struct stdio_transport *t)
{
	if (!t->eof && !t->paused && !t->blocked)
		ev_io_start(t->srv->loop, &t->rio);
}

/* Queues one message and its newline. */
static int
stdio_send(struct session *s, void *route, const char *json, size_t len,
    int final)
{
	struct stdio_transport	*t = s->tdata;

	(void)route;
	(void)final;
	if (t->broken)
		return MCP_ESTATE;
	if (mcp__buf_reserve(&t->out, len + 1) != MCP_OK) {
		mcp_log(MCP_LOG_ERR, "stdio: out of memory, message lost");
		return MCP_ENOMEM;
	}
	memcpy(t->out.data + t->out.len, json, len);
	t->out.len += len;
	t->out.data[t->out.len++] = '\n';
	if (t->out.len - t->out.off >= OUT_FLUSH_AT)
		try_write(t);
	if (t->out.len - t->out.off > t->out_cap && !t->paused) {
		/* The client is not reading: stop reading it, too. */
		t->paused = 1;
		ev_io_stop(t->srv->loop, &t->rio);
		MCP_LOG(MCP_LOG_INFO, "stdio: output backlog %zu bytes, "
		    "pausing input", t->out.len - t->out.off);
	}
	return MCP_OK;
}

static void
try_write(struct stdio_transport *t)
{
	ssize_t	 n;

	while (t->out.len > t->out.off) {
		n = write(t->out_fd, t->out.data + t->out.off,
		    t->out.len - t->out.off);
		if (n > 0) {
			mcp__buf_consume(&t->out, (size_t)n);
			mcp__server_progress(t->srv);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			ev_io_start(t->srv->loop, &t->wio);
			return;
		}
		/* EPIPE and friends: nobody is listening any more. */
		mcp_log(MCP_LOG_NOTICE, "stdio: output closed (%s), stopping",
		    n < 0 ? strerror(errno) : "short write");
		t->broken = 1;
		mcp__buf_reset(&t->out);
		ev_io_stop(t->srv->loop, &t->wio);
		mcp__stdio_stop_input(t);
		t->ended(t->srv);
		return;
	}
	ev_io_stop(t->srv->loop, &t->wio);
	if (t->paused && t->out.len - t->out.off <= t->out_cap / 2) {
		t->paused = 0;
		input_start(t);
	}
	mcp__server_check_drained(t->srv);
}

static void
write_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop;
	(void)revents;
	try_write(w->data);
}

/* One complete line, without its newline (nor its CR). */
static void
line(struct stdio_transport *t, const char *p, size_t n)
{
	while (n > 0 && (*p == ' ' || *p == '\t' || *p == '\r')) {
		p++;
		n--;
	}
	if (n == 0)
		return;		/* blank lines are not messages */
	mcp__protocol_input(t->sess, p, n, NULL);
}

/*
 * A line over --max-message has ended (or the input did): it is answered
 * with an error, by the request's id when the scan of its bytes found
 * one (wherever in the line it was), so that the caller is not left
 * waiting; a notification is not answered.
 */
static void
oversized(struct stdio_transport *t)
{
	json_t	*id;
	char	 msg[120];

	snprintf(msg, sizeof(msg), "message exceeds the %zu-byte limit "
	    "(--max-message); skipped", t->srv->max_message);
	mcp_log(MCP_LOG_WARN, "stdio: %s", msg);
	if (t->scan.complete && t->scan.has_method && !t->scan.has_id)
		return;
	id = mcp__idscan_id(&t->scan);
	mcp__protocol_error(t->sess, id, MCP_RPC_INVALID_REQUEST, msg);
	json_decref(id);
}

/*
 * The line of N bytes at P, without its newline, has ended: taken, or
 * refused when it (or the part of it that streamed past: skipping) is
 * over --max-message. Returns -1, taking nothing, when the job queue is
 * full; the LAST line of the input is taken all the same.
 */
static int
take(struct stdio_transport *t, const char *p, size_t n, int last)
{
	if (n > 0 && p[n - 1] == '\r')
		n--;		/* CR LF framing: the CR is not data */
	if (t->skipping) {
		mcp__idscan_feed(&t->scan, p, n);
		t->skipping = 0;
		oversized(t);
	} else if (n > t->srv->max_message) {
		mcp__idscan_init(&t->scan);
		mcp__idscan_feed(&t->scan, p, n);
		oversized(t);
	} else if (!last && mcp__pool_full(&t->srv->pool)) {
		return -1;
	} else {
		line(t, p, n);
	}
	return 0;
}

/*
 * Splits the input into lines. Bytes of an oversized line are thrown
 * away as they come, so the buffer never holds more than max_message
 * plus one read. SCANNED counts the bytes after in.off known to hold no
 * newline, so a long line is not searched again on every read.
 */
static void
split(struct stdio_transport *t)
{
	char	*p, *from, *nl, *end;
	size_t	 held;

	p = t->in.data + t->in.off;
	end = t->in.data + t->in.len;
	from = p + t->scanned;
	for (;;) {
		nl = memchr(from, '\n', (size_t)(end - from));
		if (nl == NULL)
			break;
		if (take(t, p, (size_t)(nl - p), 0) < 0) {
			/*
			 * The job queue is full: leave this line and the rest
			 * in the buffer and stop reading. The pipe pushes back
			 * on the client; completions resume us.
			 */
			t->blocked = 1;
			ev_io_stop(t->srv->loop, &t->rio);
			break;
		}
		p = from = nl + 1;
	}
	held = (size_t)(end - p);
	if (!t->blocked && !t->skipping && held > t->srv->max_message + 1) {
		/* Too long already: let it stream past, scanned for its id. */
		mcp__idscan_init(&t->scan);
		t->skipping = 1;
	}
	if (t->skipping) {
		mcp__idscan_feed(&t->scan, p, held);
		p = end;
		held = 0;
	}
	mcp__buf_consume(&t->in, (size_t)(p - (t->in.data + t->in.off)));
	t->scanned = t->blocked ? 0 : held;
}

/* Loop, after completions: go on with held lines once there is room. */
void
mcp__stdio_resume(struct stdio_transport *t)
{
	if (!t->blocked || mcp__pool_full(&t->srv->pool))
		return;
	t->blocked = 0;
	mcp__pool_plug(&t->srv->pool);
	split(t);
	mcp__pool_unplug(&t->srv->pool);
	input_start(t);
}

static void
read_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct stdio_transport	*t = w->data;
	ssize_t			 n;

	(void)loop;
	(void)revents;
	if (mcp__buf_reserve(&t->in, READ_CHUNK) != MCP_OK) {
		mcp_log(MCP_LOG_ERR, "stdio: out of memory reading input");
		return;
	}
	n = read(t->in_fd, t->in.data + t->in.len, t->in.cap - t->in.len);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return;
		mcp_log(MCP_LOG_ERR, "stdio: read: %s", strerror(errno));
		n = 0;
	}
	if (n == 0) {
		/* A last line without its newline still counts. */
		if (t->skipping || t->in.len > t->in.off)
			(void)take(t, t->in.data + t->in.off,
			    t->in.len - t->in.off, 1);
		mcp__buf_reset(&t->in);
		t->scanned = 0;
		MCP_LOG(MCP_LOG_INFO, "stdio: end of input");
		/* No answer can come now: callbacks waiting for one stop. */
		mcp__clientreq_drop(t->sess, NULL);
		mcp__stdio_stop_input(t);
		t->ended(t->srv);
		return;
	}
	t->in.len += (size_t)n;
	/* Hand the calls of this read to the workers in one go. */
	mcp__pool_plug(&t->srv->pool);
	split(t);
	mcp__pool_unplug(&t->srv->pool);
}

static int
nonblock(int fd, int *saved)
{
	int	 fl;

	fl = fcntl(fd, F_GETFL);
	if (fl < 0)
		return -1;
	*saved = fl;
	return fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

struct stdio_transport *
mcp__stdio_new(struct mcp_server *srv, int in_fd, int out_fd,
    void (*ended)(struct mcp_server *))
{
	struct stdio_transport	*t;

	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->sess = mcp__session_new(srv, &stdio_ops, t);
	if (t->sess != NULL)
		mcp__metrics_session_open(t->sess, MT_STDIO);
	if (t->sess == NULL) {
		free(t);
		return NULL;
	}
	t->srv = srv;
	t->ended = ended;
	t->in_fd = in_fd;
	t->out_fd = out_fd;
	t->in_flags = t->out_flags = -1;
	t->out_cap = srv->max_message * 2 > 1u << 20 ?
	    srv->max_message * 2 : 1u << 20;
	ev_io_init(&t->rio, read_cb, in_fd, EV_READ);
	ev_io_init(&t->wio, write_cb, out_fd, EV_WRITE);
	t->rio.data = t->wio.data = t;
	return t;
}

void
mcp__stdio_start(struct stdio_transport *t)
{
	if (nonblock(t->in_fd, &t->in_flags) != 0 ||
	    nonblock(t->out_fd, &t->out_flags) != 0)
		mcp_log(MCP_LOG_WARN, "stdio: fcntl: %s", strerror(errno));
	input_start(t);
}

void
mcp__stdio_stop_input(struct stdio_transport *t)
{
	if (t->srv->draining && !t->eof)
		t->sess->why = MR_SHUTDOWN;	/* not the client's end */
	t->eof = 1;
	ev_io_stop(t->srv->loop, &t->rio);
}

/* Nothing owed to the client and nothing left to write. */
int
mcp__stdio_idle(struct stdio_transport *t)
{
	return t->broken || (t->sess->pending == 0 &&
	    t->out.len == t->out.off);
}

void
mcp__stdio_flush(struct stdio_transport *t)
{
	if (t->out.len > t->out.off && !ev_is_active(&t->wio))
		try_write(t);
}

void
mcp__stdio_abort(struct stdio_transport *t)
{
	mcp__protocol_abort(t->sess);
}

void
mcp__stdio_free(struct stdio_transport *t)
{
	if (t == NULL)
		return;
	ev_io_stop(t->srv->loop, &t->rio);
	ev_io_stop(t->srv->loop, &t->wio);
	if (t->in_flags >= 0)
		fcntl(t->in_fd, F_SETFL, t->in_flags);
	if (t->out_flags >= 0)
		fcntl(t->out_fd, F_SETFL, t->out_flags);
	mcp__session_close(t->sess);
	mcp__buf_free(&t->in);
	mcp__buf_free(&t->out);
	free(t);
}
