// A small upstream MCP server (TS SDK, stdio) for the gateway's tests. It
// answers with every kind of content a tool result can carry: audio, an
// image, embedded resources (blob and text), a resource link, mixed
// content, and files hidden as base64 inside text (JSON next to a mimeType,
// a random cursor that is not a file, broken JSON around a PNG). Every file
// is made here from code, so the tests can compute the same bytes.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

import { monoWav, pseudoRandom, rgbPng } from "../media.mjs";

// An RGB PNG of `width`×`height` whose pixels come from pseudoRandom.
export function png(width, height, seed) {
  return rgbPng(width, height, pseudoRandom(width * 3 * height, seed));
}

// A mono 16-bit WAV of `samples` samples.
function wav(samples, seed) {
  return monoWav(pseudoRandom(samples * 2, seed));
}

// Bytes that start like a PDF, followed by `size` pseudo-random bytes.
function pdfLike(size, seed) {
  return Buffer.concat([Buffer.from("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "latin1"), pseudoRandom(size, seed)]);
}

const text = (t) => ({ type: "text", text: t });

const tools = {
  echo: {
    description: "Returns its message as text, unchanged.",
    properties: { message: { type: "string" } },
    run: (args) => ({ content: [text(args.message ?? "")] }),
  },
  audio: {
    description: "Returns a WAV file as an audio block.",
    run: () => ({ content: [{ type: "audio", data: wav(4000, 7).toString("base64"), mimeType: "audio/wav" }] }),
  },
  image: {
    description: "Returns a 64x48 PNG as an image block.",
    run: () => ({ content: [{ type: "image", data: png(64, 48, 11).toString("base64"), mimeType: "image/png" }] }),
  },
  embedded: {
    description: "Returns an embedded blob resource (a PDF) and an embedded text resource (CSV).",
    run: () => ({
      content: [
        { type: "resource", resource: { uri: "file:///reports/q3%20report.pdf", mimeType: "application/pdf", blob: pdfLike(5000, 3).toString("base64") } },
        { type: "resource", resource: { uri: "file:///data/table.csv", mimeType: "text/csv", text: "a,b\n1,2\n" } },
      ],
    }),
  },
  mixed: {
    description: "Returns text, an image, audio and a resource link together.",
    run: () => ({
      content: [
        text("Here is what you asked for."),
        { type: "image", data: png(16, 16, 5).toString("base64"), mimeType: "image/png" },
        { type: "audio", data: wav(800, 9).toString("base64"), mimeType: "audio/wav" },
        { type: "resource_link", uri: "file:///reports/annual.pdf", name: "annual.pdf", mimeType: "application/pdf", size: 123456 },
        text("That is all."),
      ],
    }),
  },
  "json-pdf": {
    description: "Returns JSON text holding a base64 PDF next to its mimeType.",
    run: () => ({
      content: [
        text(JSON.stringify({ fileName: "report.pdf", mimeType: "application/pdf", data: pdfLike(12000, 21).toString("base64"), pages: 3 }, null, 2)),
      ],
    }),
  },
  cursor: {
    description: "Returns JSON text with a long random base64 cursor (not a file).",
    run: () => ({
      content: [text(JSON.stringify({ items: [1, 2, 3], nextCursor: pseudoRandom(6000, 99).toString("base64") }))],
    }),
  },
  "broken-json-png": {
    description: "Returns invalid JSON text around a base64 PNG.",
    run: () => ({
      content: [text(`{"note": "cut short", "image": "${png(40, 40, 13).toString("base64")}", "more": [1, 2,`)],
    }),
  },
  "big-blob": {
    description: "Returns an embedded resource blob of `size` bytes.",
    properties: { size: { type: "number" } },
    run: (args) => ({
      content: [{ type: "resource", resource: { uri: "file:///big/archive.bin", mimeType: "application/octet-stream", blob: pseudoRandom(Math.floor(args.size ?? 1024), 5).toString("base64") } }],
    }),
  },
  slow: {
    description: "Sends `steps` progress notifications, one every `ms` milliseconds, then answers.",
    properties: { steps: { type: "number" }, ms: { type: "number" } },
    run: async (args, extra) => {
      const steps = Math.floor(args.steps ?? 3);
      const token = extra._meta?.progressToken;
      for (let i = 1; i <= steps; i++) {
        await new Promise((resolve, reject) => {
          const timer = setTimeout(resolve, args.ms ?? 100);
          extra.signal.addEventListener("abort", () => {
            clearTimeout(timer);
            reject(new Error("cancelled"));
          });
        });
        if (token !== undefined) {
          await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: i, total: steps } });
        }
      }
      return { content: [text(`done after ${steps} steps`)] };
    },
  },
};

const server = new Server({ name: "porter-test-upstream", version: "1.0.0" }, { capabilities: { tools: {} } });

server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: Object.entries(tools).map(([name, tool]) => ({
    name,
    description: tool.description,
    inputSchema: { type: "object", properties: tool.properties ?? {} },
  })),
}));

server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  const tool = tools[request.params.name];
  if (!tool) {
    return { content: [text(`no tool ${request.params.name}`)], isError: true };
  }
  return tool.run(request.params.arguments ?? {}, extra);
});

await server.connect(new StdioServerTransport());
