// ctxguard/worker in Node worker_threads: the same results as the main-thread API for every
// method and every summarizer behaviour, errors that keep name/message/code/index, abort and
// timeout reaching the summarizer on the main thread, the delta transfer (only messages the
// worker has not seen), custom methods, terminate/free, and a worker that cannot serve.
// The browser module-worker path is tested in tests/browser/worker.test.mjs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { ContextGuard, countMessages, detectFormat, listAttachments } from 'ctxguard';
import { WorkerConnection, WorkerGuard, connectGuardWorker, createWorkerGuard } from 'ctxguard/worker';
import { generateInputs } from '../../benches/lib/inputs.mjs';
import { buildConversation as conversation } from './helpers.mjs';

const WORKER = new URL('./fixtures/guard-worker.mjs', import.meta.url);
// `edits: 'trigger'`: the summarizer is asked at the trigger limit, as these tests expect. With the
// default (`'needed'`, docs/edits.md) a warm cache defers every edit to the usable limit, and deep
// clearing of these tool outputs then fits the conversation without a summary.
const CONFIG = { model: 'gpt-4o', contextWindow: 10000, reservedOutputTokens: 1000, edits: 'trigger' };

/** Times are not compared: durationMs anywhere, and "duration=...ms" and the (random) pause before the next attempt in log lines. */
function timeless(value) {
  return JSON.parse(JSON.stringify(value, (k, v) => (k === 'durationMs' || k === 'elapsedMs' ? 0 : v)));
}
const timelessLines = (lines) => lines.map((l) => l.replace(/duration=\d+ms/, 'duration=?ms').replace(/next attempt in \d+ ms/, 'next attempt in ? ms'));

/** What a call gives, or the error it throws, as comparable data. */
async function outcome(fn) {
  try {
    return { ok: timeless(await fn()) };
  } catch (e) {
    return { error: { isError: e instanceof Error, name: e.name, message: e.message, code: e.code, index: e.index } };
  }
}

/**
 * prepare (or settle) with the same summarizer on a fresh guard on the main thread and a fresh
 * one in the worker; everything they report. `makeSummarize({ heard })`: `heard(n)` resolves once
 * `n` heartbeats have arrived (a summarizer that answers after them, rather than after a time).
 */
async function both(connection, method, messages, options, makeSummarize) {
  const run = async (guard) => {
    const lines = [];
    const beats = [];
    const traces = [];
    const requests = [];
    const waiting = [];
    const heard = (n) => new Promise((resolve) => (beats.length >= n ? resolve() : waiting.push([n, resolve])));
    const summarize = makeSummarize?.({ heard });
    const opts = {
      ...options,
      logger: (l) => lines.push(l),
      onProgress: (e) => {
        beats.push(e);
        for (const [n, resolve] of waiting) if (beats.length >= n) resolve();
      },
      onTrace: (t) => traces.push(t),
      ...(summarize ? { summarize: (req) => {
        requests.push({ ...req, signal: req.signal instanceof AbortSignal });
        return summarize(req);
      } } : {}),
    };
    if (method === 'settle') delete opts.onTrace;
    const result = await outcome(() => guard[method](messages, opts));
    return { result, lines: timelessLines(lines), traces: timeless(traces), requests: timeless(requests), beats: beats.length, beatShape: beats.map((b) => `${b.operation} ${b.status} ${b.attempt}`) };
  };
  const local = new ContextGuard(CONFIG);
  const remote = await connection.createGuard(CONFIG);
  try {
    return { main: await run(local), worker: await run(remote) };
  } finally {
    local.free();
    remote.free();
  }
}

let globalGuard;

before(async () => {
  globalGuard = await createWorkerGuard(new Worker(WORKER), CONFIG);
});

after(async () => {
  await globalGuard?.terminate();
});

