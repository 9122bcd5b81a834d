// Whole conversations through the built package (Node): what the model receives turn by turn,
// how often the summarizer is asked, and how long each prepare takes (recency, memory, the
// breaker, summaries ahead of time), written into BENCHMARKS.md's "Whole conversations" section.
//
//   node benches/conversation.mjs            all scenarios; writes benches/results/conversation.json
//   node benches/conversation.mjs --write    also rewrites BENCHMARKS.md's "Whole conversations"
//                                            section (between its markers) from the results
//   node benches/conversation.mjs --only agent,chat,restore,dead,ahead,soak   some of them
//   node benches/conversation.mjs --rerender the section again from benches/results/conversation.json
//   options: --soak-turns N (default 1000)  --scale S (default 1: the ahead scenario's 2 s
//            summarizer and 3 s pauses; 0.1 runs them as 200 ms and 300 ms, a quick check)
//
// Scenarios (each with a deterministic fake summarizer, so the counts repeat from run to run):
//   agent    200 turns of a coding agent, gpt-4o with a 64,000-token window: a task, a read_file
//            call, a ~2,980-token output; the host passes its whole history every turn.
//   chat     60 turns of chat, gpt-4o with a 16,000-token window: a host that passes its display
//            history against one that stores checkpoint chains (resolveHistory's pattern).
//   restore  the chat's reload in each format: a new guard, restore(checkpoint) after a JSON round
//            trip, the full display history and a new message, against the guard that compacted.
//   dead     30 turns past the trigger with a summarizer that fails every call after 200 ms,
//            against the same turns with no summarizer at all (the mechanical fallback's cost).
//   ahead    summaries made ahead of time against the send path: a summarizer of 2 s, a user who
//            pauses 3 s between turns (scaled by --scale).
//   soak     1,000 turns of a display-history chat whose summarizer is slow, fails in bursts,
//            hangs and recovers, in a process of its own; memory after GC every 50 turns, against
//            a fresh process whose new guard is given the same history once (what that history
//            costs without the turns before it).
// The stored-chain host with archived turns, rich content and Chromium is benches/soak.mjs
// (BENCHMARKS.md, "Long sessions (soak)"): that one proves memory levels off when the host keeps
// only the live chain; this one that a display-history host's guard holds no more than the
// history itself costs, and what a faulty summarizer does over 1,000 turns.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);
if (typeof globalThis.gc !== 'function') {
  const r = spawnSync(process.execPath, ['--expose-gc', SELF, ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

const { ContextGuard, countMessages, countTokens, memoryStats } = await import('ctxguard');

const ROOT = path.join(path.dirname(SELF), '..');
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : dflt;
};
const ONLY = opt('only', 'agent,chat,restore,dead,ahead,soak').split(',');
const SCALE = Number(opt('scale', '1'));
const SOAK_TURNS = Number(opt('soak-turns', '1000'));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const now = () => performance.now();
const log = (...a) => console.error('[conversation]', ...a);
const load = () => os.loadavg().map((x) => round(x, 1));
const MB = (bytes) => round(bytes / 1048576);

function pct(xs, p) {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}
const stats = (xs) => ({ n: xs.length, p50: round(pct(xs, 50), 1), p95: round(pct(xs, 95), 1), max: xs.length ? round(Math.max(...xs), 1) : null });
function round(x, d = 1) {
  return x === null ? null : Math.round(x * 10 ** d) / 10 ** d;
}

/**
 * A summarizer that counts its calls and the tokens it is sent, answers after `delayMs`;
 * `fail(call)` and `hang(call)` decide failures (a hang waits for the abort: the timeout).
 */
function summarizer({ delayMs = 0, fail = () => false, hang = () => false, model = 'gpt-4o', format = 'openai', count = true } = {}) {
  const s = { calls: 0, inputTokens: [] };
  s.summarize = async ({ messages, system, instructions, signal }) => {
    const call = ++s.calls;
    // Counting is synchronous: the soak leaves it out, so that its answers never race the timeout.
    if (count) {
      s.instructionsTokens = countTokens(instructions);
      s.inputTokens.push(countMessages(messages, { model, format, system: system ?? undefined }).total);
    }
    if (hang(call)) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    else if (delayMs) await sleep(delayMs);
    if (signal.aborted) throw new Error('aborted');
    if (fail(call)) throw new Error('summarizer unavailable (503)');
    return `Summary of ${messages.length} earlier messages: the user works through the task step by step; decisions and open questions are listed above.`;
  };
  return s;
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
/** Leading messages of `prev` that `next` has unchanged. */
function sharedPrefix(prev, next) {
  let k = 0;
  while (k < prev.length && k < next.length && same(prev[k], next[k])) k++;
  return k;
}

// --- agent: 200 turns of tool outputs --------------------------------------------------------
function fileText(i) {
  const lines = [];
  for (let l = 0; l < 120; l++) lines.push(`${String(l + 1).padStart(4)} | const value_${i}_${l} = compute(${l}, ${i} * factor); // step ${l % 7}`);
  return lines.join('\n');
}
const form = (m) => (m.content.startsWith('[ctxguard:cleared-tool-output]') ? 'cleared' : m.content.includes('[ctxguard:compacted-tool-output]') ? 'compacted' : 'verbatim');

async function agent() {
  const guard = new ContextGuard({ model: 'gpt-4o', contextWindow: 64_000, retrievalTool: 'read_output' });
  const s = summarizer({ delayMs: 5 });
  const history = [{ role: 'system', content: 'You are a coding agent. Read files with read_file.' }];
  const usable = guard.budget.usableLimit;
  // docs/design.md, "Recency": min(40000, 30 % of usable).
  const protect = Math.min(40_000, Math.floor(0.3 * usable));
  const times = [];
  const used = [];
  const invalidated = [];
  let prev = null;
  let extends_ = 0;
  let steps = 0;
  let newestWhole = 0;
  let protectedWhole = 0;
  let cached = 0;
  let input = 0;
  let last;
  const outputTokens = countTokens(fileText(0));
  for (let i = 0; i < 200; i++) {
    history.push({ role: 'user', content: `Task ${i}: look at src/module_${i}.ts and tell me what step ${i % 7} does.` });
    history.push({ role: 'assistant', content: null, tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ path: `src/module_${i}.ts` }) } }] });
    history.push({ role: 'tool', tool_call_id: `call_${i}`, content: fileText(i) });
    const t0 = now();
    const r = await guard.prepare(history, { summarize: s.summarize });
    times.push(now() - t0);
    used.push(r.metrics.usedTokens);
    cached += r.metrics.cost?.cachedInputTokens ?? 0;
    input += r.metrics.usedTokens;
    if (r.messages.at(-1).content === fileText(i)) newestWhole++;
    // The newest outputs whose sizes add up to the protected budget are all verbatim.
    const outs = r.messages.filter((m) => m.role === 'tool').reverse();
    let acc = 0;
    let whole = true;
    for (const m of outs) {
      acc += outputTokens;
      if (acc > protect) break;
      whole &&= form(m) === 'verbatim';
    }
    if (whole) protectedWhole++;
    for (const t of r.traces.filter((t) => t.operation === 'tool_output_clear')) {
      steps++;
      invalidated.push(t.prefixInvalidatedTokens);
    }
    if (prev) {
      const k = sharedPrefix(prev, r.messages);
      if (k === prev.length) extends_++;
    }
    prev = r.messages;
    last = r;
    history.push({ role: 'assistant', content: `Step ${i % 7} of module ${i} computes the value with the factor.` });
  }
  guard.free();
  const outputs = last.messages.filter((m) => m.role === 'tool');
  const forms = { verbatim: 0, compacted: 0, cleared: 0 };
  for (const m of outputs) forms[form(m)]++;
  const byAge = outputs.map((m, k) => ({ age: outputs.length - 1 - k, form: form(m), tokens: countTokens(m.content) })).reverse();
  return {
    turns: 200,
    outputTokens,
    protectedBudget: protect,
    newestWholeTurns: newestWhole,
    protectedVerbatimTurns: protectedWhole,
    lastInput: { usedTokens: last.metrics.usedTokens, usableLimit: usable, forms, verbatimTokens: byAge.filter((x) => x.form === 'verbatim').reduce((a, x) => a + x.tokens, 0), byAge: byAge.slice(0, 8), oldest: byAge.at(-1), summaries: last.messages.filter((m) => m.role === 'system' && m.content.includes('[ctxguard:summary]')).length },
    summarizerCalls: s.calls,
    summarizerInputTokens: s.inputTokens,
    clearingSteps: steps,
    prefixInvalidatedTokens: stats(invalidated),
    extendsPrevious: round(extends_ / 199, 3),
    cachedShare: round(cached / input, 3),
    usedTokens: stats(used),
    prepareMs: stats(times),
  };
}

