#!/usr/bin/env node
// `measure` on the 2,000-message conversation against counting its text, with both sides cold in
// the same way: alternating fresh Node processes, each loading the vocabulary with one short
// count, then timing either `new ContextGuard().measure(conversation)` or countTokens on each of
// its strings (nothing of either path compiled before). The harness's from-cold row
// (benches/run.mjs) instead warms countTokens first and then times measure's first call.
//
//   node benches/measure-cold.mjs [DIR] [--encoding o200k_base] [--pairs 7]
//
// DIR is a built package (default pkg/). Prints every sample and the medians.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const opt = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : def;
};
const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

if (process.argv[2] === 'child') {
  const [, , , mode, dir, encoding] = process.argv;
  const mod = await import(pathToFileURL(path.resolve(dir, 'node.js')).href);
  const { generateInputs } = await import('./lib/inputs.mjs');
  const { messageTexts, MODEL_FOR } = await import('./lib/measure.mjs');
  const { chat } = generateInputs({ variant: 0 });
  // Read back from JSON text, as the harness reads its input files.
  const messages = JSON.parse(JSON.stringify(Array.isArray(chat) ? chat : chat.messages));
  const opts = { encoding };
  mod.countTokens('hello', opts);
  await new Promise((r) => setTimeout(r, 200));
  const t0 = performance.now();
  if (mode === 'count') {
    for (const m of messages) for (const s of messageTexts(m)) mod.countTokens(s, opts);
  } else {
    new mod.ContextGuard({ model: MODEL_FOR[encoding] }).measure(messages);
  }
  console.log(performance.now() - t0);
} else {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const dir = process.argv[2] && !process.argv[2].startsWith('--') ? process.argv[2] : path.join(here, '..', 'pkg');
  const encoding = opt('encoding', 'o200k_base');
  const pairs = Number(opt('pairs', '7'));
  const t = { measure: [], count: [] };
  for (let i = 0; i < pairs; i++) {
    for (const mode of i % 2 ? ['count', 'measure'] : ['measure', 'count']) {
      const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), 'child', mode, dir, encoding], { cwd: here, encoding: 'utf8' });
      t[mode].push(Number(out.trim().split('\n').pop()));
    }
    console.log(`pair ${i + 1}: measure ${t.measure.at(-1).toFixed(1)} ms, count ${t.count.at(-1).toFixed(1)} ms`);
  }
  const m = median(t.measure);
  const c = median(t.count);
  console.log(`${encoding}: measure ${m.toFixed(1)} ms, count ${c.toFixed(1)} ms (medians of ${pairs}); ratio of medians ${(m / c).toFixed(3)}`);
}