describe('same results as the main-thread API', () => {
  test('measure, guardSources, countMessages, budget and model', async () => {
    const local = new ContextGuard(CONFIG);
    const guard = await createWorkerGuard(globalGuard.worker, CONFIG);
    const msgs = conversation();
    assert.deepEqual(guard.budget, local.budget);
    assert.deepEqual(guard.model, local.model);
    assert.deepEqual(await guard.measure(msgs), local.measure(msgs));
    const traces = [];
    const g = await guard.guardSources(msgs, { emergency: true, onTrace: (t) => traces.push(t) });
    const expected = local.guardSources(msgs, { emergency: true });
    assert.deepEqual(timeless(g), timeless(expected));
    assert.deepEqual(timeless(traces), timeless(expected.traces));
    assert.deepEqual(await guard.countMessages(msgs, { model: 'gpt-4o' }), countMessages(msgs, { model: 'gpt-4o' }));
    assert.deepEqual(await guard.worker.countTokens('tiktoken is great!', { encoding: 'cl100k_base' }), 6);
    assert.equal((await guard.worker.knownModels()).length > 10, true);
    assert.equal((await guard.worker.modelInfo('claude-sonnet-4-5')).kind, 'estimate');
    assert.equal((await guard.worker.classifyProviderError(Object.assign(new Error('maximum context length exceeded'), { status: 400 }))).kind, 'context_overflow');
    assert.deepEqual(guard.sourceLimits, local.sourceLimits);
    const pasted = [{ role: 'user', content: `<attachment name="log.txt">\n${'line of the log\n'.repeat(2000)}</attachment>\nWhat failed?` }];
    const listed = await guard.worker.listAttachments(pasted);
    assert.equal(listed.length, 1);
    assert.deepEqual(listed, listAttachments(pasted));
    assert.equal(await guard.worker.detectFormat({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }), detectFormat({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }));
    assert.equal(await guard.worker.detectFormat(msgs), 'openai');
    local.free();
  });

  const summarizers = {
    'a SessionState': () => async () => ({ summary: 'Forty modules fail.', key_facts: ['module i fails'], decisions: [], plan: null, open_questions: [] }),
    'plain text after two heartbeats': ({ heard }) => async () => {
      await heard(2);
      return 'Forty modules fail, one per step.';
    },
    'an Error thrown synchronously': () => () => {
      throw new TypeError('no model configured');
    },
    'a string rejection': () => () => Promise.reject('quota exceeded'),
    'a failure then an answer': () => {
      let n = 0;
      return async () => {
        n++;
        if (n < 3) throw Object.assign(new Error(`flaky ${n}`), { name: 'HttpError' });
        return 'third time lucky';
      };
    },
    'a hang (timeout)': () => ({ signal }) => new Promise((resolve) => signal.addEventListener('abort', () => resolve('too late'))),
    'a number (invalid output)': () => async () => 42,
    'an empty string': () => async () => '   ',
    'a cyclic object': () => async () => {
      const o = { summary: 'x' };
      o.self = o;
      return o;
    },
    'an answer with a function field and a Date': () => async () => ({ summary: 'dated', key_facts: [], decisions: [], plan: null, open_questions: [], at: new Date(0), fn: () => 1 }),
    'over its token limit': () => async () => 'word '.repeat(5000),
  };
  // A minute per attempt (it only stops a hung test: no summarizer here is slow), except for the
  // one that hangs, whose three attempts time out after 150 ms each.
  const timeouts = { 'a hang (timeout)': 150 };
  for (const [name, make] of Object.entries(summarizers)) {
    test(`prepare with a summarizer answering ${name}`, async () => {
      const r = await both(globalGuard.worker, 'prepare', conversation(), { heartbeatMs: 40, timeoutMs: timeouts[name] ?? 60_000, retryDelayMs: 0 }, make);
      assert.deepEqual(r.worker.result, r.main.result);
      assert.deepEqual(r.worker.lines, r.main.lines);
      assert.deepEqual(r.worker.traces, r.main.traces);
      assert.deepEqual(r.worker.requests, r.main.requests, 'the summarizer gets the same requests');
      if (name.includes('heartbeats')) assert.ok(r.main.beats >= 2 && r.worker.beats >= 2, `${r.main.beats} / ${r.worker.beats} heartbeats`);
      if (r.main.beats > 0) {
        assert.ok(r.worker.beats > 0, 'heartbeats are forwarded');
        assert.deepEqual(new Set(r.worker.beatShape), new Set(r.main.beatShape));
      }
    });
  }

  test('prepare without a summarizer, and settle with one', async () => {
    const none = await both(globalGuard.worker, 'prepare', conversation(), {}, null);
    assert.deepEqual(none.worker.result, none.main.result);
    assert.equal(none.worker.result.ok.degradedReason, 'no_callback');
    const settle = await both(globalGuard.worker, 'settle', conversation(10), { heartbeatMs: 40 }, () => async () => ({
      session_state: { summary: 'Ten modules.', key_facts: [], decisions: [], plan: null, open_questions: [] },
      memory_entries: ['m'], reflections: [], learnings: ['l'],
    }));
    assert.deepEqual(settle.worker.result, settle.main.result);
    assert.equal(settle.worker.result.ok.degraded, false);
  });

  test('messages are read as JSON.stringify reads them, on both sides', async () => {
    class Note {
      constructor(text) {
        this.text = text;
      }
      toJSON() {
        return { role: 'user', content: `note: ${this.text}` };
      }
    }
    const odd = [
      { role: 'system', content: 'Be brief.', when: new Date(0), extra: undefined, fn: () => 'dropped' },
      new Note('a class instance with toJSON'),
      { role: 'user', content: 'lone \ud800 surrogate', meta: new Map([['a', 1]]) },
      { role: 'assistant', content: [{ type: 'text', text: 'parts' }], sym: Symbol('x') },
    ];
    const local = new ContextGuard(CONFIG);
    const guard = await globalGuard.worker.createGuard(CONFIG);
    assert.deepEqual(await outcome(() => guard.measure(odd)), await outcome(() => local.measure(odd)));
    assert.deepEqual(await outcome(() => guard.guardSources(odd)), await outcome(() => local.guardSources(odd)));
    const cyclic = { role: 'user', content: 'x' };
    cyclic.self = cyclic;
    for (const bad of [[cyclic], [{ role: 'user', content: 'x', n: 10n }], 'not a list', [null], [{ role: 'wizard', content: 'hi' }], [{ role: 'user', content: 'ok' }, { role: 'user' }]]) {
      const w = await outcome(() => guard.measure(bad));
      assert.deepEqual(w, await outcome(() => local.measure(bad)), JSON.stringify(String(bad)));
      assert.equal(w.error.isError, true);
      assert.equal(w.error.name, 'CtxguardError');
    }
    local.free();
  });

  test('errors keep name, message, code and index; options are checked as on the main thread', async () => {
    const local = new ContextGuard(CONFIG);
    const guard = await globalGuard.worker.createGuard(CONFIG);
    const msgs = conversation(2);
    const cases = [
      () => [msgs, { triggerRatoi: 0.5 }],
      () => [msgs, { tools: [{ type: 'function' }] }],
      () => [msgs, { system: () => 'a function' }],
      () => [msgs, { tools: new Date(0) }],
      () => [msgs, 'not an object'],
      () => [[...msgs.slice(0, 3), { role: 'tool', content: 7 }], {}],
    ];
    for (const make of cases) {
      const [m, o] = make();
      const w = await outcome(() => guard.measure(m, o));
      assert.deepEqual(w, await outcome(() => local.measure(m, o)));
      assert.ok(w.error, `expected an error for ${String(o)}`);
    }
    const index = await outcome(() => guard.measure([{ role: 'user', content: 'a' }, { role: 'wizard', content: 'b' }]));
    assert.equal(index.error.index, 1);
    assert.equal(index.error.code, 'INVALID_ROLE');
    for (const summarize of [5, 'text']) {
      assert.deepEqual(await outcome(() => guard.prepare(msgs, { summarize })), await outcome(() => local.prepare(msgs, { summarize })));
    }
    for (const config of [{ model: 'gpt-4o', triggerRatio: 2 }, { model: 'no-such-model' }, { model: 'gpt-4o', when: new Date() }]) {
      const w = await outcome(() => guard.worker.createGuard(config));
      let expected;
      try {
        new ContextGuard(config).free();
        expected = 'no error';
      } catch (e) {
        expected = { isError: true, name: e.name, message: e.message, code: e.code, index: e.index };
      }
      assert.deepEqual(w.error ?? 'no error', expected);
    }
    local.free();
  });

  test('calibration, observeUsage and cacheStats', async () => {
    const msgs = [{ role: 'user', content: 'You are careful. '.repeat(200) }, { role: 'assistant', content: 'Yes.' }, { role: 'user', content: 'Hi!' }];
    const local = new ContextGuard({ model: 'claude-sonnet-4-5' });
    const wg = await globalGuard.worker.createGuard({ model: 'claude-sonnet-4-5' });
    const usage = { input_tokens: 1234 };
    assert.deepEqual(await wg.observeUsage({ messages: msgs, usage }), local.observeUsage({ messages: msgs, usage }));
    assert.deepEqual(await wg.calibration(), local.calibration);
    assert.deepEqual(timeless(await wg.measure(msgs)), timeless(local.measure(msgs)));
    assert.deepEqual(await wg.cacheStats(), local.cacheStats);
    await assert.rejects(wg.setCalibration({ version: 99 }), { name: 'CtxguardError', code: 'INVALID_OPTIONS' });
    await wg.setCalibration(local.calibration);
    await assert.rejects(wg.observeUsage({ messages: msgs }), (e) => e.name === 'CtxguardError' && e.code === 'INVALID_OPTIONS');
    wg.free();
    await assert.rejects(wg.measure(msgs), { name: 'CtxguardError', code: 'GUARD_FREED' });
    local.free();
  });
});

