// Whole conversations through the built package (Node): what the model receives turn by turn,
// how often the summarizer is asked, and how long each prepare takes — the figures of
// BENCHMARKS.md's "Whole conversations" section.
//
//   node benches/conversation.mjs            all scenarios; writes benches/results/conversation.json
//   node benches/conversation.mjs --write    also rewrites BENCHMARKS.md's "Whole conversations"
//                                            section (between its markers) from the results
//   node benches/conversation.mjs --only agent,chat,dead,ahead,soak   some of them
//   options: --soak-turns N (default 1000)  --scale S (default 0.1: the ahead scenario's 2 s
//            summarizer and 3 s pauses run as 200 ms and 300 ms; the ratios are what it measures)
//
// Scenarios (each with a deterministic fake summarizer, so the counts are reproducible):
//   agent  200 turns of a coding agent, gpt-4o with a 64,000-token window: a task, a read_file
//          call, a ~2,850-token output; the host passes its whole history every turn.
//   chat   60 turns of chat, gpt-4o with a 16,000-token window: a host that passes its display
//          history against one that stores checkpoint chains (resolveHistory's pattern).
//   dead   30 turns past the trigger with a summarizer that fails every call after 200 ms.
//   ahead  summaries made ahead of time against the send path: a summarizer of 2 s, a user who
//          pauses 3 s between turns (scaled by --scale).
//   soak   1,000 turns of a display-history chat whose summarizer is slow, fails in bursts,
//          hangs and recovers; memory sampled every 50 turns.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

if (typeof globalThis.gc !== 'function') {
  const r = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

const { ContextGuard, countTokens, memoryStats } = await import('ctxguard');

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : dflt;
};
const ONLY = opt('only', 'agent,chat,dead,ahead,soak').split(',');
const SCALE = Number(opt('scale', '0.1'));
const SOAK_TURNS = Number(opt('soak-turns', '1000'));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const now = () => performance.now();
const log = (...a) => console.error('[conversation]', ...a);

function pct(xs, p) {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}
const stats = (xs) => ({ n: xs.length, p50: pct(xs, 50), p95: pct(xs, 95), max: xs.length ? Math.max(...xs) : null });
const round = (x, d = 1) => (x === null ? null : Math.round(x * 10 ** d) / 10 ** d);

/** A summarizer that counts its calls and answers after `delayMs`; `fail(call)` decides failures. */
function summarizer({ delayMs = 0, fail = () => false, hang = () => false } = {}) {
  const s = { calls: 0, inputTokens: [] };
  s.summarize = async ({ messages, signal }) => {
    const call = ++s.calls;
    s.inputTokens.push(countTokens(JSON.stringify(messages)));
    if (hang(call)) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    if (delayMs) await sleep(delayMs);
    if (fail(call)) throw new Error('summarizer unavailable (503)');
    return `Summary of ${messages.length} earlier messages: the user works through the task step by step; decisions and open questions are listed above.`;
  };
  return s;
}

/** Whether `prev` (a model input) is a prefix of `next`, message by message, byte for byte. */
function isPrefix(prev, next) {
  if (prev.length > next.length) return false;
  for (let i = 0; i < prev.length; i++) if (JSON.stringify(prev[i]) !== JSON.stringify(next[i])) return false;
  return true;
}

// --- agent: 200 turns of tool outputs --------------------------------------------------------
function fileText(i) {
  const lines = [];
  for (let l = 0; l < 120; l++) lines.push(`${String(l + 1).padStart(4)} | const value_${i}_${l} = compute(${l}, ${i} * factor); // step ${l % 7}`);
  return lines.join('\n');
}

