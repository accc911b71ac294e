// The upstream behind `porter gateway serve` in the gateway run of the
// conformance suite: a stdio MCP server (TS SDK, low-level Server) that
// offers what the suite's server scenarios call by name — tools, resources,
// a resource template, prompts, completion, logging, progress, sampling and
// questions — written from what each scenario checks.
//
//   node fixture.mjs                # serve on stdio
//   node fixture.mjs --files DIR    # write the files it sends into DIR
//                                   # (the runner compares them with the inbox)
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

import { monoWav, rgbPng } from "../media.mjs";

// ---------------------------------------------------------------------------
// The files, made here from code.

// A 2×2 RGB PNG: red, green, blue and white.
function png() {
  return rgbPng(2, 2, Buffer.from([255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255]));
}

// A tenth of a second of a 440 Hz tone: 8 kHz, 16-bit mono PCM WAV.
function wav() {
  const samples = 800;
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) {
    data.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000)), i * 2);
  }
  return monoWav(data);
}

const PNG = png();
const WAV = wav();
const EMBEDDED_TEXT = "Text of the embedded resource, sent whole by the fixture.";
const MIXED_JSON = JSON.stringify({ fixture: "mixed", values: [1, 2, 3] });
const PROMPT_RESOURCE_TEXT = "Text the fixture embeds in a prompt as a resource.";

// Every file the fixture sends, by the name the runner writes it under.
const FILES = {
  "image.png": PNG,
  "audio.wav": WAV,
  "embedded.txt": Buffer.from(EMBEDDED_TEXT),
  "mixed.json": Buffer.from(MIXED_JSON),
  "prompt-resource.txt": Buffer.from(PROMPT_RESOURCE_TEXT),
};

if (process.argv[2] === "--files") {
  const dir = process.argv[3];
  mkdirSync(dir, { recursive: true });
  for (const [name, bytes] of Object.entries(FILES)) writeFileSync(join(dir, name), bytes);
  process.exit(0);
}

// ---------------------------------------------------------------------------
// The server.

const server = new Server(
  { name: "porter-conformance-fixture", version: "1.0.0" },
  {
    capabilities: {
      tools: {},
      resources: { subscribe: true },
      prompts: {},
      completions: {},
      logging: {},
    },
  },
);

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
const text = (value) => ({ type: "text", text: value });
const noArguments = { type: "object", properties: {} };
const LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];
let level = "debug";

async function log(value) {
  if (LEVELS.indexOf("info") >= LEVELS.indexOf(level)) {
    await server.sendLoggingMessage({ level: "info", logger: "fixture", data: value });
  }
}

const TOOLS = [
  { name: "test_simple_text", description: "Answers with one text block.", inputSchema: noArguments },
  { name: "test_image_content", description: "Answers with a PNG image.", inputSchema: noArguments },
  { name: "test_audio_content", description: "Answers with a WAV recording.", inputSchema: noArguments },
  { name: "test_embedded_resource", description: "Answers with an embedded text resource.", inputSchema: noArguments },
  {
    name: "test_multiple_content_types",
    description: "Answers with text, an image and an embedded resource.",
    inputSchema: noArguments,
  },
  { name: "test_tool_with_logging", description: "Logs three messages while it runs.", inputSchema: noArguments },
  { name: "test_error_handling", description: "Always fails.", inputSchema: noArguments },
  { name: "test_tool_with_progress", description: "Reports progress 0, 50 and 100 of 100.", inputSchema: noArguments },
  {
    name: "test_sampling",
    description: "Asks the client's model to answer a prompt.",
    inputSchema: { type: "object", properties: { prompt: { type: "string" } }, required: ["prompt"] },
  },
  {
    name: "test_elicitation",
    description: "Asks the person for a user name and an email address.",
    inputSchema: { type: "object", properties: { message: { type: "string" } }, required: ["message"] },
  },
  {
    name: "test_elicitation_sep1034_defaults",
    description: "Asks a question whose fields all have defaults.",
    inputSchema: noArguments,
  },
  {
    name: "test_elicitation_sep1330_enums",
    description: "Asks a question with every kind of enum field.",
    inputSchema: noArguments,
  },
  {
    name: "json_schema_2020_12_tool",
    description: "A tool whose input schema uses JSON Schema 2020-12 keywords.",
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: {
        address: { type: "object", properties: { street: { type: "string" }, city: { type: "string" } } },
      },
      properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" } },
      additionalProperties: false,
    },
  },
  { name: "test_reconnection", description: "Answers after a short wait.", inputSchema: noArguments },
];

