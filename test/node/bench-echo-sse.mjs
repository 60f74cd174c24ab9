/*
 * bench-echo-sse.mjs: the TypeScript peer for bench/run-sse.sh and
 * bench/idle-sse.sh.
 *
 *   node test/node/bench-echo-sse.mjs [PORT]		(default 0: any free port)
 *
 * The echo server of bench-echo-stdio.mjs (one tool, "echo", taking
 * {"text": string} and returning it as a single text content block) served
 * over the legacy HTTP+SSE transport the way the official TypeScript SDK
 * documents it (its example simpleSseServer): an Express app from
 * createMcpExpressApp() (JSON body parser, Host-header check for
 * loopback), GET /sse creates an SSEServerTransport and a McpServer for
 * the session, and POST /messages routes to the transport by the
 * sessionId query parameter.  Listens on 127.0.0.1 only and logs
 * "listening on http://127.0.0.1:PORT" on stderr, like mcp-demo; there is
 * no per-request logging.  The SDK's SSE transport sends no keepalive.
 * SIGTERM and SIGINT close the streams and exit 0.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { createMcpExpressApp } from "@modelcontextprotocol/sdk/server/express.js";
import { z } from "zod";

const HOST = "127.0.0.1";
const PORT = Number(process.argv[2] ?? 0);

function getServer() {
  const server = new McpServer({ name: "bench-echo", version: "1.0.0" });
  server.registerTool(
    "echo",
    {
      description: "Return the given text unchanged.",
      inputSchema: { text: z.string() },
    },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  return server;
}

const app = createMcpExpressApp({ host: HOST });
const transports = {};

app.get("/sse", async (req, res) => {
  try {
    const transport = new SSEServerTransport("/messages", res);
    const sessionId = transport.sessionId;
    transports[sessionId] = transport;
    transport.onclose = () => {
      delete transports[sessionId];
    };
    await getServer().connect(transport);
  } catch (error) {
    console.error("Error establishing SSE stream:", error);
    if (!res.headersSent) res.status(500).send("Error establishing SSE stream");
  }
});

app.post("/messages", async (req, res) => {
  const sessionId = req.query.sessionId;
  if (!sessionId) {
    res.status(400).send("Missing sessionId parameter");
    return;
  }
  const transport = transports[sessionId];
  if (!transport) {
    res.status(404).send("Session not found");
    return;
  }
  try {
    await transport.handlePostMessage(req, res, req.body);
  } catch (error) {
    console.error("Error handling request:", error);
    if (!res.headersSent) res.status(500).send("Error handling request");
  }
});

const httpServer = app.listen(PORT, HOST, (error) => {
  if (error) {
    console.error("Failed to start server:", error);
    process.exit(1);
  }
  console.error(`listening on http://${HOST}:${httpServer.address().port}`);
});

async function shutdown() {
  for (const id of Object.keys(transports)) {
    try {
      await transports[id].close();
    } catch {
      // the stream is gone already
    }
  }
  process.exit(0);
}
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
