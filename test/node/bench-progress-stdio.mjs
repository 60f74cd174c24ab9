/*
 * bench-progress-stdio.mjs: the TypeScript peer for bench/run-progress.sh.
 *
 * The same server as bench/progress-server.c, written with the official
 * TypeScript SDK (McpServer over StdioServerTransport): two tools taking
 * {"text": string} and returning it as one text content block, "echo" and
 * "progress10", which first sends notifications/progress 1..10 of 10 for
 * the request's _meta.progressToken (none when the request has no token).
 * Logs, if any, go to stderr; stdout carries only JSON-RPC lines.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "bench-progress", version: "1.0.0" });

server.registerTool(
  "echo",
  {
    description: "Return the given text unchanged.",
    inputSchema: { text: z.string() },
  },
  async ({ text }) => ({ content: [{ type: "text", text }] }),
);

server.registerTool(
  "progress10",
  {
    description: "Report progress 1 to 10 of 10, then return the text.",
    inputSchema: { text: z.string() },
  },
  async ({ text }, extra) => {
    const progressToken = extra._meta?.progressToken;
    if (progressToken !== undefined) {
      for (let i = 1; i <= 10; i++) {
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken, progress: i, total: 10 },
        });
      }
    }
    return { content: [{ type: "text", text }] };
  },
);

await server.connect(new StdioServerTransport());
