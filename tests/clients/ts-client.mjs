// The official TypeScript SDK's Client against `ringmcp gateway` (tests/integration/gateway.rs).
//
// Usage: node ts-client.mjs SDK_DIR stdio GATEWAY_BIN CONFIG [EXTRA_ARGS...]
//        node ts-client.mjs SDK_DIR http URL TOKEN
// Runs the scenario below step by step, printing "ok STEP" for each; the first failed check
// throws (exit 1) with what was expected and what came.

import assert from "node:assert/strict";
import path from "node:path";

const [sdkDir, mode, ...rest] = process.argv.slice(2);
const sdk = (p) => import(path.join(sdkDir, "dist/esm", p));
const { Client } = await sdk("client/index.js");
const types = await sdk("types.js");

const client = new Client(
  { name: "ts-sdk-test", version: "1.0.0" },
  { capabilities: { sampling: {}, elicitation: {} } },
);
let sampled = null;
client.setRequestHandler(types.CreateMessageRequestSchema, async (req) => {
  sampled = req.params;
  return { role: "assistant", content: { type: "text", text: "sampled by the TS client" }, model: "test-model", stopReason: "endTurn" };
});
// The gateway asks for approval of calls its policy holds (open-world tools, by default) by
// elicitation: allow those once; decline every other elicitation.
let elicited = null;
const approvals = [];
client.setRequestHandler(types.ElicitRequestSchema, async (req) => {
  if (req.params.requestedSchema?.properties?.decision) {
    approvals.push(req.params.message);
    return { action: "accept", content: { decision: "once" } };
  }
  elicited = req.params;
  return { action: "decline" };
});

let transport;
if (mode === "stdio") {
  const { StdioClientTransport } = await sdk("client/stdio.js");
  const [bin, config, ...extra] = rest;
  transport = new StdioClientTransport({ command: bin, args: ["gateway", "--config", config, ...extra], stderr: "inherit" });
} else {
  const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
  const [url, token] = rest;
  transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
}
await client.connect(transport);
const ok = (step) => console.log(`ok ${step}`);
ok(`connected ${client.getServerVersion().name}`);

// Every tool, page by page (the config sets a small page size).
const tools = [];
let cursor, pages = 0;
do {
  const page = await client.listTools(cursor ? { cursor } : {});
  tools.push(...page.tools);
  cursor = page.nextCursor;
  pages++;
} while (cursor);
const names = tools.map((t) => t.name);
assert.ok(pages > 1, `expected several pages, got ${pages}`);
for (const n of ["ringmcp__status", "ref__echo", "everything__echo", "fs__list_directory", "py__add"]) {
  assert.ok(names.includes(n), `${n} missing from ${names.join(", ")}`);
}
assert.ok(names.every((n) => /^[A-Za-z0-9_-]{1,64}$/.test(n)), "names within ^[A-Za-z0-9_-]{1,64}$");
ok(`listed ${tools.length} tools in ${pages} pages`);

// Three different real backends.
let r = await client.callTool({ name: "everything__echo", arguments: { message: "hi there" } });
assert.match(r.content[0].text, /hi there/);
r = await client.callTool({ name: "py__add", arguments: { a: 2, b: 40 } });
assert.equal(r.content[0].text, "42");
r = await client.callTool({ name: "fs__list_directory", arguments: { path: process.env.GW_ROOT } });
assert.match(r.content[0].text, /hello\.txt/);
r = await client.callTool({ name: "ref__echo", arguments: { text: "héllo" } });
assert.equal(r.content[0].text, "héllo");
ok("called tools on four backends");

// A resource and a prompt.
const resources = (await client.listResources()).resources;
const readme = resources.find((x) => x.uri.startsWith("ringmcp://reference"));
assert.ok(readme, `the reference server's README among ${resources.map((x) => x.uri).join(", ")}`);
const read = await client.readResource({ uri: readme.uri });
assert.match(read.contents[0].text, /reference/i);
const status = await client.readResource({ uri: "ringmcp://status" });
assert.match(status.contents[0].text, /"state": "up"/);
const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
assert.ok(prompts.includes("ref__greet"), prompts.join(", "));
const prompt = await client.getPrompt({ name: "ref__greet", arguments: { name: "Ada" } });
assert.match(prompt.messages[0].content.text, /Hello, Ada!/);
ok("read a resource and got a prompt");

// Progress from server-everything's long-running operation.
const progress = [];
r = await client.callTool(
  { name: "everything__trigger-long-running-operation", arguments: { duration: 1, steps: 3 } },
  undefined,
  { onprogress: (p) => progress.push(p) },
);
assert.ok(progress.length >= 2, `progress notifications: ${JSON.stringify(progress)}`);
ok(`received ${progress.length} progress notifications`);

