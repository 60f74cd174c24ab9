/*
 * http.c: the HTTP layer (src/http.c, src/transport_sse.c,
 * src/transport_streamable.c, through the real libmicrohttpd handlers)
 * fed arbitrary request bytes. Each input is one client connection: a
 * socketpair whose one end is handed to the daemon with
 * MHD_add_connection, as if accepted from 127.0.0.1; the first byte of
 * the input sets the chunk sizes, the rest is written, then the client
 * reads what comes back and closes. The server (test/tools.h) runs here
 * (test/driver.h) and is stopped after each input, so that every session
 * the input opened ends. Checked: no crash, leak or hang; the server
 * stops within its grace period.
 */
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "fuzz.h"
#include "driver.h"
#include "transport/http.h"
#include "tools.h"

static mcp_server	*srv;

/* Whatever came back, read and dropped; 1 once the server closed. */
static int
drain(int fd)
{
	char	 buf[65536];
	ssize_t	 n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	return n == 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_in	 sin;
	struct drv		 d;
	size_t			 off = 1, n, step;
	ssize_t			 w;
	int			 sv[2], i, closed = 0;

	if (size == 0)
		return 0;
	if (srv == NULL) {
		mcp_log_set_level(MCP_LOG_ERR - 1);
		srv = tools_server();
		mcp_server_set_option(srv, "http", "127.0.0.1:0");
		mcp_server_set_option(srv, "grace-ms", "200");
		mcp_server_set_option(srv, "stream-after-ms", "20");
		mcp_server_set_option(srv, "tool-timeout", "100");
		/* The service's parts too: metrics counted and served, an
		 * access line per request (to /dev/null), request ids. */
		mcp_server_set_option(srv, "metrics", "1");
		mcp_server_set_option(srv, "access-log", "1");
		mcp_server_set_option(srv, "log-file", "/dev/null");
		mcp_server_set_max_message(srv, 4096);
	}
	if (drv_start(&d, srv, 0) != MCP_OK)
		abort();
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		abort();
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(40000);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (MHD_add_connection(mcp__host(srv)->http->d, sv[0],
	    (struct sockaddr *)&sin, sizeof(sin)) != MHD_YES)
		abort();
	/* MHD takes in connections so added when it next runs. */
	mcp__http_wake(mcp__host(srv)->http);
	step = (size_t)(data[0] % 128) + 1;
	for (i = 0; off < size && i < 10000; i++) {
		n = size - off < step ? size - off : step;
		w = write(sv[1], data + off, n);
		if (w > 0)
			off += (size_t)w;
		else if (w < 0 && errno != EAGAIN)
			break;
		drv_step(&d);
		closed = drain(sv[1]);
		if (closed)
			break;
	}
	shutdown(sv[1], SHUT_WR);
	/* Until the server closes, or 8 quiet steps (a stream stays). */
	for (i = 0; i < 8 && !closed; i++) {
		drv_step(&d);
		closed = drain(sv[1]);
	}
	close(sv[1]);
	FUZZ_CHECK(drv_finish(&d, 5) == 0, "the server did not stop within "
	    "5 s of its stop");
	drv_free(&d);
	return 0;
}