// --- chat: display history against stored chains --------------------------------------------
const userText = (i) => `Question ${i}: how do I set up step ${i} of the migration? ${'Some detail about the setup. '.repeat(12)}`;
const answerText = (i) => `Answer ${i}: for step ${i}, run the script with --step ${i}. ${'It checks the schema and moves the rows. '.repeat(22)}`;
const user = (i) => ({ role: 'user', content: userText(i) });
const answer = (i) => ({ role: 'assistant', content: answerText(i) });
const SYSTEM = { role: 'system', content: 'You help with a database migration.' };

async function chat() {
  const display = new ContextGuard({ model: 'gpt-4o', contextWindow: 16_000 });
  const chained = new ContextGuard({ model: 'gpt-4o', contextWindow: 16_000 });
  const sd = summarizer();
  const sc = summarizer();
  const history = [SYSTEM];
  let chain = [SYSTEM];
  const afterCompaction = [];
  const historyTokensAtCall = [];
  let sameInput = 0;
  for (let i = 0; i < 60; i++) {
    history.push(user(i));
    chain.push(user(i));
    const calls = sd.calls;
    const d = await display.prepare(history, { summarize: sd.summarize });
    if (sd.calls > calls) historyTokensAtCall.push(countMessages(history, { model: 'gpt-4o' }).total);
    const c = await chained.prepare(chain, { summarize: sc.summarize });
    if (same(d.messages, c.messages)) sameInput++;
    if (c.checkpoint) chain = c.checkpoint.messages;
    if (d.checkpoint) {
      afterCompaction.push({
        turn: i,
        usedTokens: d.metrics.usedTokens,
        targetLimit: d.metrics.targetLimit,
        lastAnswerKept: d.messages.some((m) => m.content === answerText(i - 1)),
        assistantMessages: d.messages.filter((m) => m.role === 'assistant').length,
      });
    }
    history.push(answer(i));
    chain.push(answer(i));
  }
  // The summarizer's input budget (src/pipeline/plan.rs): usable - answer limit - instructions - 512.
  const maxTokens = Math.min(4096, Math.max(256, Math.floor(display.budget.targetLimit / 4)));
  const budget = display.budget.usableLimit - maxTokens - sd.instructionsTokens - 512;
  display.free();
  chained.free();
  return {
    turns: 60,
    summarizerCalls: { displayHistory: sd.calls, storedChain: sc.calls },
    summarizerInputTokens: sd.inputTokens,
    historyTokensAtCall,
    summarizerInputBudget: budget,
    sameModelInputTurns: sameInput,
    afterCompaction,
  };
}

