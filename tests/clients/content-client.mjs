// The official TypeScript SDK's Client against `ringmcp gateway` (tests/integration/content.rs):
// injected instructions in results flagged, redacted and blocked as each backend's policy says,
// and after the flagged result a destructive call on another backend asks the client
// (elicitation), whose decline leaves that backend untouched.
//
// Usage: node content-client.mjs SDK_DIR GATEWAY_BIN CONFIG ROOT INJECTION
// Prints "ok STEP" per step; the first failed check throws (exit 1).

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";

const [sdkDir, bin, config, root, injection] = process.argv.slice(2);
const sdk = (p) => import(path.join(sdkDir, "dist/esm", p));
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const types = await sdk("types.js");

const client = new Client({ name: "ts-content-test", version: "1.0.0" }, { capabilities: { elicitation: {} } });
const asked = [];
client.setRequestHandler(types.ElicitRequestSchema, async (req) => {
  asked.push(req.params.message);
  return { action: "decline" };
});
await client.connect(new StdioClientTransport({ command: bin, args: ["gateway", "--config", config], stderr: "inherit" }));
const ok = (step) => console.log(`ok ${step}`);
const text = (r) => r.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");

let r = await client.callTool({ name: "flagged__echo", arguments: { text: injection } });
assert.equal(r._meta?.["io.ringmcp/untrusted"]?.action, "flag", JSON.stringify(r));
assert.match(text(r), /\[ringmcp warning\]/);
ok("flagged");
r = await client.callTool({ name: "redacted__echo", arguments: { text: injection } });
assert.doesNotMatch(text(r), /ignore all previous/);
assert.match(text(r), /parcel left the depot/);
assert.equal(r._meta?.["io.ringmcp/untrusted"]?.action, "redact", JSON.stringify(r));
ok("redacted");
r = await client.callTool({ name: "blocked__echo", arguments: { text: injection } });
assert.equal(r.isError, true, JSON.stringify(r));
assert.doesNotMatch(text(r), /ignore all previous/);
ok("blocked");

const target = path.join(root, "after.txt");
await assert.rejects(client.callTool({ name: "fs__write_file", arguments: { path: target, content: "x" } }));
assert.equal(asked.length, 1, `asked: ${asked}`);
assert.match(asked[0], /untrusted/);
assert.ok(!fs.existsSync(target), "a declined call reached the server");
ok("declined after untrusted content");

await client.close();
ok("closed");