async function agent() {
  const guard = new ContextGuard({ model: 'gpt-4o', contextWindow: 64_000, retrievalTool: 'read_output' });
  const s = summarizer({ delayMs: 5 });
  const history = [{ role: 'system', content: 'You are a coding agent. Read files with read_file.' }];
  const times = [];
  const used = [];
  let prev = null;
  let stable = 0;
  let steps = 0;
  let newestWhole = 0;
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
    if (r.messages.at(-1).content === fileText(i)) newestWhole++;
    if (r.traces.some((t) => t.operation === 'tool_output_clear')) steps++;
    if (prev && isPrefix(prev, r.messages)) stable++;
    prev = r.messages;
    last = r;
    history.push({ role: 'assistant', content: `Step ${i % 7} of module ${i} computes the value with the factor.` });
  }
  // The last model input by age: what each output became.
  const outputs = last.messages.filter((m) => m.role === 'tool');
  const form = (m) => (m.content.startsWith('[ctxguard:cleared-tool-output]') ? 'cleared' : m.content.includes('[ctxguard:compacted-tool-output]') ? 'compacted' : 'verbatim');
  const forms = { verbatim: 0, compacted: 0, cleared: 0 };
  for (const m of outputs) forms[form(m)]++;
  const ages = outputs.map((m, k) => ({ age: outputs.length - 1 - k, form: form(m), tokens: countTokens(m.content) })).reverse();
  return {
    turns: 200,
    outputTokens,
    newestWholeTurns: newestWhole,
    lastInput: { usedTokens: last.metrics.usedTokens, usableLimit: last.metrics.usableLimit, forms, byAge: ages.slice(0, 12), oldest: ages.at(-1) },
    summarizerCalls: s.calls,
    clearingSteps: steps,
    prefixStable: round(stable / 199, 3),
    usedTokens: stats(used),
    prepareMs: stats(times.map((t) => round(t, 2))),
  };
}

// --- chat: display history against stored chains --------------------------------------------
const user = (i) => ({ role: 'user', content: `Question ${i}: how do I set up step ${i} of the migration? ${'Some detail about the setup. '.repeat(12)}` });
const answer = (i) => ({ role: 'assistant', content: `Answer ${i}: for step ${i}, run the script with --step ${i}. ${'It checks the schema and moves the rows. '.repeat(22)}` });
const SYSTEM = { role: 'system', content: 'You help with a database migration.' };

async function chat() {
  const display = new ContextGuard({ model: 'gpt-4o', contextWindow: 16_000 });
  const chained = new ContextGuard({ model: 'gpt-4o', contextWindow: 16_000 });
  const sd = summarizer();
  const sc = summarizer();
  const history = [SYSTEM];
  let chain = [SYSTEM];
  const afterCompaction = [];
  let sameInput = 0;
  for (let i = 0; i < 60; i++) {
    history.push(user(i));
    chain.push(user(i));
    const d = await display.prepare(history, { summarize: sd.summarize });
    const c = await chained.prepare(chain, { summarize: sc.summarize });
    if (JSON.stringify(d.messages) === JSON.stringify(c.messages)) sameInput++;
    if (c.checkpoint) chain = c.checkpoint.messages;
    if (d.checkpoint) {
      afterCompaction.push({
        turn: i,
        usedTokens: d.metrics.usedTokens,
        targetLimit: d.metrics.targetLimit,
        lastAnswerKept: d.messages.some((m) => m.content === answer(i - 1).content),
        assistantMessages: d.messages.filter((m) => m.role === 'assistant').length,
      });
    }
    history.push(answer(i));
    chain.push(answer(i));
  }
  return {
    turns: 60,
    summarizerCalls: { displayHistory: sd.calls, storedChain: sc.calls },
    summarizerInputTokens: { max: Math.max(...sd.inputTokens), usableLimit: display.budget.usableLimit },
    sameModelInputTurns: sameInput,
    afterCompaction,
  };
}

// --- dead: a summarizer that is down ---------------------------------------------------------
async function dead() {
  const guard = new ContextGuard({ model: 'gpt-4o', contextWindow: 16_000 });
  const s = summarizer({ delayMs: 200, fail: () => true });
  const history = [SYSTEM];
  for (let i = 0; i < 34; i++) history.push(user(i), answer(i));
  const times = [];
  const states = [];
  for (let i = 34; i < 64; i++) {
    history.push(user(i));
    const t0 = now();
    const r = await guard.prepare(history, { summarize: s.summarize, retryDelayMs: 500 });
    times.push(round(now() - t0));
    states.push(r.metrics.breaker.state);
    history.push(answer(i));
  }
  // The turn whose compaction opened it still waited for its attempts.
  const openAt = states.indexOf('open');
  return {
    turns: 30,
    summarizerCalls: s.calls,
    breakerOpensOnTurn: openAt + 1,
    prepareMsUntilOpen: stats(times.slice(0, openAt + 1)),
    prepareMsAfterOpen: stats(times.slice(openAt + 1)),
  };
}