// --- restore: a reload in each format ----------------------------------------------------------
const FORMATS = {
  openai: { model: 'gpt-4o', user, answer },
  anthropic: { model: 'claude-sonnet-4', user, answer },
  'ai-sdk': { model: 'gpt-4o', user, answer },
  'openai-responses': { model: 'gpt-4o', user, answer: (i) => ({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: answerText(i) }] }) },
  gemini: { model: 'gemini-2.5', user: (i) => ({ role: 'user', parts: [{ text: userText(i) }] }), answer: (i) => ({ role: 'model', parts: [{ text: answerText(i) }] }) },
};

async function restore() {
  const out = {};
  for (const [format, f] of Object.entries(FORMATS)) {
    const config = { model: f.model, format, contextWindow: 16_000, checkpointKey: 'app-secret' };
    const system = 'You help with a database migration.';
    const guard = new ContextGuard(config);
    const s = summarizer({ model: f.model, format });
    const history = [];
    let stored = null;
    for (let i = 0; i < 45; i++) {
      history.push(f.user(i));
      const r = await guard.prepare(history, { system, summarize: s.summarize });
      if (r.checkpoint) stored = JSON.stringify(r.checkpoint);
      history.push(f.answer(i));
    }
    history.push(f.user(45));
    const expected = await guard.prepare(history, { system, summarize: s.summarize });
    const reloaded = new ContextGuard(config);
    const restored = reloaded.restore(JSON.parse(stored));
    const again = summarizer({ model: f.model, format });
    const r = await reloaded.prepare(history, { system, summarize: again.summarize });
    // A checkpoint tampered with (it claims to cover more) is not restored.
    const tampered = stored.replace(/covers=(\d+):/, (_, n) => `covers=${Number(n) + 2}:`);
    const forged = new ContextGuard(config).restore(JSON.parse(tampered));
    out[format] = {
      compactions: s.calls,
      restored: restored.restored,
      coveredMessages: restored.coveredMessages,
      summarizerCalls: again.calls,
      sameModelInput: same(r.messages, expected.messages) && same(r.system, expected.system),
      tamperedRestored: forged.restored,
    };
    guard.free();
    reloaded.free();
  }
  return out;
}

