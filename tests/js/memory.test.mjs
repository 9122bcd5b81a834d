// Whole conversations through the package: a chat client that passes its whole display history
// on every send, a reload with guard.restore(checkpoint), a summarizer that is down (the circuit
// breaker), summaries made ahead of time in the background, and guard.free() during one. The
// figures asserted are counts (summarizer calls, messages); time is a benchmark's business
// (benches/conversation.mjs).
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { test } from 'node:test';
import { ContextGuard } from 'ctxguard';
import { createWorkerGuard } from 'ctxguard/worker';

// `edits: 'trigger'`: compaction at the trigger limit even while the cache is warm (docs/edits.md).
const CONFIG = { model: 'gpt-4o', contextWindow: 16000, edits: 'trigger' };
const SYSTEM = { role: 'system', content: 'You help with a database migration.' };
const user = (i) => ({ role: 'user', content: `Question ${i}: how do I set up step ${i} of the migration? ${'Some detail about the setup. '.repeat(12)}` });
const answer = (i) => ({ role: 'assistant', content: `Answer ${i}: for step ${i}, run the script with --step ${i}. ${'It checks the schema and moves the rows. '.repeat(22)}` });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits, one event-loop turn at a time, until `done()` holds (no clock: a bounded number of turns). */
async function until(done, what) {
  for (let turn = 0; turn < 100_000; turn++) {
    if (done()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.fail(`never happened: ${what}`);
}

/** Whether `promise` is still pending after the microtasks and two event-loop turns have run. */
async function pending(promise) {
  let settled = false;
  promise.then(() => (settled = true), () => (settled = true));
  await new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
  return !settled;
}

/**
 * A summarizer that counts its calls (and may fail or be slow). `held`: each call waits until the
 * test calls `open()`, so a test decides when a summary made ahead of time is done, not the clock.
 */
function summarizer({ fail = false, delayMs = 0, held = false } = {}) {
  let open;
  const gate = new Promise((resolve) => (open = resolve));
  const s = {
    calls: 0,
    signals: [],
    fail,
    open: () => open(),
    async summarize({ messages, signal }) {
      s.calls++;
      s.signals.push(signal);
      if (held) await gate;
      if (delayMs) await sleep(delayMs);
      if (s.fail) throw new Error('summarizer down');
      return `Summary of ${messages.length} messages: the user migrates step by step.`;
    },
  };
  s.summarize = s.summarize.bind(s);
  return s;
}

test('a display-history client: the summarizer is asked once per compaction, and a reload restores it', async () => {
  const guard = new ContextGuard({ ...CONFIG, checkpointKey: 'app-secret' });
  const s = summarizer();
  const history = [SYSTEM];
  let stored = null;
  let compactions = 0;
  for (let i = 0; i < 60; i++) {
    history.push(user(i));
    const r = await guard.prepare(history, { summarize: s.summarize, retryDelayMs: 0 });
    assert.deepEqual(r.messages.at(-1), user(i), 'the latest question is sent, last');
    assert.ok(r.metrics.usedTokens <= r.metrics.usableLimit);
    if (r.checkpoint) {
      compactions++;
      stored = JSON.stringify(r.checkpoint);
      // The recent tail: the last answer reaches the model whole.
      assert.ok(r.messages.some((m) => m.content === answer(i - 1).content), `turn ${i}: the last answer is kept`);
      assert.ok(r.metrics.usedTokens >= r.metrics.targetLimit / 2);
    }
    history.push(answer(i));
  }
  assert.ok(compactions >= 2);
  assert.equal(s.calls, compactions, 'one summarizer call per compaction, none to apply a summary again');
  // Reload: a new guard, the stored checkpoint, the whole display history and a new question.
  history.push(user(60));
  const expected = await guard.prepare(history, { summarize: s.summarize });
  const reloaded = new ContextGuard({ ...CONFIG, checkpointKey: 'app-secret' });
  const restored = reloaded.restore(JSON.parse(stored));
  assert.equal(restored.restored, true);
  assert.ok(restored.coveredMessages > 0);
  const again = summarizer();
  const r = await reloaded.prepare(history, { summarize: again.summarize });
  assert.equal(again.calls, 0, 'no summarizer call after the reload');
  assert.deepEqual(r.messages, expected.messages, 'the same model input as the guard that compacted');
  assert.equal(r.metrics.memory.coveredMessages, restored.coveredMessages);
  // Not this app's checkpoint, or not a checkpoint: not restored, with the reason.
  assert.deepEqual(new ContextGuard({ ...CONFIG, checkpointKey: 'other' }).restore(JSON.parse(stored)), { restored: false, coveredMessages: 0, reason: 'no_summary' });
  assert.equal(reloaded.restore({ messages: [user(1)] }).reason, 'no_summary');
  assert.throws(() => reloaded.restore({ messages: 'nope' }), { name: 'CtxguardError', code: 'INVALID_MESSAGES' });
  guard.free();
  reloaded.free();
});

test('a summarizer that is down: three compactions of three attempts, then the breaker opens', async () => {
  const guard = new ContextGuard(CONFIG);
  const s = summarizer({ fail: true });
  const history = [SYSTEM];
  let open = 0;
  for (let i = 0; i < 70; i++) {
    history.push(user(i));
    const r = await guard.prepare(history, { summarize: s.summarize, retryDelayMs: 0 });
    assert.deepEqual(r.messages.at(-1), user(i));
    assert.equal(r.checkpoint, null, 'a fallback is never persisted');
    if (r.degradedReason === 'breaker_open') {
      open++;
      assert.equal(r.metrics.breaker.state, 'open');
      assert.ok(r.metrics.breaker.closesInMs > 0);
    }
    history.push(answer(i));
  }
  assert.equal(s.calls, 9);
  assert.ok(open >= 10, `${open} sends without asking`);
  guard.resetBreaker();
  assert.equal(guard.measure(history).breaker.state, 'closed');
  s.fail = false;
  history.push(user(70));
  const r = await guard.prepare(history, { summarize: s.summarize });
  assert.equal(s.calls, 10);
  assert.equal(r.degraded, false);
  assert.ok(r.checkpoint);
  guard.free();
});

test('a summary made ahead of time is written while the user reads, and used when the trigger is crossed', async () => {
  const guard = new ContextGuard(CONFIG);
  const s = summarizer({ held: true });
  const history = [SYSTEM];
  const traces = [];
  let startedAt = -1;
  let usedAt = -1;
  for (let i = 0; i < 50 && usedAt < 0; i++) {
    history.push(user(i));
    const r = await guard.prepare(history, { summarize: s.summarize, ahead: true, onTrace: (t) => traces.push(t) });
    assert.equal(r.compaction === null || r.compaction.attempts === 0, true, 'never asked on the send path');
    if (r.traces.some((t) => t.operation === 'summary_compact' && t.ahead && t.status === 'in_progress')) {
      startedAt = i;
      assert.equal(r.metrics.memory.ahead, 'running');
      assert.equal(r.checkpoint, null);
      // The user reads and types while the summary is written; it is done before the next send.
      await until(() => s.calls === 1, 'the summarizer asked in the background');
      s.open();
      await until(() => guard.measure(history).memory.ahead === 'ready', 'the summary made ahead of time ready');
    }
    if (r.checkpoint) {
      usedAt = i;
      assert.ok(r.traces.some((t) => t.ahead && t.status === 'applied'));
      assert.ok(r.metrics.usedTokens < r.metrics.triggerLimit);
      assert.deepEqual(r.messages.at(-1), user(i));
    }
    history.push(answer(i));
  }
  assert.ok(startedAt >= 0 && usedAt > startedAt, `${startedAt} ${usedAt}`);
  assert.equal(s.calls, 1);
  assert.ok(traces.some((t) => t.ahead && t.status === 'completed'), 'its end is traced to the call that started it');
  guard.free();
});

test('crossing the trigger while the summary is still running waits for it; free() aborts one', async () => {
  const guard = new ContextGuard(CONFIG);
  const s = summarizer({ held: true });
  const history = [SYSTEM];
  let i = 0;
  // Up to the turn that starts it, then on while it is still running (the test holds it).
  for (; i < 50; i++) {
    history.push(user(i));
    const r = await guard.prepare(history, { summarize: s.summarize, ahead: true });
    history.push(answer(i));
    if (r.metrics.memory.ahead === 'running') break;
  }
  let used = null;
  let waited = false;
  for (i++; i < 60 && !used; i++) {
    history.push(user(i));
    const call = guard.prepare(history, { summarize: s.summarize, ahead: true });
    if (await pending(call)) {
      // This send crossed the trigger and waits for the running summary: let it finish.
      waited = true;
      s.open();
    }
    const r = await call;
    if (r.checkpoint) used = r;
    history.push(answer(i));
  }
  assert.ok(waited, 'a send waited for the running summary');
  assert.ok(used, 'used once the trigger was crossed');
  assert.equal(s.calls, 1, 'waited for the running summary instead of asking again');
  guard.free();

  // free() while one runs: its signal aborts.
  const g2 = new ContextGuard(CONFIG);
  const slow = summarizer({ delayMs: 5000 });
  const h2 = [SYSTEM];
  for (let j = 0; j < 50; j++) {
    h2.push(user(j));
    const r = await g2.prepare(h2, { summarize: slow.summarize, ahead: true, timeoutMs: 10000 });
    h2.push(answer(j));
    if (r.metrics.memory.ahead === 'running') break;
  }
  assert.equal(slow.calls, 1);
  await sleep(0);
  g2.free();
  assert.equal(slow.signals[0].aborted, true, 'free() aborted the summary made ahead of time');
});

test('restore, resetBreaker and summaries ahead of time work through a worker too', async () => {
  const worker = new Worker("import('ctxguard/worker/serve');", { eval: true });
  const guard = await createWorkerGuard(worker, CONFIG);
  try {
    const s = summarizer({ delayMs: 30 });
    const history = [SYSTEM];
    let checkpoint = null;
    for (let i = 0; i < 50 && !checkpoint; i++) {
      history.push(user(i));
      const r = await guard.prepare(history, { summarize: s.summarize, ahead: true });
      checkpoint = r.checkpoint;
      history.push(answer(i));
      await sleep(50);
    }
    assert.ok(checkpoint, 'the summary made ahead of time in the worker was used');
    assert.equal(s.calls, 1);
    const fresh = await guard.worker.createGuard(CONFIG);
    const restored = await fresh.restore(JSON.parse(JSON.stringify(checkpoint)));
    assert.equal(restored.restored, true);
    const again = summarizer();
    history.push(user(99));
    const r = await fresh.prepare(history, { summarize: again.summarize });
    assert.equal(again.calls, 0);
    assert.ok(r.metrics.memory.coveredMessages > 0);
    assert.equal(await fresh.resetBreaker(), undefined);
  } finally {
    await guard.terminate();
  }
});

/** The chat of `user` / `answer` through `turns` turns in `format`, compacting as it goes. */
async function compactedChat(format, model, { turns = 45, key = 'app-secret', system } = {}) {
  const shape = format === 'gemini' ? { user: (i) => ({ role: 'user', parts: [{ text: user(i).content }] }), answer: (i) => ({ role: 'model', parts: [{ text: answer(i).content }] }) } : { user, answer };
  const config = { model, format, contextWindow: 16000, checkpointKey: key };
  const guard = new ContextGuard(config);
  const s = summarizer();
  const history = format === 'openai' && !system ? [SYSTEM] : [];
  let stored = null;
  for (let i = 0; i < turns; i++) {
    history.push(shape.user(i));
    const r = await guard.prepare(history, { system, summarize: s.summarize });
    if (r.checkpoint) stored = JSON.stringify(r.checkpoint);
    history.push(shape.answer(i));
  }
  history.push(shape.user(turns));
  return { guard, config, history, stored, calls: s.calls, shape };
}

test('restore after a JSON round trip gives the same model input in every format, the host system once', async () => {
  const system = 'You help with a database migration.';
  for (const [format, model] of [['openai', 'gpt-4o'], ['anthropic', 'claude-sonnet-4'], ['ai-sdk', 'gpt-4o'], ['openai-responses', 'gpt-4o'], ['gemini', 'gemini-2.5']]) {
    const c = await compactedChat(format, model, { system });
    assert.ok(c.stored && c.calls >= 1, format);
    const expected = await c.guard.prepare(c.history, { system });
    const reloaded = new ContextGuard(c.config);
    const restored = reloaded.restore(JSON.parse(c.stored));
    assert.equal(restored.restored, true, format);
    const again = summarizer();
    const traces = [];
    const r = await reloaded.prepare(c.history, { system, summarize: again.summarize, onTrace: (t) => traces.push(t) });
    assert.equal(again.calls, 0, `${format}: no summarizer call after the reload`);
    assert.deepEqual(r.messages, expected.messages, format);
    assert.deepEqual(r.system, expected.system, `${format}: the same system`);
    assert.ok(JSON.stringify([r.system, r.messages]).split(system).length - 1 <= 1, `${format}: the host's system prompt at most once`);
    assert.ok(!traces.some((t) => t.failureReason === 'checkpoint_mismatch'), format);
    c.guard.free();
    reloaded.free();
  }
});

test('a tampered, foreign-key or foreign-conversation checkpoint is never applied, and says so', async () => {
  const c = await compactedChat('openai', 'gpt-4o');
  const stored = JSON.parse(c.stored);
  const summaryAt = stored.messages.findIndex((m) => m.role === 'system' && m.content.includes('[ctxguard:summary]'));
  // The summary's text edited, or its covers widened: the tag no longer verifies.
  const edited = structuredClone(stored);
  edited.messages[summaryAt].content = edited.messages[summaryAt].content.replace('Summary of', 'Forged summary of');
  const widened = JSON.parse(c.stored.replace(/covers=(\d+):/, (_, n) => `covers=${Number(n) + 2}:`));
  for (const bad of [edited, widened]) assert.deepEqual(new ContextGuard(c.config).restore(bad), { restored: false, coveredMessages: 0, reason: 'no_summary' });
  // A summary written by a user (a user message cannot carry a checkpoint).
  const asUser = structuredClone(stored);
  asUser.messages[summaryAt].role = 'user';
  assert.equal(new ContextGuard(c.config).restore(asUser).restored, false);
  // Sealed under another key: not this app's.
  assert.equal(new ContextGuard({ ...c.config, checkpointKey: 'other' }).restore(stored).restored, false);
  // Genuine, but another conversation: restored, never applied; the first prepare traces it once.
  const g = new ContextGuard(c.config);
  assert.equal(g.restore(stored).restored, true);
  const other = [SYSTEM, user(100), answer(100), user(101)];
  const s = summarizer();
  const traces = [];
  const r = await g.prepare(other, { summarize: s.summarize, onTrace: (t) => traces.push(t) });
  assert.deepEqual(r.messages, other);
  assert.equal(r.metrics.memory.coveredMessages, 0);
  const mismatch = r.traces.filter((t) => t.operation === 'summary_compact' && t.status === 'noop' && t.failureReason === 'checkpoint_mismatch');
  assert.equal(mismatch.length, 1, JSON.stringify(r.traces));
  assert.equal(traces.filter((t) => t.failureReason === 'checkpoint_mismatch').length, 1, 'onTrace sees it too');
  const next = await g.prepare([...other, answer(101), user(102)], { summarize: s.summarize });
  assert.ok(!next.traces.some((t) => t.failureReason === 'checkpoint_mismatch'), 'said once');
  assert.equal(s.calls, 0);
  c.guard.free();
  g.free();
});

test('the breaker in metrics: failures, open with the calls left, half open after them, resetBreaker', async () => {
  const guard = new ContextGuard({ ...CONFIG, breaker: { failures: 2, cooldownCalls: 3 } });
  const s = summarizer({ fail: true });
  const history = [SYSTEM];
  const seen = [];
  for (let i = 0; i < 60; i++) {
    history.push(user(i));
    const before = s.calls;
    const r = await guard.prepare(history, { summarize: s.summarize, retryDelayMs: 0 });
    history.push(answer(i));
    // A compaction, or the previous fallback sent again while the breaker is open.
    if (r.compaction || r.degraded) seen.push({ asked: s.calls - before, reason: r.degradedReason, ...r.metrics.breaker });
  }
  // Closed: 3 attempts, failures counted; open after the second failed compaction.
  assert.deepEqual(seen[0], { asked: 3, reason: 'callback_error', state: 'closed', failures: 1, closesInMs: null, closesAfterCalls: null });
  assert.equal(seen[1].state, 'open');
  assert.equal(seen[1].failures, 2);
  assert.equal(seen[1].closesAfterCalls, 3);
  assert.ok(seen[1].closesInMs > 0);
  // While open the summarizer is not asked; then one attempt half open, which fails: open again.
  const open = seen.slice(2).filter((x) => x.reason === 'breaker_open');
  assert.ok(open.length >= 2 && open.every((x) => x.asked === 0 && x.state === 'open'));
  assert.deepEqual(open.map((x) => x.closesAfterCalls).slice(0, 2), [2, 1]);
  const halfOpen = seen.slice(2).filter((x) => x.asked > 0);
  assert.ok(halfOpen.length >= 2 && halfOpen.every((x) => x.asked === 1 && x.state === 'open'), JSON.stringify(halfOpen));
  // resetBreaker closes it at once: the next compaction asks again (3 attempts) and succeeds.
  guard.resetBreaker();
  assert.deepEqual(guard.measure(history).breaker, { state: 'closed', failures: 0, closesInMs: null, closesAfterCalls: null });
  s.fail = false;
  history.push(user(60));
  const calls = s.calls;
  const r = await guard.prepare(history, { summarize: s.summarize });
  assert.equal(s.calls, calls + 1);
  assert.ok(r.checkpoint && !r.degraded);
  guard.free();
});

test('a summary made ahead of time is aborted by the starting call\'s signal; the next compaction asks again', async () => {
  const guard = new ContextGuard(CONFIG);
  const slow = summarizer({ delayMs: 5000 });
  const history = [SYSTEM];
  const controller = new AbortController();
  const traces = [];
  let i = 0;
  for (; i < 50; i++) {
    history.push(user(i));
    const r = await guard.prepare(history, { summarize: slow.summarize, ahead: true, timeoutMs: 10000, signal: controller.signal, onTrace: (t) => traces.push(t) });
    history.push(answer(i));
    if (r.metrics.memory.ahead === 'running') break;
  }
  assert.equal(slow.calls, 1);
  controller.abort();
  assert.equal(slow.signals[0].aborted, true, 'the signal reached the summary made ahead of time');
  await until(() => traces.some((t) => t.ahead && t.status === 'fallback'), 'the aborted summary traced');
  const failed = traces.find((t) => t.ahead && t.status === 'fallback');
  assert.equal(failed?.failureReason, 'aborted');
  assert.equal(guard.measure(history).memory.ahead, 'failed');
  // The conversation goes on: the call that crosses the trigger compacts on the send path.
  const fast = summarizer();
  let compacted = null;
  for (i++; i < 60 && !compacted; i++) {
    history.push(user(i));
    const r = await guard.prepare(history, { summarize: fast.summarize });
    if (r.checkpoint) compacted = r;
    history.push(answer(i));
  }
  assert.ok(compacted, 'compacted once the trigger was crossed');
  assert.equal(fast.calls, 1);
  assert.equal(slow.calls, 1, 'the aborted one is not asked again');
  guard.free();
});

test('free() during a summary made ahead of time: aborted, and nothing runs after', async () => {
  const guard = new ContextGuard(CONFIG);
  const slow = summarizer({ delayMs: 200 });
  const history = [SYSTEM];
  for (let i = 0; i < 50; i++) {
    history.push(user(i));
    const r = await guard.prepare(history, { summarize: slow.summarize, ahead: true });
    history.push(answer(i));
    if (r.metrics.memory.ahead === 'running') break;
  }
  guard.free();
  assert.equal(slow.calls, 1);
  assert.equal(slow.signals[0].aborted, true);
  await sleep(300);
  assert.equal(slow.calls, 1, 'no retry after free()');
  assert.throws(() => guard.measure(history));
});
