// Prints the command, arguments and environment an MCP host starts an
// unpacked bundle with, as the official MCP Bundle library resolves them
// from its manifest: `node packaging/mcp-config.mjs DIR CONFIG.json`, where
// CONFIG.json is {"user_config": {...}, "system_dirs": {...}}. Exit 1 when
// the manifest leaves required settings unset (the host would not start it).
import { readFile } from "node:fs/promises";
import path from "node:path";
import { getMcpConfigForManifest } from "@anthropic-ai/mcpb";

const [dir, configFile] = process.argv.slice(2);
if (!dir || !configFile) {
  console.error("usage: node packaging/mcp-config.mjs UNPACKED_DIR CONFIG.json");
  process.exit(2);
}
const manifest = JSON.parse(await readFile(path.join(dir, "manifest.json"), "utf8"));
const config = JSON.parse(await readFile(configFile, "utf8"));
const resolved = await getMcpConfigForManifest({
  manifest,
  extensionPath: path.resolve(dir),
  systemDirs: config.system_dirs ?? {},
  userConfig: config.user_config ?? {},
  pathSeparator: path.sep,
});
if (!resolved) {
  console.error("the manifest's required settings are not all given");
  process.exit(1);
}
console.log(JSON.stringify(resolved));
