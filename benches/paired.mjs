#!/usr/bin/env node
// Two builds of the package against each other, in alternating fresh Node processes (the machine
// is shared: a paired run is what shows a change of a few percent).
//
//   node benches/paired.mjs steady DIR_A DIR_B [--pairs N]   prepare after one new message, one guard,
//                                                            20 warm-up turns then 150 (median per process)
//   node benches/paired.mjs cold DIR_A DIR_B [--pairs N] [--encoding o200k_base]
//                                                            measure from cold ÷ countTokens on each string
//   node benches/paired.mjs both-cold DIR [--pairs N] [--encoding o200k_base]
//                                                            one build: measure against countTokens on each
//                                                            string, each first in its own process (vocabulary
//                                                            loaded by one short count, neither path run before)
//
// DIR is a built package (pkg/, or a copy of an older build). Prints one line per pair.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [mode, a, b] = process.argv.slice(2);
const opt = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : def;
};
const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

if (mode === 'child') {
  const [, , , kind, dir, encoding] = process.argv;
  const mod = await import(pathToFileURL(path.resolve(dir, 'node.js')).href);
  const { generateInputs } = await import('./lib/inputs.mjs');
  const { messageTexts, MODEL_FOR } = await import('./lib/measure.mjs');
  const chatOf = (v) => {
    const { chat } = generateInputs({ variant: v });
    return Array.isArray(chat) ? chat : chat.messages;
  };
  if (kind === 'steady') {
    let messages = chatOf(0);
    const g = new mod.ContextGuard({ model: 'gpt-4.1' });
    await g.prepare(messages);
    const ts = [];
    for (let i = 0; i < 170; i++) {
      messages = [...messages, { role: 'user', content: `Question number ${i}: what about the log above?` }];
      const t0 = performance.now();
      await g.prepare(messages);
      if (i >= 20) ts.push(performance.now() - t0);
      messages = [...messages, { role: 'assistant', content: `Answer ${i}: it shows a retry loop.` }];
    }
    console.log(median(ts).toFixed(2));
  } else {
    const opts = { encoding };
    const model = MODEL_FOR[encoding];
    const countEach = (msgs) => msgs.reduce((n, m) => n + messageTexts(m).reduce((k, s) => k + mod.countTokens(s, opts), 0), 0);
    if (kind === 'measure-first' || kind === 'count-first') {
      // Read back from JSON text, as the harness reads its input files.
      const messages = JSON.parse(JSON.stringify(chatOf(0)));
      mod.countTokens('hello', opts); // the vocabulary, nothing of either path
      await new Promise((r) => setTimeout(r, 200));
      const t0 = performance.now();
      if (kind === 'count-first') countEach(messages);
      else new mod.ContextGuard({ model }).measure(messages);
      console.log((performance.now() - t0).toFixed(1));
      process.exit(0);
    }
    countEach(chatOf(1)); // warm: code and vocabulary, another conversation
    const messages = chatOf(0);
    let t0 = performance.now();
    new mod.ContextGuard({ model }).measure(messages);
    const cold = performance.now() - t0;
    t0 = performance.now();
    countEach(messages);
    const base = performance.now() - t0;
    console.log(`${cold.toFixed(1)} ${base.toFixed(1)} ${(cold / base).toFixed(3)}`);
  }
  process.exit(0);
}

if (!(['steady', 'cold'].includes(mode) && a && b) && !(mode === 'both-cold' && a)) {
  console.error('usage: node benches/paired.mjs steady|cold DIR_A DIR_B [--pairs N] [--encoding o200k_base]\n       node benches/paired.mjs both-cold DIR [--pairs N] [--encoding o200k_base]');
  process.exit(2);
}
const pairs = Number(opt('pairs', 4));
const encoding = opt('encoding', 'o200k_base');
const child = (kind, dir) => execFileSync(process.execPath, [new URL(import.meta.url).pathname, 'child', kind, dir, encoding], { encoding: 'utf8' }).trim();
if (mode === 'both-cold') {
  const t = { 'measure-first': [], 'count-first': [] };
  for (let i = 0; i < pairs; i++) {
    for (const kind of i % 2 ? ['count-first', 'measure-first'] : ['measure-first', 'count-first']) t[kind].push(Number(child(kind, a)));
    console.log(`${i + 1}: measure ${t['measure-first'].at(-1)} ms, count ${t['count-first'].at(-1)} ms`);
  }
  const [m, c] = [median(t['measure-first']), median(t['count-first'])];
  console.log(`${encoding}: measure ${m.toFixed(1)} ms, count ${c.toFixed(1)} ms (medians of ${pairs}); ratio of medians ${(m / c).toFixed(3)}`);
  process.exit(0);
}
const run = (dir) => child(mode, dir);
console.log(mode === 'steady' ? 'pair: A ms | B ms (median prepare per process)' : 'pair: A cold ms, baseline ms, ratio | B ...');
for (let i = 0; i < pairs; i++) {
  // Alternate which build goes first.
  const [x, y] = i % 2 ? [run(b), run(a)].reverse() : [run(a), run(b)];
  console.log(`${i + 1}: ${x} | ${y}`);
}
