#!/usr/bin/env node
// Gemini's tokenizer in ctxguard (`ctxguard/gemini`, WebAssembly) beside Google's own JavaScript
// one (`@google/genai/tokenizer`, Node only: its browser build throws "not yet implemented"):
// throughput on prose, code, CJK, JSON and the adversarial inputs, the first count, and what a
// page downloads. Both count the same texts; the script checks that the counts agree.
//
//   node benches/gemini-tokenizer.mjs [--runs N] [--write]
//
// Needs pkg/gemini (scripts/build-pkg.sh) and the model (scripts/fetch-gemma3-model.sh, run by
// scripts/setup.sh). @google/genai (pinned below) is installed on first use into
// target/bench-genai/ with npm, and finds the model in its own cache directory (put there from
// target/gemma3/), so it downloads nothing. Medians of N runs (default 7) after one warm-up run;
// ratios are @google/genai's time over ctxguard's. Prints Markdown (14 lines); `--write` also puts
// it in BENCHMARKS.md's block "gemini".
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { generateInputs } from './lib/inputs.mjs';
import { writeSection } from './lib/section.mjs';

const GENAI_VERSION = '3.3.0';
const MODEL_URL =
  'https://raw.githubusercontent.com/google/gemma_pytorch/014acb7ac4563a5f77c76d7ff98f31b568c16508/tokenizer/gemma3_cleaned_262144_v2.spiece.model';
const MODEL_SHA256 = '1299c11d7cf632ef3b4e11937501358ada021bbdf7c47638d13c0ee982f2e79c';
const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const argRuns = process.argv.indexOf('--runs');
const RUNS = argRuns > 0 ? Number(process.argv[argRuns + 1]) : 7;
const WRITE = process.argv.includes('--write');
const load0 = os.loadavg()[0];
const MODEL = 'gemini-2.5-pro';

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const kb = (n) => `${(n / 1024).toFixed(0)} KB`;
const gz = (b) => gzipSync(b, { level: 9 }).length;
const br = (b) => brotliCompressSync(b, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: b.length } }).length;

// ---- The two tokenizers.

const pkgDir = path.join(ROOT, 'pkg', 'gemini');
if (!fs.existsSync(path.join(pkgDir, 'node.js'))) throw new Error('pkg/gemini is missing: run scripts/build-pkg.sh');
const modelFile = path.join(ROOT, 'target', 'gemma3', 'gemma3_cleaned_262144_v2.spiece.model');
if (!fs.existsSync(modelFile)) throw new Error('the model is missing: run scripts/fetch-gemma3-model.sh');
const modelBytes = fs.readFileSync(modelFile);
if (crypto.createHash('sha256').update(modelBytes).digest('hex') !== MODEL_SHA256) throw new Error(`${modelFile} is not the pinned model`);

const genaiDir = path.join(ROOT, 'target', 'bench-genai');
const genaiEntry = path.join(genaiDir, 'node_modules', '@google', 'genai', 'dist', 'tokenizer', 'node.mjs');
if (!fs.existsSync(genaiEntry) || JSON.parse(fs.readFileSync(path.join(genaiDir, 'node_modules', '@google', 'genai', 'package.json'))).version !== GENAI_VERSION) {
  fs.mkdirSync(genaiDir, { recursive: true });
  execFileSync('npm', ['install', '--prefix', genaiDir, '--no-audit', '--no-fund', '--loglevel=error', `@google/genai@${GENAI_VERSION}`], { stdio: 'inherit' });
}
// @google/genai's cache: <tmp>/vertexai_tokenizer_model/<sha1 of the model URL>, checked by sha256.
const cacheDir = path.join(os.tmpdir(), 'vertexai_tokenizer_model');
fs.mkdirSync(cacheDir, { recursive: true });
fs.writeFileSync(path.join(cacheDir, crypto.createHash('sha1').update(MODEL_URL).digest('hex')), modelBytes);

let t0 = performance.now();
const ctxguard = await import(pathToFileURL(path.join(pkgDir, 'node.js')).href);
ctxguard.countTokens('warm', { model: MODEL });
const ctxFirst = performance.now() - t0;
t0 = performance.now();
const { LocalTokenizer } = await import(pathToFileURL(genaiEntry).href);
const genai = new LocalTokenizer(MODEL);
await genai.countTokens('warm');
const genaiFirst = performance.now() - t0;

