// The replicas bench's upstream (TS SDK, stdio): one tool, `image`, that
// answers with a 256 KiB PNG as an image block. The pixels are made once at
// start (incompressible xorshift bytes, stored deflate blocks), and each call
// adds a tEXt chunk with its own number, so every answer is a different file
// and this process does little more per call than base64 and JSON: the
// bench measures the gateway and its stores, not this server.
//
// The SDK is the one tests/gateway installs (its package-lock.json).
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { deflateSync } from "node:zlib";

import { PNG_SIGNATURE, pngChunk, pseudoRandom, rgbHeader } from "../../tests/media.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const sdk = join(here, "..", "..", "tests", "gateway", "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm");
const { Server } = await import(pathToFileURL(join(sdk, "server", "index.js")).href);
const { StdioServerTransport } = await import(pathToFileURL(join(sdk, "server", "stdio.js")).href);
const { CallToolRequestSchema, ListToolsRequestSchema } = await import(pathToFileURL(join(sdk, "types.js")).href);

// 256 x 340 RGB pixels of xorshift32 bytes: deflate cannot shrink them, so
// the file is about 256 KiB. Each row is stored unfiltered (its first byte 0).
const WIDTH = 256;
const HEIGHT = 340;
const raw = pseudoRandom((WIDTH * 3 + 1) * HEIGHT, 0x2545f491);
for (let i = 0; i < raw.length; i += WIDTH * 3 + 1) raw[i] = 0;
const head = Buffer.concat([PNG_SIGNATURE, pngChunk("IHDR", rgbHeader(WIDTH, HEIGHT))]);
const tail = Buffer.concat([pngChunk("IDAT", deflateSync(raw)), pngChunk("IEND", Buffer.alloc(0))]);

let calls = 0;
function image() {
  calls += 1;
  const note = pngChunk("tEXt", Buffer.from(`Comment\0call ${process.pid}.${calls}`, "latin1"));
  return Buffer.concat([head, note, tail]);
}

const server = new Server({ name: "porter-bench-images", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: "image",
      description: "Returns a 256 KiB PNG (a different one each call) as an image block.",
      inputSchema: { type: "object", properties: {} },
    },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  if (request.params.name !== "image") {
    return { content: [{ type: "text", text: `no tool ${request.params.name}` }], isError: true };
  }
  return { content: [{ type: "image", data: image().toString("base64"), mimeType: "image/png" }] };
});
await server.connect(new StdioServerTransport());
