// guard.prepare through the package: compaction with a summarizer, every failure mode of the
// callback ending in a documented degraded result, heartbeats, guidance, concurrency.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ContextGuard } from 'ctxguard';
import { buildConversation as conversation, withFrozen } from './helpers.mjs';

// `edits: 'trigger'`: the summarizer is asked at the trigger limit, as these tests expect. With the
// default (`'needed'`, docs/edits.md) a warm cache defers every edit to the usable limit, and deep
// clearing of these tool outputs then fits the conversation without a summary.
const CONFIG = { model: 'gpt-4o', contextWindow: 10000, reservedOutputTokens: 1000, edits: 'trigger' };

function assertPairs(messages) {
  const issued = new Set();
  const answered = new Set();
  for (const m of messages) {
    for (const c of m.tool_calls ?? []) issued.add(c.id);
    if (m.role === 'tool') {
      assert.ok(issued.has(m.tool_call_id), `result ${m.tool_call_id} without its call`);
      answered.add(m.tool_call_id);
    }
  }
  assert.deepEqual([...issued].sort(), [...answered].sort(), 'calls without results');
}

function assertLatestQuestionKept(result, input) {
  const last = input[input.length - 1];
  const users = result.messages.filter((m) => m.role === 'user');
  assert.deepEqual(users[users.length - 1], last);
}