describe('callbacks, abort and timeout across the boundary', () => {
  test('aborting the caller\'s signal aborts the summarizer here with the same reason, and the worker\'s pipeline', async () => {
    const controller = new AbortController();
    const reason = new Error('user pressed stop');
    let seen;
    const started = new Promise((resolve) => {
      seen = { resolve };
    });
    const pending = globalGuard.prepare(conversation(), {
      signal: controller.signal,
      summarize: ({ signal }) => new Promise((resolve, reject) => {
        seen.signal = signal;
        seen.resolve();
        signal.addEventListener('abort', () => reject(signal.reason));
      }),
    });
    await started;
    controller.abort(reason);
    assert.equal(seen.signal.aborted, true);
    assert.equal(seen.signal.reason, reason, 'the summarizer sees the caller\'s own reason');
    const r = await pending;
    assert.equal(r.degraded, true);
    assert.equal(r.degradedReason, 'aborted');
  });

  // The pipeline chooses a pause of 30-60 minutes: only the abort can end this test (the timeout
  // only stops it, should the abort not end the pause).
  test('the pause between attempts runs in the worker, with heartbeats here; aborting during it ends the attempts at once', { timeout: 120_000 }, async () => {
    const controller = new AbortController();
    let calls = 0;
    const beats = [];
    const lines = [];
    const r = await globalGuard.prepare(conversation(), {
      signal: controller.signal,
      retryDelayMs: 3_600_000,
      heartbeatMs: 20,
      logger: (l) => lines.push(l),
      onProgress: (e) => {
        beats.push(e);
        if (e.attempt === 2 && beats.filter((b) => b.attempt === 2).length === 3) controller.abort();
      },
      summarize: async () => {
        calls++;
        throw new Error('503 overloaded');
      },
    });
    const announced = lines.map((l) => /attempt 1 failed.*next attempt in (\d+) ms/.exec(l)?.[1]).filter(Boolean).map(Number);
    assert.equal(announced.length, 1, lines.join('\n'));
    assert.ok(announced[0] >= 1_800_000 && announced[0] <= 3_600_000, `a pause of ${announced[0]} ms`);
    assert.ok(lines.some((l) => /aborted during the pause before attempt 2/.test(l)), lines.join('\n'));
    assert.equal(r.degradedReason, 'aborted');
    assert.equal(r.compaction.attempts, 1);
    assert.equal(calls, 1);
    assert.ok(beats.filter((b) => b.attempt === 2).length >= 3, 'heartbeats during the pause reach this thread');
  });

  test('an already aborted signal: the same result as on the main thread', async () => {
    const r = await both(globalGuard.worker, 'prepare', conversation(), { signal: AbortSignal.abort() }, () => async () => 'never asked');
    assert.deepEqual(r.worker.result, r.main.result);
    assert.equal(r.worker.result.ok.degradedReason, 'aborted');
    assert.equal(r.worker.requests.length, 0);
  });

  test('a timeout aborts the summarizer\'s signal here, with the pipeline\'s reason', async () => {
    const reasons = [];
    const r = await globalGuard.prepare(conversation(), {
      timeoutMs: 80,
      summarize: ({ signal }) => new Promise(() => signal.addEventListener('abort', () => reasons.push(signal.reason))),
    });
    assert.equal(r.degradedReason, 'timeout');
    assert.equal(r.compaction.attempts, 3);
    // Each abort reached this thread before the result did (one channel, in order).
    assert.equal(reasons.length, 3);
    assert.ok(reasons.every((e) => e instanceof Error && /timed out after 80 ms/.test(e.message)));
  });

  test('observers that throw do not break the call; the guard answers while a summary is pending', async () => {
    let release;
    let asked;
    let beat;
    const summarizing = new Promise((resolve) => {
      asked = resolve;
    });
    const threw = new Promise((resolve) => {
      beat = resolve;
    });
    const pending = globalGuard.prepare(conversation(), {
      heartbeatMs: 20,
      onProgress: () => {
        beat();
        throw new Error('observer');
      },
      logger: () => {
        throw new Error('observer');
      },
      summarize: () => new Promise((resolve) => {
        release = () => resolve('done');
        asked();
      }),
    });
    // The summary is pending and a heartbeat's observer has thrown.
    await Promise.all([summarizing, threw]);
    const m = await globalGuard.measure(conversation(2));
    assert.ok(m.usedTokens > 0);
    release();
    assert.equal((await pending).compaction.status, 'completed');
  });

  test('custom methods: an argument, messages, progress, abort, and errors with code and index', async () => {
    const w = globalGuard.worker;
    const msgs = conversation(1);
    const r = await w.call('echo', { a: 1 }, { messages: msgs });
    assert.deepEqual(r, { arg: { a: 1 }, count: msgs.length, first: msgs[0] });
    const events = [];
    const controller = new AbortController();
    let progressed;
    const reported = new Promise((resolve) => {
      progressed = resolve;
    });
    // The method waits 10 minutes unless aborted.
    const waiting = w.call('wait', 600_000, { signal: controller.signal, onProgress: (e) => progressed(events.push(e)) });
    await reported;
    controller.abort(new Error('enough'));
    await assert.rejects(waiting, { name: 'Error', message: 'enough' });
    assert.deepEqual(events, [{ waiting: 600_000 }]);
    await assert.rejects(w.call('crash'), (e) => e instanceof Error && e.name === 'RangeError' && e.message === 'custom failure' && e.code === 'E_CUSTOM' && e.index === 7);
    await assert.rejects(w.call('nope'), /no method "nope"/);
  });
});

