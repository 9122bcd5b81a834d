#!/usr/bin/env node
// The package's builds side by side with gpt-tokenizer, one encoding each: download, cold start
// (Node and Chromium), Node RSS after the first count and prose throughput, for `ctxguard`
// (both vocabularies), `ctxguard/o200k`, `ctxguard/cl100k` and the counting-only
// `ctxguard/o200k/count`, `ctxguard/cl100k/count`. Each build goes through the same harness as
// `make bench` (benches/run.mjs --pkg DIR --inputs prose --libs ctxguard,gpt-tokenizer), one run
// per build and encoding, its raw results in benches/results/builds/ (latest.json, the last full
// run's, is left alone).
//
//   node benches/builds.mjs [--quick] [--write]
//
// Prints a Markdown table (ratios are ctxguard ÷ gpt-tokenizer within the same run); `--write`
// also puts it in BENCHMARKS.md's block "builds". Chromium loads both libraries bundled and
// minified by rolldown, as run.mjs does (benches/lib/bundle.mjs); Node loads them as published.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { heldRss } from './lib/report.mjs';
import { writeSection } from './lib/section.mjs';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const scratch = path.join(ROOT, 'benches', 'results', 'builds');
const quick = process.argv.includes('--quick');
const write = process.argv.includes('--write');
const builds = [
  ['ctxguard', 'pkg', 'o200k_base'],
  ['ctxguard', 'pkg', 'cl100k_base'],
  ['ctxguard/o200k', 'pkg/o200k', 'o200k_base'],
  ['ctxguard/cl100k', 'pkg/cl100k', 'cl100k_base'],
  ['ctxguard/o200k/count', 'pkg/o200k/count', 'o200k_base'],
  ['ctxguard/cl100k/count', 'pkg/cl100k/count', 'cl100k_base'],
];
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
fs.mkdirSync(scratch, { recursive: true });
const rows = [];
const load = [os.loadavg()[0]];
try {
  for (const [name, dir, enc] of builds) {
    if (!fs.existsSync(path.join(ROOT, dir, 'node.js'))) throw new Error(`${dir}/node.js is missing: build the package first (scripts/build-pkg.sh)`);
    process.stderr.write(`[builds] ${name}, ${enc}\n`);
    const out = path.join(scratch, `${name.replace(/\//g, '-')}-${enc}.json`);
    const args = ['benches/run.mjs', '--pkg', dir, '--encodings', enc, '--inputs', 'prose', '--libs', 'ctxguard,gpt-tokenizer', '--no-write', '--results', out];
    if (quick) args.push('--quick');
    execFileSync(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    const r = JSON.parse(fs.readFileSync(out, 'utf8'));
    const cold = (rt, lib) => median(r.cold[rt][lib][enc].samples);
    const rss = (lib) => heldRss(r.memory.node[lib][enc].samples) / 1e6;
    // ctxguard's median MB/s on unseen prose, and the median of its per-round ratios to
    // gpt-tokenizer within the pair (as in the generated tables).
    const mbps = (rt) => {
      const pair = r.throughput[rt]?.pairs?.[enc]?.ctxguard;
      const p = pair?.libs?.ctxguard?.inputs?.prose;
      return p ? { mbps: median(p.samples.map((s) => s.mbps)), ratio: median(pair.ratios.prose) } : null;
    };
    rows.push({
      name,
      enc,
      gzip: r.download.ctxguard[enc].gzip / 1024,
      gzipPeer: r.download['gpt-tokenizer'][enc].gzip / 1024,
      brotli: r.download.ctxguard[enc].brotli / 1024,
      brotliPeer: r.download['gpt-tokenizer'][enc].brotli / 1024,
      coldNode: cold('node', 'ctxguard'),
      coldNodePeer: cold('node', 'gpt-tokenizer'),
      coldChromium: cold('chromium', 'ctxguard'),
      coldChromiumPeer: cold('chromium', 'gpt-tokenizer'),
      rss: rss('ctxguard'),
      rssPeer: rss('gpt-tokenizer'),
      proseNode: mbps('node'),
      proseChromium: mbps('chromium'),
    });
  }
} finally {
  load.push(os.loadavg()[0]);
}
const x = (a, b) => `${(a / b).toFixed(2)}×`;
const speed = (t) => (t ? `${t.mbps.toFixed(1)} (${t.ratio.toFixed(1)}×)` : '–');
const out = [];
out.push(`Command: \`node benches/builds.mjs${quick ? ' --quick' : ''}\` (${new Date().toISOString()}; load average ${load.map((l) => l.toFixed(1)).join(' → ')}, ${os.cpus().length} cores). Each build against gpt-tokenizer in the same run of \`benches/run.mjs --inputs prose\` (÷ = ctxguard ÷ gpt-tokenizer); Chromium loads both bundled and minified by rolldown, Node as published.`);
out.push('');
out.push('| build | enc | gzip download (÷) | brotli download (÷) | cold start, Node (÷) | cold start, Chromium (÷) | Node RSS held after the first count (÷) | prose MB/s, Node (×) | prose MB/s, Chromium (×) |');
out.push('|---|---|---:|---:|---:|---:|---:|---:|---:|');
for (const r of rows) {
  out.push(
    `| \`${r.name}\` | ${r.enc.replace('_base', '')} | ${r.gzip.toFixed(0)} KB (${x(r.gzip, r.gzipPeer)}) | ${r.brotli.toFixed(0)} KB (${x(r.brotli, r.brotliPeer)}) | ${r.coldNode.toFixed(0)} ms (${x(r.coldNode, r.coldNodePeer)}) | ` +
      `${r.coldChromium.toFixed(0)} ms (${x(r.coldChromium, r.coldChromiumPeer)}) | ${r.rss.toFixed(1)} MB (${x(r.rss, r.rssPeer)}) | ${speed(r.proseNode)} | ${speed(r.proseChromium)} |`,
  );
}
console.log(out.join('\n'));
if (write) {
  writeSection(path.join(ROOT, 'BENCHMARKS.md'), 'builds', out.join('\n'));
  process.stderr.write('[builds] wrote the block "builds" of BENCHMARKS.md\n');
}