// --- dead: a summarizer that is down ---------------------------------------------------------
async function deadRun(summarize) {
  const guard = new ContextGuard({ model: 'gpt-4o', contextWindow: 16_000 });
  const history = [SYSTEM];
  for (let i = 0; i < 34; i++) history.push(user(i), answer(i));
  const times = [];
  const states = [];
  let degraded = 0;
  for (let i = 34; i < 64; i++) {
    history.push(user(i));
    const t0 = now();
    const r = await guard.prepare(history, { summarize, retryDelayMs: 500 });
    times.push(now() - t0);
    states.push(r.metrics.breaker.state);
    degraded += r.degraded ? 1 : 0;
    history.push(answer(i));
  }
  guard.free();
  return { times, states, degraded };
}

// The same summarizer with `ahead: true`, from the first turn, the user pausing 3 s between
// turns (slept only while a summary runs in the background: nothing else happens in a pause).
async function deadAhead(summarize) {
  const guard = new ContextGuard({ model: 'gpt-4o', contextWindow: 16_000 });
  const history = [SYSTEM];
  const times = [];
  let degraded = 0;
  let openOn = null;
  for (let i = 0; i < 64; i++) {
    history.push(user(i));
    const t0 = now();
    const r = await guard.prepare(history, { summarize, retryDelayMs: 500, ahead: true });
    if (i >= 34) times.push(now() - t0);
    degraded += r.degraded ? 1 : 0;
    if (openOn === null && r.metrics.breaker.state === 'open') openOn = i;
    history.push(answer(i));
    if (r.metrics.memory.ahead === 'running') await sleep(3000 * SCALE);
  }
  guard.free();
  return { times, degraded, openOn };
}

async function dead() {
  const s = summarizer({ delayMs: 200, fail: () => true });
  const down = await deadRun(s.summarize);
  const none = await deadRun(undefined);
  const a = summarizer({ delayMs: 200, fail: () => true });
  const ahead = await deadAhead(a.summarize);
  // The turn whose compaction opened it still waited for its attempts.
  const openAt = down.states.indexOf('open');
  return {
    turns: 30,
    summarizerCalls: s.calls,
    degradedTurns: down.degraded,
    breakerOpensOnTurn: openAt + 1,
    prepareMsUntilOpen: stats(down.times.slice(0, openAt + 1)),
    prepareMsAfterOpen: stats(down.times.slice(openAt + 1)),
    prepareMsNoSummarizer: stats(none.times.slice(openAt + 1)),
    ahead: { summarizerCalls: a.calls, degradedTurns: ahead.degraded, breakerOpensOnTurn: ahead.openOn, prepareMs: stats(ahead.times) },
  };
}

// --- ahead: summaries made ahead of time against the send path --------------------------------
async function aheadRun(ahead) {
  const guard = new ContextGuard({ model: 'gpt-4o', contextWindow: 16_000 });
  const s = summarizer({ delayMs: 2000 * SCALE });
  const history = [SYSTEM];
  const turns = { plain: [], compacting: [], started: [] };
  const startedOn = [];
  const compactedOn = [];
  let waited = 0;
  for (let i = 0; i < 60; i++) {
    history.push(user(i));
    const t0 = now();
    const r = await guard.prepare(history, { summarize: s.summarize, ahead });
    const ms = now() - t0;
    if (r.checkpoint) {
      turns.compacting.push(ms);
      compactedOn.push(i);
      if (r.compaction?.attempts > 0) waited++;
    } else if (r.traces.some((t) => t.ahead && t.status === 'in_progress')) {
      turns.started.push(ms);
      startedOn.push(i);
    } else turns.plain.push(ms);
    history.push(answer(i));
    await sleep(3000 * SCALE);
  }
  guard.free();
  return { summarizerCalls: s.calls, startedOn, compactedOn, askedOnTheSendPath: waited, plainMs: stats(turns.plain), startsAheadMs: stats(turns.started), compactingMs: stats(turns.compacting) };
}