describe('transfer: only what the worker has not seen', () => {
  test('the same messages are sent once; new, changed and replaced ones again', async () => {
    const w = await connectGuardWorker(new Worker(WORKER));
    try {
      const g = await w.createGuard(CONFIG);
      const local = new ContextGuard(CONFIG);
      const msgs = conversation(5);
      await g.measure(msgs);
      assert.equal(w.transferStats.lastCall.sent, msgs.length);
      await g.guardSources(msgs);
      assert.deepEqual([w.transferStats.lastCall.sent, w.transferStats.lastCall.reused], [0, msgs.length]);

      msgs.push({ role: 'assistant', content: 'One more answer.' });
      assert.deepEqual(await g.measure(msgs), local.measure(msgs));
      assert.equal(w.transferStats.lastCall.sent, 1);

      // Changed in place (a streamed answer growing), deep inside a message, and replaced.
      msgs.at(-1).content += ' And another sentence.';
      msgs[2].tool_calls[0].function.arguments = '{"module":"changed"}';
      msgs[1] = { ...msgs[1], content: 'A replaced question.' };
      assert.deepEqual(await g.measure(msgs), local.measure(msgs));
      assert.equal(w.transferStats.lastCall.sent, 3);

      // A second guard (another model) on the same worker reuses what the worker has.
      const g2 = await w.createGuard({ model: 'gpt-4' });
      await g2.measure(msgs);
      assert.equal(w.transferStats.lastCall.sent, 0);
      local.free();
    } finally {
      await w.terminate();
    }
  });

  test('what is not plain data (src/js/json.js) is sent every call, the rest once; results as on this thread', async () => {
    const w = await connectGuardWorker(new Worker(WORKER));
    try {
      const g = await w.createGuard(CONFIG);
      const local = new ContextGuard(CONFIG);
      class Note {
        constructor(content) {
          this.role = 'user';
          this.content = content;
        }
      }
      const msgs = [...conversation(2), { role: 'user', content: 'a lone \uD800 surrogate' }, new Note('a class instance')];
      for (let i = 0; i < 2; i++) {
        assert.deepEqual(await g.measure(msgs), local.measure(msgs));
        const { sent, reused } = w.transferStats.lastCall;
        assert.deepEqual([sent, reused], i === 0 ? [msgs.length, 0] : [2, msgs.length - 2]);
      }
      local.free();
    } finally {
      await w.terminate();
    }
  });

  test('older conversations are forgotten beyond cacheChars; the latest call is always kept', async () => {
    const w = await connectGuardWorker(new Worker(WORKER), { cacheChars: 1000 });
    try {
      const g = await w.createGuard(CONFIG);
      const a = conversation(3);
      const b = conversation(3).map((m) => ({ ...m }));
      await g.measure(a);
      await g.measure(b);
      assert.equal(w.transferStats.storedMessages, b.length, 'a was dropped');
      await g.measure(a);
      assert.equal(w.transferStats.lastCall.sent, a.length, 'a is sent again');
      await g.measure(a);
      assert.equal(w.transferStats.lastCall.sent, 0);
    } finally {
      await w.terminate();
    }
  });

  // What the main thread's share costs (snapshot, postMessage, round trip) is measured by
  // benches/worker-transfer.mjs.
  test('the 2,000-message conversation: sent once, then only the new message', async () => {
    const { chat } = generateInputs({ variant: 0 });
    const w = await connectGuardWorker(new Worker(WORKER));
    try {
      const g = await w.createGuard({ model: 'gpt-4.1' });
      const first = await g.measure(chat);
      const one = { ...w.transferStats.lastCall };
      const grown = [...chat, { role: 'user', content: 'One more question.' }];
      const second = await g.measure(grown);
      const two = { ...w.transferStats.lastCall };
      assert.equal(one.sent, chat.length);
      assert.equal(two.sent, 1);
      assert.equal(two.reused, chat.length);
      assert.ok(second.usedTokens > first.usedTokens);
      const local = new ContextGuard({ model: 'gpt-4.1' });
      assert.equal(first.usedTokens, local.measure(chat).usedTokens);
      local.free();
    } finally {
      await w.terminate();
    }
  });
});

