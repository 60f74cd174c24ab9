/*
 * bench-echo-stdio.mjs: the TypeScript peer for bench/run-stdio.sh.
 *
 * A minimal MCP server built with the official TypeScript SDK (McpServer
 * over StdioServerTransport) that registers one tool, "echo", taking
 * {"text": string} and returning it as a single text content block.  It is
 * the same server as the "echo" tool of build/mcp-demo, written the way an
 * SDK user would write it, so that mcp-bench(1) can compare the two.
 * Logs, if any, go to stderr; stdout carries only JSON-RPC lines.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "bench-echo", version: "1.0.0" });

server.registerTool(
  "echo",
  {
    description: "Return the given text unchanged.",
    inputSchema: { text: z.string() },
  },
  async ({ text }) => ({ content: [{ type: "text", text }] }),
);

await server.connect(new StdioServerTransport());
