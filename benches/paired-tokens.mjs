// Two builds of the package counting the same text in one Node process, alternating which goes
// first, on the unseen variants (1-5, twice) of run.mjs's inputs (benches/.inputs/, written by
// `node benches/run.mjs`): per input, each build's median MB/s and the median of the paired
// ratios (speed of B ÷ speed of A). Counts are compared on every text.
//
//   node benches/paired-tokens.mjs DIR_A DIR_B [--encoding o200k_base]
//
// DIR is a built package (pkg/, or a copy of an older build).

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const argv = process.argv.slice(2);
const at = argv.indexOf('--encoding');
const enc = at >= 0 ? argv[at + 1] : 'o200k_base';
const [a, b] = argv.filter((x, i) => !x.startsWith('--') && (at < 0 || i !== at + 1));
const inputs = path.join(path.dirname(fileURLToPath(import.meta.url)), '.inputs');
const load = (dir) => import(pathToFileURL(path.resolve(dir, 'node.js')).href);
const A = await load(a);
const B = await load(b);
A.countTokens('warm up', { encoding: enc });
B.countTokens('warm up', { encoding: enc });
const median = (x) => [...x].sort((p, q) => p - q)[x.length >> 1];
for (const id of ['prose', 'code', 'cjk', 'minjson', 'letters', 'b64raw', 'spaces']) {
  const ratios = [];
  const speed = new Map([[A, []], [B, []]]);
  for (let round = 0; round < 2; round++) {
    for (let v = 1; v <= 5; v++) {
      const text = readFileSync(path.join(inputs, `${id}.${v}.txt`), 'utf8');
      const mb = Buffer.byteLength(text) / 1e6;
      const ms = new Map();
      const counts = new Map();
      for (const M of (v + round) % 2 ? [A, B] : [B, A]) {
        const t = performance.now();
        counts.set(M, M.countTokens(text, { encoding: enc }));
        ms.set(M, performance.now() - t);
      }
      if (counts.get(A) !== counts.get(B)) throw new Error(`${id}.${v}: the builds count differently`);
      speed.get(A).push((mb * 1000) / ms.get(A));
      speed.get(B).push((mb * 1000) / ms.get(B));
      ratios.push(ms.get(A) / ms.get(B));
    }
  }
  const f = (x) => median(x).toFixed(1);
  console.log(`${enc} ${id}: A ${f(speed.get(A))} MB/s, B ${f(speed.get(B))} MB/s, B ÷ A ${median(ratios).toFixed(3)} (${ratios.length} pairs)`);
}
