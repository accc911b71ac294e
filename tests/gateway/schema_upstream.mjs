// An upstream MCP server (TS SDK, stdio) whose tools declare an
// outputSchema and repeat an image of their content in structuredContent:
// `loose-image` declares the data a plain string, which a stub still fits;
// `strict-image` declares it base64 by a pattern, which no stub fits, and
// adds a thumbnail found only in structuredContent. The bytes come from
// the same xorshift recipe as harness.pseudo_random, so the tests can
// rebuild them.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

import { PNG_SIGNATURE, pseudoRandom } from "../media.mjs";

function image(size, seed) {
  const data = Buffer.concat([PNG_SIGNATURE, pseudoRandom(size, seed)]).toString("base64");
  return { type: "image", data, mimeType: "image/png" };
}

function outputSchema(data) {
  const block = {
    type: "object",
    properties: { type: { const: "image" }, data, mimeType: { type: "string" } },
    required: ["type", "data", "mimeType"],
  };
  return {
    type: "object",
    properties: { image: block, thumbnail: block, caption: { type: "string" } },
    required: ["image", "caption"],
  };
}

const TOOLS = [
  {
    name: "loose-image",
    description: "An image, repeated in structuredContent; its data declared a string.",
    inputSchema: { type: "object", properties: {} },
    outputSchema: outputSchema({ type: "string" }),
  },
  {
    name: "strict-image",
    description: "An image and a thumbnail in structuredContent; data declared base64 by a pattern.",
    inputSchema: { type: "object", properties: {} },
    outputSchema: outputSchema({ type: "string", pattern: "^[A-Za-z0-9+/]+=*$" }),
  },
];

const server = new Server({ name: "schema-upstream", version: "1.0.0" }, { capabilities: { tools: {} } });

server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));

server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const picture = image(6000, 21);
  switch (request.params.name) {
    case "loose-image":
      return {
        content: [picture],
        structuredContent: { image: picture, caption: "a picture" },
      };
    case "strict-image":
      return {
        content: [picture],
        structuredContent: { image: picture, thumbnail: image(2000, 22), caption: "a picture" },
      };
    default:
      return { content: [{ type: "text", text: `no tool ${request.params.name}` }], isError: true };
  }
});

await server.connect(new StdioServerTransport());
