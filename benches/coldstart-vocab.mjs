// Cold start of the ctxguard package in fresh Node processes (issue 7, vocabulary section of
// BENCHMARKS.md): import (read + compile + instantiate the .wasm) and the first count (building
// the encoding's rank table), plus sizes and memory. Compares package directories side by side,
// runs interleaved. Node loads what Node users load: the package's node.js entry (it reads the
// .wasm from disk and instantiates it at import); a directory without node.js (a build from
// before it existed) gets the same steps by hand (glue, initSync, api.js).
//
//   node benches/coldstart-vocab.mjs [--runs 7] label=pkgdir [label=pkgdir ...]
//
// A package built without one of the encodings (Cargo features) gets no row for it.
//
// Each sample is a fresh `node` process running the child below; medians are reported.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { gzipSync, brotliCompressSync, constants as Z } from 'node:zlib';
import { resolve } from 'node:path';

const CHILD = `
const [dir, encoding, hasNodeEntry] = process.argv.slice(1);
const t0 = performance.now();
let api;
if (hasNodeEntry === 'yes') api = await import(dir + '/node.js');
else {
  const { readFileSync } = await import('node:fs');
  const glue = await import(dir + '/ctxguard_wasm.js');
  glue.initSync({ module: readFileSync(dir + '/ctxguard_wasm_bg.wasm') });
  api = await import(dir + '/api.js');
}
const t1 = performance.now();
let n;
try { n = api.countTokens('hello world', { encoding }); } catch (e) { console.log(JSON.stringify({ error: e.code })); process.exit(0); }
const t2 = performance.now();
const m = process.memoryUsage();
console.log(JSON.stringify({ n, importMs: t1 - t0, firstCountMs: t2 - t1, totalMs: t2 - t0,
  wasmMemory: api.memoryStats ? api.memoryStats().wasmBytes : NaN, rss: m.rss }));
`;

const args = process.argv.slice(2);
let runs = 7;
const pkgs = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--runs') runs = Number(args[++i]);
  else { const [label, dir] = args[i].split('='); pkgs.push({ label, dir: resolve(dir) }); }
}
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const k = s.length >> 1; return s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2; };

for (const p of pkgs) {
  const wasm = readFileSync(p.dir + '/ctxguard_wasm_bg.wasm');
  p.size = { raw: statSync(p.dir + '/ctxguard_wasm_bg.wasm').size, gzip: gzipSync(wasm, { level: 9 }).length,
    brotli: brotliCompressSync(wasm, { params: { [Z.BROTLI_PARAM_QUALITY]: 11 } }).length };
}
const samples = {};
for (let r = 0; r < runs; r++) {
  for (const encoding of ['o200k_base', 'cl100k_base']) {
    for (const p of pkgs) {
      const out = spawnSync(process.execPath, ['--input-type=module', '-e', CHILD, p.dir, encoding, existsSync(p.dir + '/node.js') ? 'yes' : 'no'], { encoding: 'utf8' });
      if (out.status !== 0) throw new Error(out.stderr);
      const s = JSON.parse(out.stdout);
      if (s.error) continue; // a build without this encoding
      (samples[`${p.label} ${encoding}`] ??= []).push(s);
    }
  }
}
console.log(`node ${process.version}, ${runs} fresh processes per row, medians (min–max of total)`);
console.log('| package | encoding | import ms | first count ms | import + first count ms | wasm memory MB | RSS MB |');
console.log('|---|---|---|---|---|---|---|');
for (const [key, ss] of Object.entries(samples)) {
  const [label, enc] = key.split(' ');
  const med = (f) => median(ss.map(f));
  const tot = ss.map((s) => s.totalMs);
  console.log(`| ${label} | ${enc} | ${med((s) => s.importMs).toFixed(1)} | ${med((s) => s.firstCountMs).toFixed(1)} | ${med((s) => s.totalMs).toFixed(1)} (${Math.min(...tot).toFixed(0)}–${Math.max(...tot).toFixed(0)}) | ${(med((s) => s.wasmMemory) / 1e6).toFixed(1)} | ${(med((s) => s.rss) / 1e6).toFixed(0)} |`);
}
console.log('\n| package | .wasm raw | gzip -9 | brotli 11 |\n|---|---|---|---|');
for (const p of pkgs) console.log(`| ${p.label} | ${(p.size.raw / 1e6).toFixed(2)} MB | ${(p.size.gzip / 1e6).toFixed(2)} MB | ${(p.size.brotli / 1e6).toFixed(2)} MB |`);