test('a compaction with a SessionState summarizer', async () => {
  const guard = new ContextGuard(CONFIG);
  const lines = [];
  const beats = [];
  const traces = [];
  let seen;
  // The summarizer answers after the second heartbeat (whenever the timers fire).
  let twoBeats;
  const beaten = new Promise((resolve) => {
    twoBeats = resolve;
  });
  const r = await withFrozen(conversation(), (msgs) =>
    guard.prepare(msgs, {
      summarize: async (req) => {
        seen = req;
        await beaten;
        return { summary: 'Forty modules fail; each at its own step.', key_facts: ['module i fails at step i'], decisions: [], plan: { status: 'active', steps: [{ description: 'fix module 0', status: 'pending' }] }, open_questions: [] };
      },
      heartbeatMs: 30,
      onProgress: (e) => {
        if (beats.push(e) === 2) twoBeats();
      },
      onTrace: (t) => traces.push(t),
      logger: (l) => lines.push(l),
    }),
  );
  assert.equal(seen.format, 'openai');
  assert.equal(seen.attempt, 1);
  assert.ok(seen.signal instanceof AbortSignal);
  assert.ok(seen.instructions.includes("user's language"));
  assert.equal(seen.schema.type, 'object');
  assert.ok(seen.maxTokens > 0);
  assert.ok(seen.messages.length > 0 && !seen.messages.some((m) => m.role === 'system'));
  assert.equal(r.degraded, false);
  assert.equal(r.degradedReason, null);
  assert.equal(r.compaction.status, 'completed');
  // The summary replaces the older turns; the newest whole turns stay verbatim (the recent tail).
  const input = conversation();
  let tail = 0;
  while (JSON.stringify(r.messages.at(-2 - tail)) === JSON.stringify(input.at(-2 - tail))) tail++;
  assert.ok(tail >= 4, `a recent tail of ${tail} messages`);
  assert.equal(r.compaction.removedItems, 160 - tail);
  assert.deepEqual(r.messages.at(-2), input.at(-2), 'the last answer reaches the model as it was');
  assert.equal(r.compaction.tokensSaved, r.compaction.beforeTokens - r.compaction.afterTokens);
  assert.ok(r.metrics.usedTokens < r.metrics.targetLimit);
  assert.ok(beats.length >= 2 && beats.every((b) => b.operation === 'summary_compact' && b.status === 'in_progress' && b.elapsedMs >= 0));
  assert.deepEqual(traces, r.traces);
  assert.equal(r.traces.at(-1).operation, 'summary_compact');
  assert.equal(r.traces.at(-1).status, 'completed');
  assert.ok(lines.some((l) => l.startsWith('[SummaryCompact] completed')));
  // model-visible: no ctxguard metadata; checkpoint: marked
  assert.ok(r.messages.every((m) => !('ctxguard' in m)));
  assert.match(r.messages[1].content, /^\[ctxguard:summary\]/);
  assert.match(r.messages[1].content, /## Plan \(active\)\n- \[pending\] fix module 0/);
  assert.equal(r.checkpoint.messages[1].ctxguard.summaryCompacted, true);
  assert.ok(r.checkpoint.messages.some((m) => m.ctxguard?.checkpointRetained));
  assertPairs(r.messages);
  assertLatestQuestionKept(r, conversation());
});

const FAULTS = [
  ['throws synchronously', () => { throw new Error('boom'); }, 'callback_error', 3],
  ['rejects with an Error', async () => { throw new TypeError('bad'); }, 'callback_error', 3],
  ['rejects with a non-Error', () => Promise.reject('nope'), 'callback_error', 3],
  ['resolves undefined', async () => undefined, 'empty_output', 3],
  ['resolves an empty string', async () => '   ', 'empty_output', 3],
  ['resolves a number', async () => 42, 'invalid_output', 3],
  ['resolves the wrong shape', async () => ({ text: 'hi' }), 'invalid_output', 3],
  ['resolves a cyclic object', async () => { const a = {}; a.self = a; return a; }, 'invalid_output', 3],
  ['resolves an oversized text', async () => 'word '.repeat(20000), 'over_budget', 3],
  ['never settles', () => new Promise(() => {}), 'timeout', 3],
  ['settles after the timeout', () => new Promise((resolve) => setTimeout(() => resolve('late'), 300)), 'timeout', 3],
];

for (const [name, summarize, reason, attempts] of FAULTS) {
  test(`summarize ${name} → degraded '${reason}'`, async () => {
    const guard = new ContextGuard(CONFIG);
    const r = await guard.prepare(conversation(), { summarize, timeoutMs: 100, retryDelayMs: 0 });
    assert.equal(r.degraded, true);
    assert.equal(r.degradedReason, reason);
    assert.equal(r.compaction.status, 'fallback');
    assert.equal(r.compaction.failureReason, reason);
    assert.equal(r.compaction.attempts, attempts);
    // The evidence of the summarized turns (the newest ones stay verbatim in the recent tail).
    const note = r.messages.find((m) => m.role === 'system' && m.content.startsWith('[ctxguard:evidence]')).content;
    const newest = Math.max(...[...note.matchAll(/tool run_tests\(module=m(\d+)\) → .*module \1 FAILED/g)].map((x) => Number(x[1])));
    assert.ok(newest >= 0 && newest < 39, note);
    assert.ok(r.messages.some((m) => m.role === 'assistant' && typeof m.content === 'string' && m.content.startsWith(`Module ${newest + 1} fails`)), 'the turn after it is in the recent tail');
    assert.ok(r.metrics.usedTokens <= r.metrics.usableLimit);
    assertPairs(r.messages);
    assertLatestQuestionKept(r, conversation());
  });
}

test('the logger shows what a summarizer of the wrong shape returned', async () => {
  const lines = [];
  const r = await new ContextGuard(CONFIG).prepare(conversation(), { summarize: async () => ({ text: 'hi' }), retryDelayMs: 0, logger: (l) => lines.push(l) });
  assert.equal(r.degradedReason, 'invalid_output');
  assert.equal(lines.filter((l) => l.includes('failed: invalid_output (it returned {"text":"hi"})')).length, 3, lines.join('\n'));
});

test('a summarizer that fails twice and then answers completes on attempt 3', async () => {
  let calls = 0;
  const r = await new ContextGuard(CONFIG).prepare(conversation(), {
    summarize: async () => (++calls < 3 ? Promise.reject(new Error('flaky')) : 'Plain text summary.'),
  });
  assert.equal(r.degraded, false);
  assert.equal(r.compaction.attempts, 3);
});

/** A summarizer that answers with `answer(call)`, counting its calls. */
function counted(answer) {
  const s = { calls: 0, summarize: async () => answer(++s.calls) };
  return s;
}

/** The pauses `prepare` announced before each next attempt (ms; `null`: the next one at once). */
const pauses = (lines) => lines.filter((l) => l.startsWith('[SummaryCompact] attempt')).map((l) => {
  const m = /next attempt in (\d+) ms/.exec(l);
  return m ? Number(m[1]) : null;
});

test('errors and timeouts pause before the next attempt (jittered, doubling); invalid answers are asked again at once', async () => {
  // Rejects twice, then answers: pauses of 50-100 % of 200 ms, then of 400 ms (the pauses the
  // core decides and announces; how long the timers took is a benchmark's business).
  const lines = [];
  const flaky = counted((n) => (n < 3 ? Promise.reject(new Error('429 rate limited')) : 'Plain text summary.'));
  const r = await new ContextGuard(CONFIG).prepare(conversation(), { summarize: flaky.summarize, retryDelayMs: 200, logger: (l) => lines.push(l) });
  assert.equal(r.degraded, false);
  assert.equal(r.compaction.attempts, 3);
  assert.equal(flaky.calls, 3);
  const announced = pauses(lines);
  assert.equal(announced.length, 2, lines.join('\n'));
  assert.ok(announced[0] >= 100 && announced[0] <= 200 && announced[1] >= 200 && announced[1] <= 400, String(announced));

  // A timeout pauses too (each attempt 30 ms, then 100-200 ms, then 200-400 ms); no pause after the last.
  const timeouts = [];
  const hanging = counted(() => new Promise(() => {}));
  const t = await new ContextGuard(CONFIG).prepare(conversation(), { summarize: hanging.summarize, timeoutMs: 30, retryDelayMs: 200, logger: (l) => timeouts.push(l) });
  assert.equal(t.degradedReason, 'timeout');
  assert.equal(hanging.calls, 3);
  const p = pauses(timeouts);
  assert.ok(p.length === 3 && p[0] >= 100 && p[0] <= 200 && p[1] >= 200 && p[1] <= 400 && p[2] === null, String(p));

  // Answers that fail validation, and retryDelayMs: 0, are asked again at once.
  for (const [answer, opts, reason] of [[() => 42, { retryDelayMs: 2000 }, 'invalid_output'], [() => Promise.reject(new Error('x')), { retryDelayMs: 0 }, 'callback_error']]) {
    const log = [];
    const s = counted(answer);
    const d = await new ContextGuard(CONFIG).prepare(conversation(), { summarize: s.summarize, ...opts, logger: (l) => log.push(l) });
    assert.equal(d.degradedReason, reason);
    assert.equal(d.compaction.attempts, 3);
    assert.equal(s.calls, 3);
    assert.deepEqual(pauses(log), [null, null, null], `${reason}: ${log.join('\n')}`);
  }
});

test('heartbeats go on during a pause; an abort during it ends the attempts at once; bad retryDelayMs is INVALID_OPTIONS', async () => {
  const ac = new AbortController();
  const failing = counted(() => Promise.reject(new Error('503')));
  const beats = [];
  const lines = [];
  const onProgress = (e) => {
    beats.push(e);
    if (beats.length === 4) ac.abort();
  };
  const r = await new ContextGuard(CONFIG).prepare(conversation(), { summarize: failing.summarize, retryDelayMs: 60_000, heartbeatMs: 20, onProgress, signal: ac.signal, logger: (l) => lines.push(l) });
  // Ended during the 30-60 s pause: no second attempt.
  assert.equal(r.degradedReason, 'aborted');
  assert.equal(r.compaction.attempts, 1);
  assert.equal(failing.calls, 1);
  // The beats during the pause carry the attempt it waits for.
  assert.ok(beats.length >= 4 && beats.every((b) => b.operation === 'summary_compact' && b.status === 'in_progress' && b.attempt === 2), JSON.stringify(beats));
  assert.ok(lines.includes('[SummaryCompact] aborted during the pause before attempt 2'), lines.join('\n'));
  for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, '500']) {
    await assert.rejects(new ContextGuard(CONFIG).prepare(conversation(), { summarize: async () => 'x', retryDelayMs: bad }), (e) => e.code === 'INVALID_OPTIONS' && /retryDelayMs/.test(e.message), String(bad));
  }
});