// --- ahead: summaries made ahead of time against the send path --------------------------------
async function aheadRun(ahead) {
  const guard = new ContextGuard({ model: 'gpt-4o', contextWindow: 16_000 });
  const s = summarizer({ delayMs: 2000 * SCALE });
  const history = [SYSTEM];
  const turns = { plain: [], compacting: [], started: [] };
  for (let i = 0; i < 60; i++) {
    history.push(user(i));
    const t0 = now();
    const r = await guard.prepare(history, { summarize: s.summarize, ahead });
    const ms = now() - t0;
    if (r.checkpoint) turns.compacting.push(ms);
    else if (r.traces.some((t) => t.ahead && t.status === 'in_progress')) turns.started.push(ms);
    else turns.plain.push(ms);
    history.push(answer(i));
    await sleep(3000 * SCALE);
  }
  guard.free();
  return {
    summarizerCalls: s.calls,
    plainMs: stats(turns.plain.map((t) => round(t, 2))),
    startsAheadMs: stats(turns.started.map((t) => round(t, 2))),
    compactingMs: stats(turns.compacting.map((t) => round(t, 2))),
  };
}

async function aheadScenario() {
  return { scale: SCALE, summarizerMs: 2000 * SCALE, pauseMs: 3000 * SCALE, ahead: await aheadRun(true), onTheSendPath: await aheadRun(false) };
}

// --- soak: 1,000 turns, a summarizer that is slow, fails in bursts, hangs, recovers -----------
async function soak() {
  const guard = new ContextGuard({ model: 'gpt-4o', contextWindow: 16_000, breaker: { failures: 3, cooldownCalls: 20 } });
  // Calls 20-39 fail (a burst), every 25th hangs until the timeout, the rest answer after 30 ms.
  const s = summarizer({ delayMs: 30, fail: (c) => (c >= 20 && c < 40) || (c >= 70 && c < 80), hang: (c) => c % 25 === 0 });
  const history = [SYSTEM];
  const samples = [];
  let rejections = 0;
  let latestMissing = 0;
  let degraded = 0;
  const times = [];
  for (let i = 0; i < SOAK_TURNS; i++) {
    history.push(user(i));
    const t0 = now();
    try {
      const r = await guard.prepare(history, { summarize: s.summarize, timeoutMs: 150, retryDelayMs: 20 });
      if (JSON.stringify(r.messages.at(-1)) !== JSON.stringify(user(i))) latestMissing++;
      if (r.degraded) degraded++;
    } catch {
      rejections++;
    }
    times.push(now() - t0);
    history.push(answer(i));
    if (i % 50 === 49) {
      globalThis.gc();
      samples.push({ turn: i + 1, wasmMB: round(memoryStats().wasmBytes / 1048576), heapMB: round(process.memoryUsage().heapUsed / 1048576), summarizerCalls: s.calls });
    }
  }
  return { turns: SOAK_TURNS, summarizerCalls: s.calls, degradedTurns: degraded, rejections, latestMissing, prepareMs: stats(times.map((t) => round(t, 2))), samples };
}