server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));

server.setRequestHandler(SetLevelRequestSchema, async (request) => {
  level = request.params.level;
  return {};
});

async function ask(extra, schema, message) {
  const answer = await extra.sendRequest(
    { method: "elicitation/create", params: { message, requestedSchema: schema } },
    ElicitResultSchema,
  );
  return [text(`Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`)];
}

const CALLS = {
  test_simple_text: async () => [text("This is a simple text response for testing.")],
  test_image_content: async () => [{ type: "image", data: PNG.toString("base64"), mimeType: "image/png" }],
  test_audio_content: async () => [{ type: "audio", data: WAV.toString("base64"), mimeType: "audio/wav" }],
  test_embedded_resource: async () => [
    { type: "resource", resource: { uri: "test://embedded-resource", mimeType: "text/plain", text: EMBEDDED_TEXT } },
  ],
  test_multiple_content_types: async () => [
    text("Multiple content types test:"),
    { type: "image", data: PNG.toString("base64"), mimeType: "image/png" },
    {
      type: "resource",
      resource: { uri: "test://mixed-content-resource", mimeType: "application/json", text: MIXED_JSON },
    },
  ],
  test_tool_with_logging: async () => {
    await log("Tool execution started");
    await sleep(50);
    await log("Tool processing data");
    await sleep(50);
    await log("Tool execution completed");
    return [text("The tool logged three messages.")];
  },
  test_tool_with_progress: async (_args, extra) => {
    const token = extra._meta?.progressToken;
    for (const progress of [0, 50, 100]) {
      if (token !== undefined) {
        await extra.sendNotification({
          method: "notifications/progress",
          params: { progressToken: token, progress, total: 100 },
        });
      }
      if (progress < 100) await sleep(50);
    }
    return [text("Progress reported: 0, 50 and 100 of 100.")];
  },
  test_sampling: async (args, extra) => {
    const answer = await extra.sendRequest(
      {
        method: "sampling/createMessage",
        params: { messages: [{ role: "user", content: text(String(args.prompt ?? "")) }], maxTokens: 100 },
      },
      CreateMessageResultSchema,
    );
    const said = answer.content?.type === "text" ? answer.content.text : JSON.stringify(answer.content);
    return [text(`LLM response: ${said}`)];
  },
  test_elicitation: async (args, extra) =>
    ask(
      extra,
      {
        type: "object",
        properties: {
          username: { type: "string", description: "User's response" },
          email: { type: "string", description: "User's email address" },
        },
        required: ["username", "email"],
      },
      String(args.message ?? "Please answer"),
    ),
  test_elicitation_sep1034_defaults: async (_args, extra) =>
    ask(
      extra,
      {
        type: "object",
        properties: {
          name: { type: "string", description: "Name", default: "John Doe" },
          age: { type: "integer", description: "Age", default: 30 },
          score: { type: "number", description: "Score", default: 95.5 },
          status: { type: "string", description: "Status", enum: ["active", "inactive", "pending"], default: "active" },
          verified: { type: "boolean", description: "Verified", default: true },
        },
      },
      "Please confirm or change these values",
    ),
  test_elicitation_sep1330_enums: async (_args, extra) =>
    ask(
      extra,
      {
        type: "object",
        properties: {
          untitledSingle: { type: "string", enum: ["option1", "option2", "option3"] },
          titledSingle: {
            type: "string",
            oneOf: [
              { const: "value1", title: "First Option" },
              { const: "value2", title: "Second Option" },
              { const: "value3", title: "Third Option" },
            ],
          },
          legacyEnum: {
            type: "string",
            enum: ["opt1", "opt2", "opt3"],
            enumNames: ["Option One", "Option Two", "Option Three"],
          },
          untitledMulti: { type: "array", items: { type: "string", enum: ["option1", "option2", "option3"] } },
          titledMulti: {
            type: "array",
            items: {
              anyOf: [
                { const: "value1", title: "First Choice" },
                { const: "value2", title: "Second Choice" },
                { const: "value3", title: "Third Choice" },
              ],
            },
          },
        },
      },
      "Please pick your options",
    ),
  json_schema_2020_12_tool: async (args) => [text(`Received ${JSON.stringify(args)}`)],
  test_reconnection: async () => {
    await sleep(100);
    return [text("Reconnection test completed.")];
  },
};