async function aheadScenario() {
  return { scale: SCALE, summarizerMs: 2000 * SCALE, pauseMs: 3000 * SCALE, ahead: await aheadRun(true), onTheSendPath: await aheadRun(false) };
}

// --- soak: 1,000 turns, a summarizer that is slow, fails in bursts, hangs, recovers -----------
// By turn: a slow summarizer (60 ms, under the 250 ms timeout) throughout; every call fails in
// turns 200-299 and 600-649 (bursts), hangs until the timeout in turns 400-449, answers again
// after each. The breaker opens after 3 failed compactions and half-opens after 20 calls.
const OUTAGES = [
  { from: 200, to: 300, kind: 'fail' },
  { from: 400, to: 450, kind: 'hang' },
  { from: 600, to: 650, kind: 'fail' },
];
const SOAK_TIMEOUT_MS = 250;
const outage = (turn) => OUTAGES.find((o) => turn >= o.from && turn < o.to)?.kind;
const soakHistory = (turns) => [SYSTEM, ...Array.from({ length: turns }, (_, i) => [user(i), answer(i)]).flat()];
const SAMPLE_EVERY = 50;
const COLD_AT = [250, 500, 1000];

async function soakChild() {
  const guard = new ContextGuard({ model: 'gpt-4o', contextWindow: 16_000, breaker: { failures: 3, cooldownCalls: 20 } });
  let turn = 0;
  const s = summarizer({ delayMs: 60, fail: () => outage(turn) === 'fail', hang: () => outage(turn) === 'hang', count: false });
  const callTurns = [];
  const summarize = (req) => {
    callTurns.push(turn);
    return s.summarize(req);
  };
  const history = [SYSTEM];
  const samples = [];
  let rejections = 0;
  let latestMissing = 0;
  let degraded = 0;
  let degradedOutside = 0;
  const reasons = {};
  const times = [];
  globalThis.gc();
  const start = { wasmMB: MB(memoryStats().wasmBytes), heapMB: MB(process.memoryUsage().heapUsed) };
  for (turn = 0; turn < SOAK_TURNS; turn++) {
    history.push(user(turn));
    const t0 = now();
    try {
      const r = await guard.prepare(history, { summarize, timeoutMs: SOAK_TIMEOUT_MS, retryDelayMs: 20 });
      if (!same(r.messages.at(-1), user(turn))) latestMissing++;
      if (r.degraded) {
        degraded++;
        reasons[r.degradedReason] = (reasons[r.degradedReason] ?? 0) + 1;
        // A degraded turn outside an outage and its cool-down (20 calls) after it.
        if (!OUTAGES.some((o) => turn >= o.from && turn < o.to + 20)) degradedOutside++;
      }
    } catch {
      rejections++;
    }
    times.push(now() - t0);
    history.push(answer(turn));
    if ((turn + 1) % SAMPLE_EVERY === 0) {
      globalThis.gc();
      samples.push({ turn: turn + 1, wasmMB: MB(memoryStats().wasmBytes), heapMB: MB(process.memoryUsage().heapUsed), historyMB: round(JSON.stringify(history).length / 1048576, 2), summarizerCalls: s.calls });
    }
  }
  guard.free();
  const callsIn = OUTAGES.map((o) => ({ ...o, calls: callTurns.filter((t) => t >= o.from && t < o.to).length }));
  return { turns: SOAK_TURNS, outages: callsIn, summarizerCalls: s.calls, callsOutsideOutages: callTurns.filter((t) => !outage(t)).length, degradedTurns: degraded, degradedReasons: reasons, degradedOutsideOutages: degradedOutside, rejections, latestMissing, prepareMs: stats(times), start, samples };
}

/** A fresh guard given the soak's history of `turns` turns: one prepare, then two more turns. */
async function coldChild(turns) {
  const history = soakHistory(turns);
  history.push(user(turns));
  globalThis.gc();
  const historyHeap = process.memoryUsage().heapUsed;
  const guard = new ContextGuard({ model: 'gpt-4o', contextWindow: 16_000 });
  const summarize = async ({ messages }) => `Summary of ${messages.length} earlier messages.`;
  await guard.prepare(history, { summarize });
  history.push(answer(turns), user(turns + 1));
  await guard.prepare(history, { summarize });
  globalThis.gc();
  return { turns, wasmMB: MB(memoryStats().wasmBytes), heapMB: MB(process.memoryUsage().heapUsed), historyHeapMB: MB(historyHeap) };
}

