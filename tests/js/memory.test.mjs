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

const CONFIG = { model: 'gpt-4o', contextWindow: 16000 };
const SYSTEM = { role: 'system', content: 'You help with a database migration.' };
const user = (i) => ({ role: 'user', content: `Question ${i}: how do I set up step ${i} of the migration? ${'Some detail about the setup. '.repeat(12)}` });
const answer = (i) => ({ role: 'assistant', content: `Answer ${i}: for step ${i}, run the script with --step ${i}. ${'It checks the schema and moves the rows. '.repeat(22)}` });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A summarizer that counts its calls (and may fail or be slow). */
function summarizer({ fail = false, delayMs = 0 } = {}) {
  const s = {
    calls: 0,
    signals: [],
    fail,
    async summarize({ messages, signal }) {
      s.calls++;
      s.signals.push(signal);
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
  const s = summarizer({ delayMs: 40 });
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
    }
    if (r.checkpoint) {
      usedAt = i;
      assert.ok(r.traces.some((t) => t.ahead && t.status === 'applied'));
      assert.ok(r.metrics.usedTokens < r.metrics.triggerLimit);
      assert.deepEqual(r.messages.at(-1), user(i));
    }
    history.push(answer(i));
    await sleep(60); // the user reads and types
  }
  assert.ok(startedAt >= 0 && usedAt > startedAt, `${startedAt} ${usedAt}`);
  assert.equal(s.calls, 1);
  assert.ok(traces.some((t) => t.ahead && t.status === 'completed'), 'its end is traced to the call that started it');
  guard.free();
});

test('crossing the trigger while the summary is still running waits for it; free() aborts one', async () => {
  const guard = new ContextGuard(CONFIG);
  const s = summarizer({ delayMs: 150 });
  const history = [SYSTEM];
  let i = 0;
  // Up to the turn that starts it, then straight on without a pause.
  for (; i < 50; i++) {
    history.push(user(i));
    const r = await guard.prepare(history, { summarize: s.summarize, ahead: true });
    history.push(answer(i));
    if (r.metrics.memory.ahead === 'running') break;
  }
  let used = null;
  for (i++; i < 60 && !used; i++) {
    history.push(user(i));
    const r = await guard.prepare(history, { summarize: s.summarize, ahead: true });
    if (r.checkpoint) used = r;
    history.push(answer(i));
  }
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