test('no summarizer, an aborted signal, and a signal aborted while waiting', async () => {
  const none = await new ContextGuard(CONFIG).prepare(conversation());
  assert.equal(none.degradedReason, 'no_callback');
  assert.equal(none.compaction.attempts, 0);
  const already = AbortSignal.abort();
  const a = await new ContextGuard(CONFIG).prepare(conversation(), { summarize: async () => 'x', signal: already });
  assert.equal(a.degradedReason, 'aborted');
  const ac = new AbortController();
  let sawAbort = false;
  const pending = new ContextGuard(CONFIG).prepare(conversation(), {
    summarize: (req) => new Promise((_, reject) => req.signal.addEventListener('abort', () => { sawAbort = true; reject(req.signal.reason); })),
    signal: ac.signal,
  });
  setTimeout(() => ac.abort(), 30);
  const b = await pending;
  assert.equal(b.degradedReason, 'aborted');
  assert.equal(b.compaction.attempts, 1);
  assert.ok(sawAbort, 'the summarizer saw its signal abort');
});

test('observers that throw do not break prepare', async () => {
  const r = await new ContextGuard(CONFIG).prepare(conversation(), {
    summarize: async () => { await new Promise((resolve) => setTimeout(resolve, 60)); return 'ok summary'; },
    heartbeatMs: 10,
    onProgress: () => { throw new Error('progress bug'); },
    onTrace: () => { throw new Error('trace bug'); },
    logger: () => { throw new Error('logger bug'); },
  });
  assert.equal(r.degraded, false);
});