function child(...extra) {
  const r = spawnSync(process.execPath, ['--expose-gc', SELF, ...extra], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`child ${extra.join(' ')} failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

async function soak() {
  const run = child('--soak-child', '--soak-turns', String(SOAK_TURNS));
  run.cold = COLD_AT.filter((n) => n <= SOAK_TURNS).map((n) => child('--cold-child', String(n)));
  return run;
}

if (args.includes('--soak-child')) {
  process.stdout.write(JSON.stringify(await soakChild()));
  process.exit(0);
}
if (args.includes('--cold-child')) {
  process.stdout.write(JSON.stringify(await coldChild(Number(opt('cold-child', '1000')))));
  process.exit(0);
}

const out = path.join(ROOT, 'benches', 'results', 'conversation.json');
// --rerender: the section again from the last results (no scenario runs).
const rerender = args.includes('--rerender');
// --only: the other scenarios' results stay as the last run left them.
const previous = (rerender || args.includes('--only')) && fs.existsSync(out) ? JSON.parse(fs.readFileSync(out, 'utf8')) : { load: {} };
const results = rerender ? previous : { ...previous, date: new Date().toISOString(), node: process.version, cores: os.cpus().length, load: { ...previous.load } };
const scenarios = { agent, chat, restore, dead, ahead: aheadScenario, soak };
for (const name of rerender ? [] : ONLY) {
  log(`${name}...`);
  const t0 = now();
  const before = load();
  results[name] = await scenarios[name]();
  results.load[name] = [before[0], load()[0]];
  log(`${name}: ${round((now() - t0) / 1000)} s`);
}
if (!rerender) {
  fs.writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  console.log(JSON.stringify(results, null, 2));
  log(`wrote ${path.relative(ROOT, out)}`);
}
if (args.includes('--write') || rerender) {
  const file = path.join(ROOT, 'BENCHMARKS.md');
  const [begin, end] = ['<!-- conversation:begin -->', '<!-- conversation:end -->'];
  const md = fs.readFileSync(file, 'utf8');
  const a = md.indexOf(begin);
  const b = md.indexOf(end);
  const section = `${begin}\n${render(results)}\n${end}`;
  fs.writeFileSync(file, a >= 0 && b > a ? md.slice(0, a) + section + md.slice(b + end.length) : `${md.trimEnd()}\n\n${section}\n`);
  log('rewrote the "Whole conversations" section of BENCHMARKS.md');
}

/** The section of BENCHMARKS.md, from the results. */
function render(r) {
  const ms = (s) => (s && s.n ? `${s.p50} / ${s.p95} / ${s.max}` : '–');
  const yes = (b) => (b ? 'yes' : '**no**');
  const range = (xs) => (xs.length ? `${Math.min(...xs)}–${Math.max(...xs)}` : '–');
  const loads = Object.entries(r.load).map(([k, [a, b]]) => `${k} ${a}→${b}`).join(', ');
  const lines = [
    '## Whole conversations',
    '',
    `\`node benches/conversation.mjs --write\` (${r.date.slice(0, 16).replace('T', ' ')} UTC, Node ${r.node}, ${r.cores} shared cores; load average per scenario, start→end: ${loads}). Deterministic fake summarizers, so the counts repeat (at high load a late timer can add a call or two to the soak); times are p50 / p95 / max of one run (ms), noisy at this load: compare the rows of one scenario, not runs.`,
    '',
  ];
  if (r.agent) {
    const a = r.agent;
    const f = a.lastInput.forms;
    lines.push(`### Recency: a 200-turn coding agent (gpt-4o, 64,000-token window, defaults)`, '');
    lines.push(`Each turn a task, a \`read_file\` call and its ${a.outputTokens}-token output; the host passes its whole history every turn. Protected budget ${a.protectedBudget} tokens.`, '');
    lines.push('| figure | value |', '|---|---|');
    lines.push(`| the newest output reaches the model whole | ${a.newestWholeTurns} of ${a.turns} turns |`);
    lines.push(`| the newest outputs up to the protected budget all verbatim | ${a.protectedVerbatimTurns} of ${a.turns} turns |`);
    lines.push(`| last turn's outputs | ${f.verbatim} verbatim (${a.lastInput.verbatimTokens} tokens), ${f.compacted} compacted, ${f.cleared} cleared stubs; input ${a.lastInput.usedTokens} of ${a.lastInput.usableLimit} usable |`);
    lines.push(`| model input per call (tokens; usable ${a.lastInput.usableLimit}) | ${a.usedTokens.p50} / ${a.usedTokens.p95} / ${a.usedTokens.max} |`);
    lines.push(`| summarizer calls (input tokens per call) | ${a.summarizerCalls} (${a.summarizerInputTokens.join(', ') || '–'}) |`);
    lines.push(`| clearing steps; prefix tokens each invalidated | ${a.clearingSteps}; ${ms(a.prefixInvalidatedTokens)} |`);
    lines.push(`| calls whose model input extends the previous one byte for byte | ${Math.round(a.extendsPrevious * 100)} % |`);
    lines.push(`| input tokens in the cached prefix (\`metrics.cost.cachedInputTokens\`; what a cache bills: docs/edits.md) | ${Math.round(a.cachedShare * 100)} % |`);
    lines.push(`| prepare (ms) | ${ms(a.prepareMs)} |`, '');
    lines.push(`The last turn by age (age: form tokens): ${a.lastInput.byAge.map((x) => `${x.age}: ${x.form} ${x.tokens}`).join(', ')} … ${a.lastInput.oldest.age}: ${a.lastInput.oldest.form} ${a.lastInput.oldest.tokens}.`, '');
  }
  if (r.chat) {
    const c = r.chat;
    lines.push('### Memory: a 60-turn chat, display history against stored chains (gpt-4o, 16,000-token window)', '');
    lines.push('| figure | value |', '|---|---|');
    lines.push(`| summarizer calls, display history / stored chain | ${c.summarizerCalls.displayHistory} / ${c.summarizerCalls.storedChain} |`);
    lines.push(`| turns with the same model input for both hosts | ${c.sameModelInputTurns} of ${c.turns} |`);
    lines.push(`| summarizer input per call (tokens; its budget ${c.summarizerInputBudget}) | ${c.summarizerInputTokens.join(', ')} (the whole history then: ${c.historyTokensAtCall.join(', ')}) |`);
    for (const x of c.afterCompaction) lines.push(`| after the compaction of turn ${x.turn} | ${x.usedTokens} of a ${x.targetLimit}-token target, ${x.assistantMessages} assistant messages, last answer kept: ${yes(x.lastAnswerKept)} |`);
    lines.push('');
  }
  if (r.restore) {
    lines.push('### Restore after a reload (the same chat, 45 turns, `checkpointKey`)', '');
    lines.push('A new guard, `restore(JSON.parse(stored))`, the full display history and a new message, against the guard that compacted.', '');
    lines.push('| format | restored (messages covered) | summarizer calls | same model input | tampered checkpoint restored |', '|---|---|---|---|---|');
    for (const [k, x] of Object.entries(r.restore)) lines.push(`| ${k} | ${yes(x.restored)} (${x.coveredMessages}) | ${x.summarizerCalls} | ${yes(x.sameModelInput)} | ${x.tamperedRestored ? '**yes**' : 'no'} |`);
    lines.push('');
  }
  if (r.dead) {
    const d = r.dead;
    lines.push('### A summarizer that is down (200 ms, then an error; 30 turns past the trigger)', '');
    lines.push(`${d.summarizerCalls} summarizer calls (3 compactions of 3 attempts), ${d.degradedTurns} of ${d.turns} turns degraded, never rejected; the breaker opened on turn ${d.breakerOpensOnTurn}. prepare until then ${ms(d.prepareMsUntilOpen)} ms; after ${ms(d.prepareMsAfterOpen)} ms; the same turns with no summarizer at all ${ms(d.prepareMsNoSummarizer)} ms.`, '');
    if (d.ahead) lines.push(`With \`ahead: true\` from the first turn (the user pausing 3 s between turns): ${d.ahead.summarizerCalls} summarizer calls, all in the background; the breaker opened on turn ${d.ahead.breakerOpensOnTurn + 1} of 64; prepare over the last 30 turns ${ms(d.ahead.prepareMs)} ms; ${d.ahead.degradedTurns} turns degraded.`, '');
  }
  if (r.ahead) {
    const h = r.ahead;
    lines.push(`### Summaries made ahead of time (summarizer ${h.summarizerMs} ms, user pauses ${h.pauseMs} ms${h.scale !== 1 ? `: the 2 s / 3 s scenario scaled by ${h.scale}` : ''}; 60 turns)`, '');
    lines.push('| prepare (ms) | plain turns | the turn that starts one | the turn that compacts | summarizer calls | asked on the send path |', '|---|---|---|---|---|---|');
    lines.push(`| \`ahead: true\` | ${ms(h.ahead.plainMs)} | ${ms(h.ahead.startsAheadMs)} | ${ms(h.ahead.compactingMs)} | ${h.ahead.summarizerCalls} | ${h.ahead.askedOnTheSendPath} |`);
    lines.push(`| on the send path | ${ms(h.onTheSendPath.plainMs)} | – | ${ms(h.onTheSendPath.compactingMs)} | ${h.onTheSendPath.summarizerCalls} | ${h.onTheSendPath.askedOnTheSendPath} |`, '');
    lines.push(`Ahead, summaries started on turns ${h.ahead.startedOn.join(', ')} and were used on turns ${h.ahead.compactedOn.join(', ')} (the last one started is ready when the session ends).`, '');
  }
  if (r.soak) {
    const s = r.soak;
    const at = (n) => s.samples.find((x) => x.turn === n);
    lines.push(`### Soak: ${s.turns} turns of a display-history chat (gpt-4o, 16,000-token window)`, '');
    lines.push(`The summarizer answers in 60 ms (timeout ${SOAK_TIMEOUT_MS} ms); every call fails in turns ${s.outages.filter((o) => o.kind === 'fail').map((o) => `${o.from}–${o.to - 1}`).join(' and ')}, hangs until the timeout in turns ${s.outages.filter((o) => o.kind === 'hang').map((o) => `${o.from}–${o.to - 1}`).join(', ')}, and answers again after each; \`breaker: { failures: 3, cooldownCalls: 20 }\`.`, '');
    lines.push('| figure | value |', '|---|---|');
    lines.push(`| summarizer calls | ${s.summarizerCalls}: ${s.callsOutsideOutages} outside the outages (a compaction every ~20 turns), ${s.outages.map((o) => `${o.calls} in ${o.from}–${o.to - 1}`).join(', ')} (3 compactions of 3 attempts, then one attempt per cool-down) |`);
    lines.push(`| degraded turns (reasons) | ${s.degradedTurns} (${Object.entries(s.degradedReasons).map(([k, v]) => `${k} ${v}`).join(', ')}); outside the outages and their cool-downs: ${s.degradedOutsideOutages} |`);
    lines.push(`| rejections; turns without the latest user message last | ${s.rejections}; ${s.latestMissing} |`);
    lines.push(`| prepare (ms) | ${ms(s.prepareMs)} |`, '');
    const probes = s.cold.map((c) => ({ c, x: at(c.turns) })).filter((p) => p.x);
    const wasmUnder = probes.every((p) => p.x.wasmMB <= p.c.wasmMB);
    const heapOver = Math.max(...probes.map((p) => round(p.x.heapMB - p.c.heapMB)));
    lines.push(`Memory after a full GC (MB). The display history grows (~1.4 KB a turn), and the guard keeps what it needs of each message it is given (a parsed copy, its counts), so memory grows with the history; "flat" means the turns add nothing on top: a guard 1,000 turns into the session holds no more than a new guard given the same history once ("cold": a fresh process, one \`prepare\` and two more turns). Here wasm stays ${wasmUnder ? 'at or under' : '**over**'} cold at every probe and the JS heap within ${heapOver} MB of it.`, '');
    lines.push('| turn | history (JSON, MB) | wasm, soak / cold | JS heap, soak / cold (the history alone) |', '|---:|---:|---|---|');
    for (const c of s.cold) {
      const x = at(c.turns);
      if (x) lines.push(`| ${c.turns} | ${x.historyMB} | ${x.wasmMB} / ${c.wasmMB} | ${x.heapMB} / ${c.heapMB} (${c.historyHeapMB}) |`);
    }
    const last = s.samples.at(-1);
    lines.push('', `Every ${SAMPLE_EVERY} turns, wasm: ${s.samples.map((x) => x.wasmMB).join(' ')}; summarizer calls so far: ${s.samples.map((x) => x.summarizerCalls).join(' ')}; JS heap ${range(s.samples.map((x) => x.heapMB))} MB over the ${last.turn} turns. The stored-chain host (\`resolveHistory\`, old turns archived, rich content, Node and Chromium): "Long sessions (soak)" below.`, '');
  }
  return lines.join('\n').trimEnd();
}
