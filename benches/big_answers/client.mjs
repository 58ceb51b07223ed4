// PERFORMANCE.md, "P3b": one large `blob` answer received by the official TypeScript SDK client
// (`@modelcontextprotocol/sdk`, StdioClientTransport, default settings) from `ringmcp serve`.
//
//   node benches/big_answers/client.mjs --server PATH --bytes N [--timeout SECS] [--node-modules DIR]
//
// The SDK is loaded from DIR (default: $RINGMCP_DEPS/npm/node_modules, else .deps/npm/node_modules
// of this repo): ES modules ignore NODE_PATH, so it is imported by absolute path.
// Same contract as benches/big_answers.rs: spawn `PATH serve`, initialize, call `blob` once, check the
// text (length, first and last 36 characters), print one JSON line
// {"client","bytes","ok","seconds","error","init_seconds","cpu_seconds","peak_rss_kib"}.
// `seconds` runs from the call to the checked text; CPU and peak RSS are this process's own.
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath, pathToFileURL } from 'node:url';

const PATTERN = 'abcdefghijklmnopqrstuvwxyz0123456789';
const ENDS = 36;

function parseArgs(argv) {
    const here = path.dirname(fileURLToPath(import.meta.url));
    const deps = process.env.RINGMCP_DEPS ?? path.join(here, '..', '..', '.deps');
    const opts = { timeout: 300, nodeModules: path.join(deps, 'npm', 'node_modules') };
    for (let i = 0; i < argv.length; i += 2) {
        const [flag, value] = [argv[i], argv[i + 1]];
        if (value === undefined) throw new Error(`${flag} needs a value`);
        if (flag === '--server') opts.server = value;
        else if (flag === '--bytes') opts.bytes = Number(value);
        else if (flag === '--timeout') opts.timeout = Number(value);
        else if (flag === '--node-modules') opts.nodeModules = value;
        else throw new Error(`unknown flag ${flag}`);
    }
    if (!opts.server || !Number.isSafeInteger(opts.bytes)) {
        throw new Error('usage: client.mjs --server PATH --bytes N [--timeout SECS] [--node-modules DIR]');
    }
    return opts;
}

const cpuSeconds = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1e6;
};

function expected(from, to) {
    let s = '';
    for (let i = from; i < to; i++) s += PATTERN[i % PATTERN.length];
    return s;
}

// The blob text is ASCII, so characters and bytes coincide.
function checkText(text, n) {
    if (text.length !== n) return `received ${text.length} characters of text, expected ${n}`;
    const tail = Math.max(0, n - ENDS);
    if (text.slice(0, Math.min(ENDS, n)) !== expected(0, Math.min(ENDS, n))) {
        return 'the first characters differ from the blob pattern';
    }
    if (text.slice(tail) !== expected(tail, n)) return 'the last characters differ from the blob pattern';
    return null;
}

// ['a', 'a', 'b'] -> 'a (2 times) | b': the SDK reports its read-buffer overflow once per chunk.
function collapse(messages) {
    const runs = [];
    for (const m of messages) {
        if (runs.length && runs[runs.length - 1][0] === m) runs[runs.length - 1][1]++;
        else runs.push([m, 1]);
    }
    return runs.map(([m, k]) => (k > 1 ? `${m} (${k} times)` : m)).join(' | ');
}

function noAnswer(limit, cpu) {
    return cpu > limit / 2
        ? `did not finish in ${limit.toFixed(0)} s (client busy: ${cpu.toFixed(1)} s CPU)`
        : `hung: no answer after ${limit.toFixed(0)} s (client idle: ${cpu.toFixed(1)} s CPU)`;
}

async function main() {
    const opts = parseArgs(process.argv.slice(2));
    const sdk = (p) => import(pathToFileURL(path.join(opts.nodeModules, '@modelcontextprotocol/sdk/dist/esm', p)).href);
    const { Client } = await sdk('client/index.js');
    const { StdioClientTransport } = await sdk('client/stdio.js');

    const out = { client: 'ts-sdk', bytes: opts.bytes, ok: false, seconds: null, error: null, init_seconds: null };
    // What the SDK reports through onerror (e.g. its read buffer overflowing) goes with a failure.
    const reported = [];
    const client = new Client({ name: 'ringmcp-big-answers', version: '0' });
    client.onerror = (e) => reported.push(String(e?.message ?? e));
    const transport = new StdioClientTransport({ command: opts.server, args: ['serve'], stderr: 'inherit' });
    let started = performance.now();
    try {
        await client.connect(transport);
        out.init_seconds = (performance.now() - started) / 1000;
        const cpu = cpuSeconds();
        started = performance.now();
        let timer;
        const limit = new Promise((resolve) => {
            timer = setTimeout(() => resolve('timeout'), opts.timeout * 1000);
        });
        // The SDK's own request timeout (60 s by default) is set past ours, so ours decides.
        const call = client.callTool({ name: 'blob', arguments: { bytes: opts.bytes } }, undefined, {
            timeout: (opts.timeout + 60) * 1000,
        });
        const result = await Promise.race([call, limit]);
        clearTimeout(timer);
        if (result === 'timeout') {
            out.error = noAnswer(opts.timeout, cpuSeconds() - cpu);
        } else if (result.isError) {
            out.error = 'tool error';
        } else if (result.content?.length !== 1 || result.content[0].type !== 'text') {
            out.error = `unexpected content: ${JSON.stringify(result.content?.map((c) => c.type))}`;
        } else {
            out.error = checkText(result.content[0].text, opts.bytes);
        }
        out.seconds = (performance.now() - started) / 1000;
    } catch (e) {
        out.seconds = (performance.now() - started) / 1000;
        out.error = String(e?.message ?? e);
    }
    if (out.error && reported.length) out.error += `; SDK onerror: ${collapse(reported)}`;
    out.ok = out.error === null;
    out.cpu_seconds = cpuSeconds();
    out.peak_rss_kib = process.resourceUsage().maxRSS;
    process.stdout.write(JSON.stringify(out) + '\n');
    // Closing waits for the server (up to 2 s, then SIGTERM); not measured.
    await Promise.race([client.close().catch(() => {}), new Promise((r) => setTimeout(r, 5000).unref())]);
    process.exit(0);
}

main().catch((e) => {
    process.stderr.write(`client.mjs: ${e?.stack ?? e}\n`);
    process.exit(2);
});
