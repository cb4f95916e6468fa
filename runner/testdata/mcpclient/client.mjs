// A real MCP client (the official TypeScript SDK) for the runner's tests.
//
//   node client.mjs stdio CALLS.json COMMAND [ARG...]   spawn COMMAND, speak MCP on its stdio
//   node client.mjs http  CALLS.json URL                 streamable HTTP at URL
//
// Over HTTP, the MCP_TOKEN environment variable is sent as a bearer token.
// CALLS.json is {"calls": [{"name", "arguments"}], "bench": {"name", "arguments", "n"}?}.
// The client connects, lists the tools, makes each call in order and prints
// one JSON document on stdout: the server's name and instructions, the
// listed tools, and each call's result as the SDK returned it. With bench,
// it then makes that call n times and reports the mean round trip.
// Checking the results is the Go test's job; this script exits non-zero only
// when the protocol itself fails (the SDK throws), which the test reports.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, callsFile, target, ...rest] = process.argv.slice(2);
if (!mode || !callsFile || !target) {
  console.error("usage: node client.mjs stdio|http CALLS.json COMMAND|URL [ARG...]");
  process.exit(2);
}
const spec = JSON.parse(readFileSync(callsFile, "utf8"));

let transport;
if (mode === "stdio") {
  transport = new StdioClientTransport({ command: target, args: rest, stderr: "inherit" });
} else if (mode === "http") {
  // MCP_TOKEN, when set, is sent as a bearer token.
  const token = process.env.MCP_TOKEN;
  const requestInit = token ? { headers: { Authorization: `Bearer ${token}` } } : undefined;
  transport = new StreamableHTTPClientTransport(new URL(target), { requestInit });
} else {
  console.error(`unknown mode ${mode}`);
  process.exit(2);
}

const client = new Client({ name: "julyfs-mcpclient", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
const results = [];
for (const c of spec.calls ?? []) {
  let result;
  try {
    result = await client.callTool({ name: c.name, arguments: c.arguments });
  } catch (e) {
    // A protocol-level error (the SDK threw): record it for the test.
    result = { thrown: String(e?.message ?? e) };
  }
  results.push({ name: c.name, arguments: c.arguments, result });
}
let bench;
if (spec.bench) {
  const { name, arguments: args, n } = spec.bench;
  for (let i = 0; i < Math.min(n, 50); i++) await client.callTool({ name, arguments: args }); // warm up
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const r = await client.callTool({ name, arguments: args });
    if (r.isError) throw new Error(`bench call failed: ${JSON.stringify(r)}`);
  }
  const ns = Number(process.hrtime.bigint() - start);
  bench = { name, n, nsPerCall: ns / n };
}
const out = {
  server: client.getServerVersion(),
  instructions: client.getInstructions(),
  tools,
  results,
  bench,
};
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
