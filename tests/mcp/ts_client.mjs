// The TypeScript MCP SDK as a client of `porter mattermost serve`: over
// stdio (the plan's command), or over streamable HTTP when the plan gives a
// `url`. It runs the steps given as JSON in its one argument and prints one
// JSON line with what each answered; the Python test says what that must
// be. A step is {op: "templates"}, {op: "complete", uri, value},
// {op: "read", uri}, {op: "call", name, arguments}, {op: "follow", name,
// arguments} (call the tool, then read every resource_link it returned) or
// {op: "until_parked", log, total} (wait until the server's log says it has
// parked `total` sessions in all; tests/server_log.py reads it the same
// way). Errors are answers too: {error: message, code}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { readFileSync } from "node:fs";

const plan = JSON.parse(process.argv[2]);
const transport = plan.url
  ? new StreamableHTTPClientTransport(new URL(plan.url))
  : new StdioClientTransport({
      command: plan.command,
      args: plan.args,
      env: plan.env,
      stderr: "inherit",
    });
const client = new Client({ name: "porter-ts-test", version: "1.0.0" });
await client.connect(transport);

async function answer(run) {
  try {
    return await run();
  } catch (error) {
    return { error: String(error.message ?? error), code: error.code ?? null };
  }
}

const out = { capabilities: client.getServerCapabilities(), steps: [] };
for (const step of plan.steps) {
  switch (step.op) {
    case "templates":
      out.steps.push(await answer(() => client.listResourceTemplates()));
      break;
    case "complete":
      out.steps.push(
        await answer(() =>
          client.complete({
            ref: { type: "ref/resource", uri: step.uri },
            argument: { name: step.argument ?? "file_id", value: step.value },
          }),
        ),
      );
      break;
    case "read":
      out.steps.push(await answer(() => client.readResource({ uri: step.uri })));
      break;
    case "call":
      out.steps.push(await answer(() => client.callTool({ name: step.name, arguments: step.arguments })));
      break;
    case "follow": {
      const result = await answer(() => client.callTool({ name: step.name, arguments: step.arguments }));
      const links = (result.content ?? []).filter((block) => block.type === "resource_link");
      const reads = [];
      for (const link of links) {
        reads.push(await answer(() => client.readResource({ uri: link.uri })));
      }
      out.steps.push({ result, reads });
      break;
    }
    case "until_parked": {
      const deadline = Date.now() + 30000;
      while (parkedIn(step.log) < step.total) {
        if (Date.now() > deadline) {
          throw new Error(`fewer than ${step.total} sessions were parked within 30 s`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      break;
    }
    default:
      throw new Error(`unknown step ${step.op}`);
  }
}
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");

// How many sessions the server writing `log` says it has parked so far.
function parkedIn(log) {
  let text = "";
  try {
    text = readFileSync(log, "utf8");
  } catch {
    return 0;
  }
  let total = 0;
  for (const found of text.matchAll(/sessions parked after a quiet spell sessions=(\d+)/g)) {
    total += Number(found[1]);
  }
  return total;
}