test('the guard stays usable while a summary is pending, and re-entrant prepare works', async () => {
  const guard = new ContextGuard(CONFIG);
  let inner;
  const outer = guard.prepare(conversation(), {
    summarize: async () => {
      inner = await guard.prepare([{ role: 'user', content: 'hi' }]);
      return 'outer summary';
    },
  });
  assert.ok(guard.measure(conversation()).usedTokens > 0);
  assert.ok(guard.budget.usableLimit > 0);
  const r = await outer;
  assert.equal(r.compaction.status, 'completed');
  assert.equal(inner.compaction, null);
});

test('under the trigger: no compaction; force compacts; guidance is not persisted', async () => {
  const guard = new ContextGuard({ model: 'gpt-4o' });
  const small = conversation(3);
  const plain = await guard.prepare(small);
  assert.equal(plain.compaction, null);
  assert.equal(plain.checkpoint, null);
  assert.deepEqual(plain.messages, small);
  const forced = await guard.prepare(small, { force: true, summarize: async () => 'Three modules fail.', guidance: 'Your last answer was cut off; continue concisely.' });
  assert.equal(forced.compaction.status, 'completed');
  assert.equal(forced.messages.at(-1).content, 'Your last answer was cut off; continue concisely.');
  assert.ok(!JSON.stringify(forced.checkpoint).includes('cut off'));
});

test('bad input rejects with a code; an oversized question is a clear error', async () => {
  const guard = new ContextGuard(CONFIG);
  await assert.rejects(guard.prepare([{ role: 'nope' }]), { name: 'CtxguardError', code: 'INVALID_ROLE' });
  await assert.rejects(guard.prepare(conversation(), { summarize: 'not a function' }), { code: 'INVALID_OPTIONS' });
  await assert.rejects(guard.prepare(conversation(), { timeoutMs: -1 }), { code: 'INVALID_OPTIONS' });
  await assert.rejects(guard.prepare(conversation(), { forse: true }), { code: 'INVALID_OPTIONS' });
  await assert.rejects(
    guard.prepare([{ role: 'user', content: 'word '.repeat(20000) }]),
    { name: 'CtxguardError', code: 'LATEST_MESSAGE_TOO_LARGE' },
  );
});

test('Anthropic: tool_use/tool_result pairs stay valid and the summary joins system', async () => {
  const msgs = [];
  for (let i = 0; i < 30; i++) {
    msgs.push({ role: 'user', content: `step ${i} ${'word '.repeat(300)}` });
    msgs.push({ role: 'assistant', content: [{ type: 'text', text: 'running' }, { type: 'tool_use', id: `tu${i}`, name: 'bash', input: { cmd: `make ${i}` } }] });
    msgs.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `tu${i}`, content: 'ok '.repeat(100) }] });
    msgs.push({ role: 'assistant', content: 'done' });
  }
  msgs.push({ role: 'user', content: 'next?' });
  const guard = new ContextGuard({ model: 'claude-sonnet-4-5', contextWindow: 12000, reservedOutputTokens: 1000 });
  const r = await guard.prepare(msgs, { system: 'Be terse.', summarize: async (req) => { assert.equal(req.format, 'anthropic'); return 'Thirty steps ran.'; } });
  assert.equal(r.compaction.status, 'completed');
  assert.match(JSON.stringify(r.system), /Be terse\.[\s\S]*\[ctxguard:summary\]/);
  const ids = new Set();
  for (const m of r.messages) {
    for (const b of Array.isArray(m.content) ? m.content : []) {
      if (b.type === 'tool_use') ids.add(b.id);
      if (b.type === 'tool_result') assert.ok(ids.delete(b.tool_use_id), 'result without call');
    }
  }
  assert.equal(ids.size, 0, 'call without result');
  assert.deepEqual(r.messages.at(-1), { role: 'user', content: 'next?' });
});

