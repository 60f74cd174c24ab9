/*
 * stdio.c: the stdio transport's line splitter and output queue
 * (src/transport_stdio.c) under arbitrary bytes in arbitrary chunks:
 * the first byte of the input sets the chunk sizes, the rest is what the
 * client writes, through a real pipe, to a real server run here (test/
 * driver.h) with --max-message 256 so that lines over it are common.
 * Checked: every line the server writes is JSON; it stops at EOF (or
 * when stopped, 0.3 s later: calls in flight are waited for).
 */
#include "fuzz.h"
#include "driver.h"
#include "tools.h"

static mcp_server	*srv;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct drv	 d;
	size_t		 off = 1, n, step;

	if (size == 0)
		return 0;
	if (srv == NULL) {
		mcp_log_set_level(MCP_LOG_ERR - 1);
		srv = tools_server();
		mcp_server_set_max_message(srv, 256);
		mcp_server_set_grace_ms(srv, 100);
		/* Calls of any length come in: cut them at 100 ms. */
		mcp_server_set_option(srv, "tool-timeout", "100");
	}
	if (drv_start(&d, srv, 1) != MCP_OK)
		abort();
	step = (size_t)(data[0] % 64) + 1;
	while (off < size) {
		n = size - off < step ? size - off : step;
		if (drv_write(&d, (const char *)data + off, n) != 0)
			break;
		off += n;
		drv_step(&d);
	}
	FUZZ_CHECK(drv_finish(&d, 0.3) == 0, "the server did not stop");
	fuzz_json_lines(d.out, d.outlen);
	drv_free(&d);
	return 0;
}
