// The pipeline on the benchmark's 2,000-message, ~1.5M-token conversation, in Node:
// guardSources (layer 1), prepare with an instant summarizer (layer 1 + the one-pass trim +
// checkpoint + sanitation), and measure after one new message. Medians of N fresh guards; then
// prepare and measure per turn on one guard over 30 turns (steady state).
//
//   node benches/pipeline.mjs [--runs N]
//
// Prints a Markdown table to paste into BENCHMARKS.md ("Pipeline" section).
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { ContextGuard, countMessages } from 'ctxguard';
import { generateInputs } from './lib/inputs.mjs';

const runs = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 5;
const { chat } = generateInputs({ variant: 0 });
const messages = Array.isArray(chat) ? chat : chat.messages;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const time = async (fn) => {
  const t0 = performance.now();
  const r = await fn();
  return [performance.now() - t0, r];
};

const total = countMessages(messages, { model: 'gpt-4.1' }).total;
const rows = { guardSources: [], prepare: [], measureGrown: [], countOnce: [], prepareGrown: [], guardGrown: [], measureFirst: [] };
let last;
for (let i = 0; i < runs; i++) {
  const [tc] = await time(() => countMessages(messages, { model: 'gpt-4.1' }));
  rows.countOnce.push(tc);
  // gpt-4.1's window holds the whole conversation: layer 1 only
  const big = new ContextGuard({ model: 'gpt-4.1' });
  const [tg, g] = await time(() => big.guardSources(messages));
  rows.guardSources.push(tg);
  const [tf] = await time(() => big.measure(messages));
  rows.measureFirst.push(tf);
  const grown = [...messages, { role: 'user', content: 'One more question.' }];
  const [tm] = await time(() => big.measure(grown));
  rows.measureGrown.push(tm);
  // The same guard before the next model call: layer 1 remembered, the input still crosses as JSON.
  const [tgg] = await time(() => big.guardSources(grown));
  rows.guardGrown.push(tgg);
  const grown2 = [...grown, { role: 'assistant', content: 'An answer.' }, { role: 'user', content: 'And another.' }];
  const [tpg] = await time(() => big.prepare(grown2));
  rows.prepareGrown.push(tpg);
  // gpt-4o's 128k window: layer 1, then a summary (instant), the trim and the checkpoint
  const small = new ContextGuard({ model: 'gpt-4o' });
  const [tp, p] = await time(() => small.prepare(messages, { summarize: async (req) => `Summary of ${req.messages.length} messages.` }));
  rows.prepare.push(tp);
  last = { g, p };
}
// Steady state: one guard over 30 turns, each adding a user message (prepare, then measure) and
// an answer — what a chat client pays per turn once the guard has seen the conversation.
const steady = { prepare: [], measure: [] };
{
  let conv = messages;
  const guard = new ContextGuard({ model: 'gpt-4.1' });
  await guard.prepare(conv);
  for (let i = 0; i < 30; i++) {
    conv = [...conv, { role: 'user', content: `Question ${i}: what does the log above show?` }];
    steady.prepare.push((await time(() => guard.prepare(conv)))[0]);
    steady.measure.push((await time(() => guard.measure(conv)))[0]);
    conv = [...conv, { role: 'assistant', content: `Answer ${i}: a retry loop.` }];
  }
  guard.free();
}
const fmt = (ms) => (ms < 10 ? `${ms.toFixed(1)} ms` : `${ms.toFixed(0)} ms`);
console.log(`2,000-message chat: ${messages.length} messages, ${total.toLocaleString('en')} tokens (gpt-4.1 count); node ${process.version}, ${os.cpus().length} cores; medians of ${runs}`);
console.log('');
console.log('| operation | median | notes |');
console.log('|---|---|---|');
console.log(`| countMessages (baseline: count the request once) | ${fmt(median(rows.countOnce))} | |`);
console.log(`| guardSources, fresh guard (gpt-4.1) | ${fmt(median(rows.guardSources))} | ${last.g.traces.map((t) => `${t.operation} ${t.status} ${t.beforeTokens}→${t.afterTokens}`).join('; ')} |`);
console.log(`| measure, first call on that guard (counts cached by guardSources) | ${fmt(median(rows.measureFirst))} | every message crosses into wasm once |`);
console.log(`| measure after one new message (same guard) | ${fmt(median(rows.measureGrown))} | only the new message crosses |`);
console.log(`| guardSources after one new message (same guard) | ${fmt(median(rows.guardGrown))} | layer 1 remembered by content; input and output cross as JSON |`);
console.log(`| prepare after two new messages, no compaction needed (same guard, gpt-4.1) | ${fmt(median(rows.prepareGrown))} | |`);
console.log(`| prepare after one new message, steady state (same guard, 30 turns) | ${fmt(median(steady.prepare))} | measure right after it: ${fmt(median(steady.measure))} |`);
console.log(`| prepare with an instant summarizer, fresh guard (gpt-4o, 128k) | ${fmt(median(rows.prepare))} | ${last.p.compaction.status}: ${last.p.compaction.beforeTokens}→${last.p.compaction.afterTokens} tokens, ${last.p.compaction.removedItems} items removed |`);