const results = { date: new Date().toISOString(), node: process.version, load: (await import('node:os')).loadavg().map((x) => round(x, 2)) };
const scenarios = { agent, chat, dead, ahead: aheadScenario, soak };
for (const name of ONLY) {
  log(`${name}...`);
  const t0 = now();
  results[name] = await scenarios[name]();
  log(`${name}: ${round((now() - t0) / 1000)} s`);
}
const out = path.join(ROOT, 'benches', 'results', 'conversation.json');
fs.writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
console.log(JSON.stringify(results, null, 2));
log(`wrote ${path.relative(ROOT, out)}`);
if (args.includes('--write')) {
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
  const lines = [`## Whole conversations`, '', `\`node benches/conversation.mjs --write\` (${r.date.slice(0, 16).replace('T', ' ')} UTC, Node ${r.node}, load ${r.load.join(' ')}). Deterministic fake summarizers, so the counts repeat; times are medians, p95 and max of one run on a shared 2-core machine (p50 / p95 / max, ms).`, ''];
  if (r.agent) {
    const a = r.agent;
    const f = a.lastInput.forms;
    lines.push('### A 200-turn coding-agent session (gpt-4o, 64,000-token window)', '');
    lines.push(`Each turn a task, a \`read_file\` call and its ${a.outputTokens}-token output; the host passes its whole history every turn.`, '');
    lines.push('| figure | value |', '|---|---|');
    lines.push(`| newest output reaching the model whole | ${a.newestWholeTurns} of ${a.turns} turns |`);
    lines.push(`| last turn's tool outputs | ${f.verbatim} verbatim, ${f.compacted} compacted, ${f.cleared} cleared (input ${a.lastInput.usedTokens} of ${a.lastInput.usableLimit} usable) |`);
    lines.push(`| summarizer calls | ${a.summarizerCalls} |`);
    lines.push(`| clearing steps | ${a.clearingSteps} |`);
    lines.push(`| calls whose model input extends the previous call's (prompt cache keeps hitting) | ${Math.round(a.prefixStable * 100)} % |`);
    lines.push(`| model input per call (tokens, p50 / p95 / max) | ${a.usedTokens.p50} / ${a.usedTokens.p95} / ${a.usedTokens.max} |`);
    lines.push(`| prepare (ms) | ${ms(a.prepareMs)} |`, '');
    lines.push('The last turn by age: ' + a.lastInput.byAge.map((x) => `${x.age}: ${x.form} ${x.tokens}`).join(', ') + ` … ${a.lastInput.oldest.age}: ${a.lastInput.oldest.form} ${a.lastInput.oldest.tokens}.`, '');
  }
  if (r.chat) {
    const c = r.chat;
    lines.push('### A 60-turn chat (gpt-4o, 16,000-token window)', '');
    lines.push('| figure | value |', '|---|---|');
    lines.push(`| summarizer calls, display history / stored chain | ${c.summarizerCalls.displayHistory} / ${c.summarizerCalls.storedChain} |`);
    lines.push(`| turns with the same model input for both hosts | ${c.sameModelInputTurns} of ${c.turns} |`);
    lines.push(`| largest summarizer input (tokens; usable limit ${c.summarizerInputTokens.usableLimit}) | ${c.summarizerInputTokens.max} |`);
    for (const x of c.afterCompaction) lines.push(`| after the compaction of turn ${x.turn} | ${x.usedTokens} of a ${x.targetLimit}-token target, ${x.assistantMessages} assistant messages, last answer kept: ${x.lastAnswerKept ? 'yes' : 'no'} |`);
    lines.push('');
  }
  if (r.dead) {
    const d = r.dead;
    lines.push('### A summarizer that is down (200 ms, then an error; 30 turns past the trigger)', '');
    lines.push(`${d.summarizerCalls} summarizer calls; the breaker opened on turn ${d.breakerOpensOnTurn}. prepare until then: ${ms(d.prepareMsUntilOpen)} ms; after: ${ms(d.prepareMsAfterOpen)} ms.`, '');
  }
  if (r.ahead) {
    const h = r.ahead;
    lines.push(`### Summaries made ahead of time (summarizer ${h.summarizerMs} ms, user pauses ${h.pauseMs} ms${h.scale !== 1 ? `: the 2 s / 3 s scenario scaled by ${h.scale}` : ''})`, '');
    lines.push('| prepare (ms) | plain turns | the turn that starts one | the turn that compacts | summarizer calls |', '|---|---|---|---|---|');
    lines.push(`| \`ahead: true\` | ${ms(h.ahead.plainMs)} | ${ms(h.ahead.startsAheadMs)} | ${ms(h.ahead.compactingMs)} | ${h.ahead.summarizerCalls} |`);
    lines.push(`| on the send path | ${ms(h.onTheSendPath.plainMs)} | – | ${ms(h.onTheSendPath.compactingMs)} | ${h.onTheSendPath.summarizerCalls} |`, '');
  }
  if (r.soak) {
    const s = r.soak;
    const first = s.samples[0];
    const lastS = s.samples.at(-1);
    lines.push(`### Soak: ${s.turns} turns of a display-history chat, a summarizer that is slow, fails in bursts, hangs and recovers`, '');
    lines.push(`${s.summarizerCalls} summarizer calls, ${s.degradedTurns} degraded turns, ${s.rejections} rejections, the latest user message missing ${s.latestMissing} times; prepare ${ms(s.prepareMs)} ms. Memory after GC, turn ${first.turn} → ${lastS.turn}: wasm ${first.wasmMB} → ${lastS.wasmMB} MB, JS heap ${first.heapMB} → ${lastS.heapMB} MB (the host's history grows by ~1.3 KB a message; the guard keeps a parsed copy of each message it was given, so that it is not sent again).`, '');
  }
  return lines.join('\n').trimEnd();
}