server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  const name = request.params.name;
  if (name === "test_error_handling") {
    return { isError: true, content: [text("This tool fails on purpose, for testing.")] };
  }
  const call = CALLS[name];
  if (!call) return { isError: true, content: [text(`The fixture has no tool named ${name}.`)] };
  return { content: await call(request.params.arguments ?? {}, extra) };
});

// Resources.

const RESOURCES = [
  { uri: "test://static-text", name: "static-text", description: "A short text.", mimeType: "text/plain" },
  { uri: "test://static-binary", name: "static-binary", description: "A PNG image.", mimeType: "image/png" },
  { uri: "test://watched-resource", name: "watched-resource", description: "A text to subscribe to.", mimeType: "text/plain" },
];

server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: RESOURCES }));
server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
  resourceTemplates: [
    {
      uriTemplate: "test://template/{id}/data",
      name: "template-data",
      description: "Data for an id.",
      mimeType: "application/json",
    },
  ],
}));

const subscribed = new Set();
server.setRequestHandler(SubscribeRequestSchema, async (request) => {
  subscribed.add(request.params.uri);
  return {};
});
server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
  subscribed.delete(request.params.uri);
  return {};
});

server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
  const uri = request.params.uri;
  if (uri === "test://static-text") {
    return { contents: [{ uri, mimeType: "text/plain", text: "This is the content of the static text resource." }] };
  }
  if (uri === "test://static-binary") {
    return { contents: [{ uri, mimeType: "image/png", blob: PNG.toString("base64") }] };
  }
  if (uri === "test://watched-resource") {
    return { contents: [{ uri, mimeType: "text/plain", text: "Watched text." }] };
  }
  const match = /^test:\/\/template\/([^/]+)\/data$/.exec(uri);
  if (match) {
    const id = match[1];
    return {
      contents: [
        { uri, mimeType: "application/json", text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) },
      ],
    };
  }
  throw new Error(`The fixture has no resource ${uri}.`);
});

// Prompts and completion.

server.setRequestHandler(ListPromptsRequestSchema, async () => ({
  prompts: [
    { name: "test_simple_prompt", description: "A prompt without arguments." },
    {
      name: "test_prompt_with_arguments",
      description: "A prompt with two arguments.",
      arguments: [
        { name: "arg1", description: "The first argument", required: true },
        { name: "arg2", description: "The second argument", required: true },
      ],
    },
    {
      name: "test_prompt_with_embedded_resource",
      description: "A prompt that embeds a resource.",
      arguments: [{ name: "resourceUri", description: "The resource's URI", required: true }],
    },
    { name: "test_prompt_with_image", description: "A prompt that shows an image." },
  ],
}));

server.setRequestHandler(GetPromptRequestSchema, async (request) => {
  const args = request.params.arguments ?? {};
  const user = (content) => ({ role: "user", content });
  switch (request.params.name) {
    case "test_simple_prompt":
      return { messages: [user(text("This is a simple prompt for testing."))] };
    case "test_prompt_with_arguments":
      return { messages: [user(text(`Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'`))] };
    case "test_prompt_with_embedded_resource":
      return {
        messages: [
          user({
            type: "resource",
            resource: { uri: String(args.resourceUri), mimeType: "text/plain", text: PROMPT_RESOURCE_TEXT },
          }),
          user(text("Please process the embedded resource above.")),
        ],
      };
    case "test_prompt_with_image":
      return {
        messages: [
          user({ type: "image", data: PNG.toString("base64"), mimeType: "image/png" }),
          user(text("Please analyze the image above.")),
        ],
      };
    default:
      throw new Error(`The fixture has no prompt named ${request.params.name}.`);
  }
});

const WORDS = ["paris", "park", "party", "test", "testing", "tests"];
server.setRequestHandler(CompleteRequestSchema, async (request) => {
  const typed = String(request.params.argument?.value ?? "");
  const values = WORDS.filter((word) => word.startsWith(typed));
  return { completion: { values, total: values.length, hasMore: false } };
});

await server.connect(new StdioServerTransport());