describe('single-encoding builds', () => {
  test('ctxguard/cl100k/worker/serve serves the cl100k build: same results as ctxguard/cl100k, o200k is UNKNOWN_ENCODING', async () => {
    const cl100k = await import('ctxguard/cl100k');
    const config = { model: 'gpt-4', contextWindow: 8000, reservedOutputTokens: 1000 };
    const msgs = conversation();
    const g = await createWorkerGuard(new Worker(new URL('./fixtures/cl100k-worker.mjs', import.meta.url)), config);
    try {
      assert.deepEqual(await g.measure(msgs), new cl100k.ContextGuard(config).measure(msgs));
      assert.equal(await g.worker.countTokens('tiktoken is great!'), 6);
      await assert.rejects(g.worker.countTokens('x', { encoding: 'o200k_base' }), (e) => e.name === 'CtxguardError' && e.code === 'UNKNOWN_ENCODING' && /ctxguard\/cl100k/.test(e.message));
      await assert.rejects(createWorkerGuard(g.worker, { model: 'gpt-4o' }), { name: 'CtxguardError', code: 'UNKNOWN_ENCODING' });
    } finally {
      await g.terminate();
    }
  });
});

describe('lifecycle', () => {
  test('the connection is a WorkerConnection, reused for its Worker', async () => {
    assert.ok(globalGuard instanceof WorkerGuard);
    assert.ok(globalGuard.worker instanceof WorkerConnection);
    assert.equal(await connectGuardWorker(globalGuard.worker), globalGuard.worker);
    assert.equal(await connectGuardWorker(globalGuard.worker.worker), globalGuard.worker);
  });

  test('terminate rejects pending and later calls with WORKER_TERMINATED; free with GUARD_FREED', async () => {
    const g = await createWorkerGuard(new Worker(WORKER), CONFIG);
    let asked;
    const summarizing = new Promise((resolve) => {
      asked = resolve;
    });
    const pending = assert.rejects(g.prepare(conversation(), { summarize: () => new Promise(() => asked()) }), { name: 'CtxguardError', code: 'WORKER_TERMINATED' });
    await summarizing;
    await g.terminate();
    await pending;
    await assert.rejects(g.worker.countTokens('x'), { name: 'CtxguardError', code: 'WORKER_TERMINATED' });
    await assert.rejects(g.measure([]), { name: 'CtxguardError', code: 'WORKER_TERMINATED' });
    const freed = await createWorkerGuard(new Worker(WORKER), CONFIG);
    freed.free();
    await assert.rejects(freed.measure([]), { name: 'CtxguardError', code: 'GUARD_FREED' });
    await freed.terminate();
  });

  test('a worker that does not serve, and one that fails to load, give WORKER_FAILED', async () => {
    const idle = new Worker('setInterval(() => {}, 1000);', { eval: true });
    await assert.rejects(createWorkerGuard(idle, CONFIG, { readyTimeoutMs: 300 }), (e) => e.code === 'WORKER_FAILED' && /did not start serving within 300 ms/.test(e.message));
    await idle.terminate();
    const broken = new Worker('throw new Error("boom at load");', { eval: true });
    await assert.rejects(createWorkerGuard(broken, CONFIG), (e) => e.code === 'WORKER_FAILED' && /boom at load/.test(e.message));
    await assert.rejects(createWorkerGuard(42, CONFIG), { code: 'INVALID_OPTIONS' });
  });
});

