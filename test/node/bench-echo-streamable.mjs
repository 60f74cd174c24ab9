/*
 * bench-echo-streamable.mjs: the TypeScript peer for
 * bench/run-streamable.sh.
 *
 *   node test/node/bench-echo-streamable.mjs [PORT]	(default: $PORT, else 0:
 *							 any free port)
 *
 * The echo server of bench-echo-stdio.mjs (one tool, "echo", taking
 * {"text": string} and returning it as a single text content block) served
 * over Streamable HTTP the way the official TypeScript SDK documents it
 * (its example simpleStreamableHttp, stateful): an Express app from
 * createMcpExpressApp() (JSON body parser, Host-header check for
 * loopback); a POST of initialize without a session creates a
 * StreamableHTTPServerTransport (sessionIdGenerator: randomUUID) and a
 * McpServer for the new session; later POSTs, GETs and DELETEs are routed
 * to their session's transport by the Mcp-Session-Id header.  Responses
 * are SSE bodies (the SDK's default).  Listens on 127.0.0.1 only and logs
 * "listening on http://127.0.0.1:PORT/mcp" on stderr, like mcp-demo;
 * there is no per-request logging.  SIGTERM and SIGINT close the sessions
 * and exit 0.
 */
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createMcpExpressApp } from "@modelcontextprotocol/sdk/server/express.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

const HOST = "127.0.0.1";
const PORT = Number(process.argv[2] ?? process.env.PORT ?? 0);

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

app.post("/mcp", async (req, res) => {
  const sessionId = req.headers["mcp-session-id"];
  try {
    let transport;
    if (sessionId && transports[sessionId]) {
      transport = transports[sessionId];
    } else if (!sessionId && isInitializeRequest(req.body)) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          transports[id] = transport;
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) delete transports[transport.sessionId];
      };
      await getServer().connect(transport);
    } else {
      res.status(400).json({
        jsonrpc: "2.0",
        error: { code: -32000, message: "Bad Request: No valid session ID provided" },
        id: null,
      });
      return;
    }
    await transport.handleRequest(req, res, req.body);
  } catch (error) {
    console.error("Error handling MCP request:", error);
    if (!res.headersSent) {
      res.status(500).json({
        jsonrpc: "2.0",
        error: { code: -32603, message: "Internal server error" },
        id: null,
      });
    }
  }
});

// GET (the standalone stream) and DELETE (the end of a session).
async function sessionRequest(req, res) {
  const sessionId = req.headers["mcp-session-id"];
  if (!sessionId || !transports[sessionId]) {
    res.status(400).send("Invalid or missing session ID");
    return;
  }
  await transports[sessionId].handleRequest(req, res);
}
app.get("/mcp", sessionRequest);
app.delete("/mcp", sessionRequest);

const httpServer = app.listen(PORT, HOST, (error) => {
  if (error) {
    console.error("Failed to start server:", error);
    process.exit(1);
  }
  console.error(`listening on http://${HOST}:${httpServer.address().port}/mcp`);
});

async function shutdown() {
  for (const id of Object.keys(transports)) {
    try {
      await transports[id].close();
    } catch {
      // gone already
    }
  }
  process.exit(0);
}
process.on("SIGTERM", shutdown);
process.on("SIGINT", shutdown);