// Added by the reliability pass (issue 8): late settlement after an abort, and no timer or
// unhandled rejection left behind.
test('summarize settles after the signal was aborted → aborted, the late answer is ignored', async () => {
  for (const late of [(resolve) => resolve('A late but valid summary.'), (_, reject) => reject(new Error('late failure'))]) {
    const ac = new AbortController();
    const pending = new ContextGuard(CONFIG).prepare(conversation(), {
      // Ignores its signal and settles 80 ms after the abort.
      summarize: () => new Promise((resolve, reject) => setTimeout(() => late(resolve, reject), 110)),
      signal: ac.signal,
      timeoutMs: 5000,
    });
    setTimeout(() => ac.abort(), 30);
    const r = await pending;
    assert.equal(r.degradedReason, 'aborted');
    assert.equal(r.compaction.attempts, 1);
    assert.ok(r.metrics.usedTokens <= r.metrics.usableLimit);
    await new Promise((resolve) => setTimeout(resolve, 150)); // let the late settlement happen
  }
});

test('no pending timer and no unhandled rejection: a child process with hanging summarizers exits by itself', async () => {
  const { spawn } = await import('node:child_process');
  const script = `
    import { ContextGuard } from 'ctxguard';
    const msgs = [{ role: 'system', content: 's' }];
    for (let i = 0; i < 40; i++) msgs.push({ role: 'user', content: 'q' + i + ' ' + 'detail '.repeat(60) }, { role: 'assistant', content: 'a' + i + ' ' + 'because '.repeat(60) });
    msgs.push({ role: 'user', content: 'last' });
    const cfg = { model: 'gpt-4o', contextWindow: 8000, reservedOutputTokens: 1000 };
    const out = [];
    // never settles, with heartbeats and a timeout
    out.push((await new ContextGuard(cfg).prepare(msgs, { force: true, summarize: () => new Promise(() => {}), timeoutMs: 50, heartbeatMs: 10, onProgress() {} })).degradedReason);
    // rejects after its timeout (a late rejection must not be unhandled)
    out.push((await new ContextGuard(cfg).prepare(msgs, { force: true, summarize: () => new Promise((_, rej) => setTimeout(() => rej(new Error('late')), 80)), timeoutMs: 20 })).degradedReason);
    // aborted while hanging
    const ac = new AbortController(); setTimeout(() => ac.abort(), 20);
    out.push((await new ContextGuard(cfg).prepare(msgs, { force: true, summarize: () => new Promise(() => {}), signal: ac.signal, heartbeatMs: 5 })).degradedReason);
    // aborted during a long pause between attempts (its timer must not keep the process alive)
    const ac2 = new AbortController();
    out.push((await new ContextGuard(cfg).prepare(msgs, { force: true, summarize: () => { setTimeout(() => ac2.abort(), 10); return Promise.reject(new Error('x')); }, signal: ac2.signal, retryDelayMs: 600000 })).degradedReason);
    console.log(JSON.stringify(out));
  `;
  const child = spawn(process.execPath, ['--unhandled-rejections=strict', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => { stdout += d; });
  child.stderr.on('data', (d) => { stderr += d; });
  const code = await new Promise((resolve) => {
    const kill = setTimeout(() => { child.kill('SIGKILL'); resolve('hung'); }, 20_000);
    child.on('exit', (c) => { clearTimeout(kill); resolve(c); });
  });
  assert.equal(code, 0, `child exit ${code}: ${stderr}`);
  assert.deepEqual(JSON.parse(stdout.trim().split('\n').pop()), ['timeout', 'timeout', 'aborted', 'aborted']);
});
