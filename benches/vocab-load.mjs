// Loadable vocabularies (docs/vocabularies.md): each file's download size (raw and gzip level 9)
// and, in fresh Node processes, the time `await loadVocabulary(name)` takes (read from disk,
// decode, build the tokenizer) and the first exact count after it; medians of RUNS processes,
// side by side in one run. Usage: node benches/vocab-load.mjs [runs] (after scripts/build-pkg.sh).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { VOCABULARIES } from '../src/js/surface.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = Number(process.argv[2] ?? 7);
const NAMES = VOCABULARIES;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const child = `
import { performance } from 'node:perf_hooks';
const t0 = performance.now();
const { countTokens, loadVocabulary, memoryStats } = await import('ctxguard');
const t1 = performance.now();
let loaded = 'ok';
try { await loadVocabulary(process.argv[1]); } catch (e) { loaded = e.code; }
const t2 = performance.now();
if (loaded === 'ok') countTokens('The quick brown fox jumps over the lazy dog.', { model: process.argv[2] });
const t3 = performance.now();
console.log(JSON.stringify({ loaded, importMs: t1 - t0, loadMs: t2 - t1, firstCountMs: t3 - t2, wasmBytes: memoryStats().wasmBytes }));
`;
const model = { llama3: 'llama3.1:8b', qwen3: 'qwen3:8b', 'deepseek-v3': 'deepseek-chat', 'mistral-tekken': 'open-mistral-nemo', 'mistral-spm-v3': 'mistral-large-2407', 'mistral-spm-v7': 'mistral-large-2411' };

console.log(`node ${process.version}, ${RUNS} processes per vocabulary, medians\n`);
console.log('| vocabulary | file | gzip | loadVocabulary | first count after | wasm memory after |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
for (const name of NAMES) {
  const file = readFileSync(join(root, 'pkg', 'vocab', `${name}.bin`));
  const gz = gzipSync(file, { level: 9 }).length;
  const runs = [];
  for (let i = 0; i < RUNS; i++) {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', child, name, model[name]], { cwd: root, encoding: 'utf8' });
    runs.push(JSON.parse(out.trim().split('\n').pop()));
  }
  const kb = (n) => `${(n / 1024).toFixed(0)} KB`;
  const ms = (k) => `${median(runs.map((r) => r[k])).toFixed(1)} ms`;
  const loaded = runs[0].loaded;
  const mem = `${(median(runs.map((r) => r.wasmBytes)) / 2 ** 20).toFixed(0)} MB`;
  console.log(loaded === 'ok'
    ? `| ${name} | ${kb(file.length)} | ${kb(gz)} | ${ms('loadMs')} | ${ms('firstCountMs')} | ${mem} |`
    : `| ${name} | ${kb(file.length)} | ${kb(gz)} | refused (${loaded}) | | |`);
}