const counters = {
  ctxguard: async (text) => ctxguard.countTokens(text, { model: MODEL }),
  '@google/genai': async (text) => (await genai.countTokens(text)).totalTokens,
};

// ---- Inputs: the benchmark's own (benches/lib/inputs.mjs), two runs of one character among them.

const { texts } = generateInputs();
const MB = 1_000_000;
const inputs = [
  ['prose', texts.prose],
  ['code', texts.code],
  ['cjk', texts.cjk],
  ['minjson', texts.minjson],
  ['base64 data URL (first 1 MB)', texts.base64.slice(0, MB)],
  ['random letters', texts.letters],
  ['random base64', texts.b64raw],
  ["run of 'a'", 'a'.repeat(MB)],
  ['run of spaces', ' '.repeat(MB)],
];

const rows = [];
for (const [name, text] of inputs) {
  const bytes = Buffer.byteLength(text);
  const row = { name, bytes, ms: {}, count: {} };
  for (const [lib, count] of Object.entries(counters)) {
    row.count[lib] = await count(text);
    const times = [];
    for (let i = 0; i < RUNS; i++) {
      const t = performance.now();
      await count(text);
      times.push(performance.now() - t);
    }
    row.ms[lib] = median(times);
  }
  rows.push(row);
  process.stderr.write(`${name}: ${row.ms.ctxguard.toFixed(1)} ms / ${row.ms['@google/genai'].toFixed(1)} ms\n`);
}

// ---- Download: what a page loads for each.

const entryFiles = ['ctxguard_wasm_bg.wasm', 'index.js'].map((f) => fs.readFileSync(path.join(pkgDir, f)));
const ctxBytes = Buffer.concat(entryFiles);
const genaiJs = fs.readFileSync(genaiEntry);

const mbps = (bytes, ms) => (bytes / 1e6 / (ms / 1e3)).toFixed(1);
const out = [];
out.push(`Command: \`node benches/gemini-tokenizer.mjs --runs ${RUNS}\` (${new Date().toISOString()}; Node ${process.version}, ${os.cpus().length} cores, load average ${load0.toFixed(1)} → ${os.loadavg()[0].toFixed(1)}). Model ${MODEL}: \`ctxguard/gemini\` (wasm) against @google/genai ${GENAI_VERSION} \`LocalTokenizer.countTokens\` (JavaScript, Node only), same process; medians of ${RUNS} runs after a warm-up; ÷ = @google/genai's time ÷ ctxguard's.`);
out.push('');
out.push('| input | ctxguard ms (MB/s) | @google/genai ms (MB/s) | ÷ | counts |');
out.push('|---|---:|---:|---:|---|');
for (const r of rows) {
  const same = r.count.ctxguard === r.count['@google/genai'] ? `equal (${r.count.ctxguard})` : `**differ** ${r.count.ctxguard} / ${r.count['@google/genai']}`;
  out.push(
    `| ${r.name} | ${r.ms.ctxguard.toFixed(1)} (${mbps(r.bytes, r.ms.ctxguard)}) | ${r.ms['@google/genai'].toFixed(1)} (${mbps(r.bytes, r.ms['@google/genai'])}) | ${(r.ms['@google/genai'] / r.ms.ctxguard).toFixed(2)}× | ${same} |`,
  );
}
out.push('');
out.push(
  `First count (import + vocabulary + one count; ctxguard first): ctxguard ${ctxFirst.toFixed(0)} ms, @google/genai ${genaiFirst.toFixed(0)} ms (model read from its cache). ` +
    `Download: ctxguard/gemini's .wasm + browser entry ${kb(gz(ctxBytes))} gzip, ${kb(br(ctxBytes))} brotli (pipeline included); @google/genai fetches the gemma3 model at first use, ${kb(gz(modelBytes))} gzip, ${kb(br(modelBytes))} brotli, ` +
    `plus its dist/tokenizer/node.mjs ${kb(gz(genaiJs))} gzip and dependencies.`,
);
console.log(out.join('\n'));
if (WRITE) {
  writeSection(path.join(ROOT, 'BENCHMARKS.md'), 'gemini', out.join('\n'));
  process.stderr.write('wrote the block "gemini" of BENCHMARKS.md\n');
}