describe('payloads: what the worker gets for values structured clone would change', () => {
  test('built-ins stay built-ins, class instances become their fields, toJSON, functions and symbols are put back, cycles kept', async () => {
    const { payloadOf, valueOf } = await import('../../pkg/worker-wire.js');
    class Point {
      constructor() {
        this.x = 1;
        this.y = 2;
      }
    }
    class Stamp {
      toJSON(key) {
        return `stamp at ${key}`;
      }
    }
    const shared = { s: 'shared' };
    const value = {
      date: new Date(0),
      map: new Map([['k', 'v']]),
      bytes: new Uint8Array([1, 2]),
      point: new Point(),
      stamp: new Stamp(),
      own: { toJSON: () => ({ replaced: true }) },
      list: [1, () => 'f', Symbol('s'), undefined, NaN, , shared, shared],
      fn: () => 'field',
    };
    value.self = value;
    const sent = structuredClone(payloadOf(value));
    const got = valueOf(sent);
    assert.ok(got.date instanceof Date && got.date.getTime() === 0);
    assert.ok(got.map instanceof Map && got.map.get('k') === 'v');
    assert.ok(got.bytes instanceof Uint8Array);
    assert.deepEqual(Object.getPrototypeOf(got.point), Object.prototype);
    assert.deepEqual(got.point, { x: 1, y: 2 });
    assert.equal(typeof got.stamp.toJSON, 'function');
    assert.equal(typeof got.own.toJSON, 'function');
    assert.equal(typeof got.list[1], 'function');
    assert.equal(typeof got.list[2], 'symbol');
    assert.ok(!(5 in got.list), 'a hole stays a hole');
    assert.ok(Number.isNaN(got.list[4]));
    assert.equal(got.list[6], got.list[7], 'shared references stay shared');
    assert.equal(typeof got.fn, 'function');
    assert.equal(got.self, got, 'the cycle is kept');
    delete value.self;
    delete got.self;
    assert.equal(JSON.stringify(got), JSON.stringify(value));
    // JSON.stringify errors travel as the same error.
    const cyclic = [];
    cyclic.push(cyclic);
    for (const bad of [{ n: 1n, toJSON: undefined }, { get boom() { throw new Error('getter'); } }]) {
      const back = valueOf(structuredClone(payloadOf(bad)));
      assert.throws(() => JSON.stringify(back), { message: (() => { try { JSON.stringify(bad); } catch (e) { return e.message; } })() });
    }
  });
});