// Cancel a slow call; the backend is told.
const controller = new AbortController();
const slow = client.callTool({ name: "ref__slow", arguments: { ms: 30000 } }, undefined, { signal: controller.signal });
setTimeout(() => controller.abort("changed my mind"), 300);
await assert.rejects(slow);
// The backend's own list of the cancellations it received: a JSON array with one entry, asked
// again until it has it (the notification crosses the gateway on its own time).
let seen = [];
for (let i = 0; i < 100 && seen.length === 0; i++) {
  r = await client.callTool({ name: "ref__cancelled", arguments: {} });
  assert.ok(!r.isError, `ref__cancelled answered: ${JSON.stringify(r)}`);
  seen = JSON.parse(r.content[0].text);
  assert.ok(Array.isArray(seen), `a JSON array: ${r.content[0].text}`);
  if (seen.length === 0) await new Promise((res) => setTimeout(res, 100));
}
assert.ok(seen.length >= 1, `the backend saw the cancellation: ${JSON.stringify(seen)}`);
ok("cancelled a call");

// Sampling and elicitation, asked by server-everything, answered here.
r = await client.callTool({ name: "everything__trigger-sampling-request", arguments: { prompt: "say hi", maxTokens: 20 } });
assert.ok(sampled, "the sampling request reached the client");
assert.match(JSON.stringify(r.content), /sampled by the TS client/);
r = await client.callTool({ name: "everything__trigger-elicitation-request", arguments: {} });
assert.ok(elicited, "the elicitation request reached the client");
assert.match(JSON.stringify(r.content), /declin/i);
assert.ok(approvals.some((m) => m.includes("trigger-sampling-request")), `approval asked: ${approvals}`);
ok(`answered sampling and elicitation (and ${approvals.length} approvals)`);

// A policy denial is a JSON-RPC error naming the rule.
await assert.rejects(
  client.callTool({ name: "fs__write_file", arguments: { path: `${process.env.GW_ROOT}/x.txt`, content: "x" } }),
  (e) => /write_file/.test(e.message) && /deny|denied|refused/i.test(e.message),
);
ok("policy denial");

// A 100 MB result, by reference, read in chunks.
r = await client.callTool({ name: "ref__blob", arguments: { bytes: 100_000_000 } });
const link = r.content.find((c) => c.type === "resource_link");
assert.ok(link, `a resource_link: ${JSON.stringify(r.content).slice(0, 300)}`);
assert.equal(link.size, 100_000_000);
const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
assert.ok(templates.some((t) => t.endsWith("{?offset,length}")), templates.join(", "));
let offset = 0, chunks = 0;
const pattern = "abcdefghijklmnopqrstuvwxyz0123456789";
while (offset < link.size) {
  const part = await client.readResource({ uri: `${link.uri}?offset=${offset}&length=${4 << 20}` });
  const bytes = Buffer.from(part.contents[0].blob, "base64");
  assert.ok(bytes.length > 0, `chunk at ${offset} is empty`);
  assert.equal(String.fromCharCode(bytes[0]), pattern[offset % 36], `byte ${offset}`);
  offset += bytes.length;
  chunks++;
}
assert.equal(offset, 100_000_000);
ok(`read the 100 MB result in ${chunks} chunks`);

// `--tool-search` (over stdio, where this script starts the gateway): the finder alone is
// listed; a search announces the grown list, and the found tool is listed and callable.
if (mode === "stdio") {
  const { StdioClientTransport } = await sdk("client/stdio.js");
  const [bin, config, ...extra] = rest;
  const search = new Client({ name: "ts-sdk-search", version: "1.0.0" }, { capabilities: {} });
  let changed;
  const listChanged = new Promise((resolve) => (changed = resolve));
  search.setNotificationHandler(types.ToolListChangedNotificationSchema, () => changed());
  await search.connect(new StdioClientTransport({
    command: bin, args: ["gateway", "--config", config, ...extra, "--tool-search"], stderr: "inherit",
  }));
  const listed = async () => (await search.listTools()).tools.map((t) => t.name);
  assert.deepEqual(await listed(), ["ringmcp__status", "ringmcp__find_tools"]);
  const f = await search.callTool({ name: "ringmcp__find_tools", arguments: { query: "add two numbers", k: 3 } });
  const found = f.structuredContent.tools.map((t) => t.name);
  assert.ok(found.includes("py__add"), `found ${found}`);
  await Promise.race([listChanged, new Promise((_, no) => {
    setTimeout(() => no(new Error("no tools/list_changed within 10 s")), 10_000).unref();
  })]);
  const now = await listed();
  assert.ok(found.every((n) => now.includes(n)), `${found} not all in ${now}`);
  const sum = await search.callTool({ name: "py__add", arguments: { a: 40, b: 2 } });
  assert.equal(sum.content[0].text, "42");
  await search.close();
  ok(`tool search: found ${found.length} tools, list_changed, listed and called`);
}

await client.close();
ok("closed");
