/*
 * transport_stdio.c: MCP over JSON lines on two file descriptors (0 and
 * 1), non-blocking and driven by libev on the loop thread. Input is split
 * into lines by the line reader the client shares (rpc/frame.c), with a
 * size cap: a longer line streams past unbuffered, scanned for its id,
 * and is answered with an error by that id, so memory stays bounded
 * whatever arrives and its caller still gets an answer.
 * Output is queued and written once a few answers wait or just before
 * the loop blocks; while the queue is over its cap (a client that stops
 * reading), input pauses, so nothing is lost and nothing grows without
 * bound.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpc/frame.h"
#include "transport/transport.h"

#define READ_CHUNK	(64 * 1024)
/*
 * Answers are written once OUT_FLUSH_AT bytes wait, not only before the
 * loop blocks: a client with many requests in flight gets the first
 * answers while the rest are worked on, and sends its next requests
 * meanwhile, where one write per read made the two sides take turns
 * (c=64 echo: 1.7x the throughput, docs/PERFORMANCE.md). While the
 * lines of a read are still being handled, the loop is the busy side
 * and the client has sent what it waits on: a write there costs the
 * loop a wake-up of the client for a few answers, so it waits for
 * OUT_FLUSH_BUSY bytes (loop tools, c=64: 1.29x the throughput of 256
 * bytes; pool tools, answered from the completion queue, unchanged).
 */
#ifndef OUT_FLUSH_AT
#define OUT_FLUSH_AT	256
#endif
#ifndef OUT_FLUSH_BUSY
#define OUT_FLUSH_BUSY	1024
#endif

struct stdio_transport {
	struct mcp_server	*srv;
	struct session		*sess;
	int			 in_fd;
	int			 out_fd;
	int			 in_flags;	/* restored at the end */
	int			 out_flags;
	ev_io			 rio;
	ev_io			 wio;
	struct jsonl		 lines;		/* the input, split */
	int			 at_end;	/* its last line: taken */
	struct buf		 out;
	size_t			 out_cap;
	int			 paused;	/* input stopped: output full */
	int			 blocked;	/* input held: job queue full */
	int			 reading;	/* in split(): more lines wait */
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
	NULL,
	MT_STDIO,
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
	/* (A full pipe is left to the write watcher: no write per
	 * answer that only gets EAGAIN.) */
	if (t->out.len - t->out.off >= (t->reading ? OUT_FLUSH_BUSY :
	    OUT_FLUSH_AT) && !ev_is_active(&t->wio)) {
		try_write(t);
		if (t->broken)
			return MCP_ESTATE;
	}
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

/*
 * One complete line (without its newline, CR or leading blanks): to the
 * protocol. Returns -1, taking nothing, when the job queue is full: the
 * line and the rest stay in the reader and input stops (the pipe pushes
 * back on the client; completions resume us); the input's last line is
 * taken all the same.
 */
static int
line(void *arg, const char *p, size_t n)
{
	struct stdio_transport	*t = arg;

	/* The client is gone (a write failed while this read's lines were
	 * being handled): the rest are dropped, not run. */
	if (t->broken)
		return 0;
	if (!t->at_end && mcp__pool_full(&t->srv->pool))
		return -1;
	mcp__protocol_input(t->sess, p, n, NULL);
	return 0;
}

/*
 * A line over --max-message has ended (or the input did): it is answered
 * with an error, by the request's id when the scan of its bytes found
 * one (wherever in the line it was), so that the caller is not left
 * waiting; a notification is not answered.
 */
static void
oversized(void *arg, const struct idscan *sc)
{
	struct stdio_transport	*t = arg;
	json_t			*id;
	char			 msg[120];

	snprintf(msg, sizeof(msg), "message exceeds the %zu-byte limit "
	    "(--max-message); skipped", t->srv->max_message);
	mcp_log(MCP_LOG_WARN, "stdio: %s", msg);
	if (sc->complete && sc->has_method && !sc->has_id)
		return;
	id = mcp__idscan_id(sc);
	mcp__protocol_error(t->sess, id, MCP_RPC_INVALID_REQUEST, msg);
	json_decref(id);
}

/* N more bytes (0: none, after a pause) are in the reader: its lines. */
static void
split(struct stdio_transport *t, size_t n)
{
	if (mcp__jsonl_split(&t->lines, n, line, oversized, t)) {
		t->blocked = 1;
		ev_io_stop(t->srv->loop, &t->rio);
	}
}

/* Loop, after completions: go on with held lines once there is room. */
void
mcp__stdio_resume(struct stdio_transport *t)
{
	if (!t->blocked || mcp__pool_full(&t->srv->pool))
		return;
	t->blocked = 0;
	mcp__pool_plug(&t->srv->pool);
	split(t, 0);
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
	if (mcp__jsonl_reserve(&t->lines, READ_CHUNK) != MCP_OK) {
		mcp_log(MCP_LOG_ERR, "stdio: out of memory reading input");
		return;
	}
	n = read(t->in_fd, t->lines.in.data + t->lines.in.len,
	    t->lines.in.cap - t->lines.in.len);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return;
		mcp_log(MCP_LOG_ERR, "stdio: read: %s", strerror(errno));
		n = 0;
	}
	if (n == 0) {
		/* A last line without its newline still counts. */
		t->at_end = 1;
		mcp__jsonl_end(&t->lines, line, oversized, t);
		MCP_LOG(MCP_LOG_INFO, "stdio: end of input");
		/* No answer can come now: callbacks waiting for one stop. */
		mcp__clientreq_drop(t->sess, NULL);
		mcp__stdio_stop_input(t);
		t->ended(t->srv);
		return;
	}
	/* Hand the calls of this read to the workers in one go. */
	mcp__pool_plug(&t->srv->pool);
	t->reading = 1;
	split(t, (size_t)n);
	t->reading = 0;
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
	mcp__jsonl_init(&t->lines, srv->max_message);
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
	mcp__jsonl_free(&t->lines);
	mcp__buf_free(&t->out);
	free(t);
}
