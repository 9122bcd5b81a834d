// Node cold start of ctxguard package builds side by side with gpt-tokenizer, through the
// benchmark suite's own cold-start phase (benches/lib/phases.mjs: fresh process, import + first
// count of the suite's sample sentence). Rounds interleave the packages and the peer. Node loads
// what Node users load, unbundled: each build's node.js and gpt-tokenizer as published (the
// Chromium counterpart, coldstart-vocab-chromium.mjs, bundles both as a page ships them).
//
//   node benches/coldstart-vocab-peers.mjs [--runs 7] label=pkgdir [label=pkgdir ...]
import path from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import * as P from './lib/phases.mjs';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
let runs = 7;
const pkgs = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--runs') runs = Number(args[++i]);
  else { const [label, dir] = args[i].split('='); pkgs.push({ label, dir: path.resolve(dir) }); }
}
const envOf = (dir) => ({ runtime: 'node', ctxguard: { entry: pathToFileURL(path.join(dir, 'node.js')).href, init: 'none', file: 'node.js' } });
const encodings = ['o200k_base', 'cl100k_base'];
const rows = {};
const add = (label, out) => {
  for (const [, byEnc] of Object.entries(out)) for (const [enc, cell] of Object.entries(byEnc)) {
    const r = ((rows[label] ??= {})[enc] ??= { samples: [], errors: [] });
    r.samples.push(...cell.samples); r.errors.push(...cell.errors);
  }
};
for (let r = 0; r < runs; r++) {
  add('gpt-tokenizer', await P.coldNode({ libs: ['gpt-tokenizer'], encodings, samples: 1, env: envOf(pkgs[0].dir), cwd: BENCH_DIR }));
  for (const p of pkgs) add(p.label, await P.coldNode({ libs: ['ctxguard'], encodings, samples: 1, env: envOf(p.dir), cwd: BENCH_DIR }));
}
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const k = s.length >> 1; return s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2; };
console.log(`node ${process.version}, ${runs} fresh processes per cell, median ms (÷ gpt-tokenizer)`);
console.log('| library | o200k | cl100k |\n|---|---:|---:|');
const gt = Object.fromEntries(encodings.map((e) => [e, median(rows['gpt-tokenizer'][e].samples)]));
for (const [label, byEnc] of Object.entries(rows)) {
  const cells = encodings.map((e) => {
    const c = byEnc[e];
    if (!c || !c.samples.length) return `— ${c?.errors?.[0] ?? ''}`.slice(0, 40);
    const m = median(c.samples);
    return `${m.toFixed(1)}${label === 'gpt-tokenizer' ? '' : ` (${(m / gt[e]).toFixed(2)}×)`}`;
  });
  console.log(`| ${label} | ${cells.join(' | ')} |`);
}
