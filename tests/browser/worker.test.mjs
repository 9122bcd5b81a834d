// ctxguard/worker in headless Chromium and Firefox (tests/browser/browsers.mjs) with native
// module workers and no bundler: the page imports 'ctxguard/worker' through an import map; the
// worker is the package's own /pkg/worker-serve.js (by URL) or a worker of the app's own
// importing it. Results are compared with the same calls in Node. Screenshots:
// artifacts/browser/worker-<browser>.png.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ContextGuard } from 'ctxguard';
import { generateInputs } from '../../benches/lib/inputs.mjs';
import { startServer } from '../../scripts/serve.mjs';
import { buildConversation as conversation } from '../js/helpers.mjs';
import { BROWSERS, launch } from './browsers.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const artifacts = join(root, 'artifacts', 'browser');
// `edits: 'trigger'`: the summarizer is asked at the trigger limit, as in tests/js/worker.test.mjs.
const CONFIG = { model: 'gpt-4o', contextWindow: 10000, reservedOutputTokens: 1000, edits: 'trigger' };

const timeless = (value) => JSON.parse(JSON.stringify(value, (k, v) => (k === 'durationMs' ? 0 : v)));

const chat = generateInputs({ variant: 0 }).chat;

for (const name of BROWSERS) describe(name, () => {
  let server;
  let base;
  let browser;
  let page;
  let data;

  before(async () => {
    data = mkdtempSync(join(tmpdir(), 'ctxguard-worker-data-'));
    writeFileSync(join(data, 'chat.json'), JSON.stringify(chat));
    mkdirSync(artifacts, { recursive: true });
    ({ server, url: base } = await startServer({
      port: 0,
      quiet: true,
      mounts: { '/pkg/': join(root, 'pkg'), '/data/': data, '/': join(here, 'worker-fixture') },
    }));
    browser = await launch(name, { viewport: { width: 1100, height: 900 } });
    page = await browser.newPage();
    await page.goto(base);
    await page.waitForFunction(() => typeof window.__log === 'function');
  });

  after(async () => {
    if (page) await page.screenshot(join(artifacts, `worker-${name}.png`), { fullPage: true }).catch(() => {});
    await browser?.close();
    server?.close();
    if (data) rmSync(data, { recursive: true, force: true });
  });

  test('the package\'s serve module as a module worker: the same counts and prepare result as in Node, heartbeats on the main thread', async () => {
    const msgs = conversation();
    const local = new ContextGuard(CONFIG);
    const expectedMetrics = local.measure(msgs);
    const expected = await local.prepare(msgs, { summarize: async () => 'Forty modules fail, one per step.' });
    local.free();

    const r = await page.evaluate(async ({ msgs, config }) => {
      const { createWorkerGuard } = await import('ctxguard/worker');
      const guard = await createWorkerGuard('/pkg/worker-serve.js', config);
      const beats = [];
      const requests = [];
      const metrics = await guard.measure(msgs);
      // The summarizer answers once two heartbeats have reached this thread (not after a time).
      let twoBeats;
      const heard = new Promise((resolve) => {
        twoBeats = resolve;
      });
      const result = await guard.prepare(msgs, {
        heartbeatMs: 40,
        onProgress: (e) => {
          if (beats.push(e) === 2) twoBeats();
        },
        summarize: async (req) => {
          requests.push({ messages: req.messages.length, signal: req.signal instanceof AbortSignal, attempt: req.attempt });
          await heard;
          return 'Forty modules fail, one per step.';
        },
      });
      const tokens = await guard.worker.countTokens('tiktoken is great!', { encoding: 'cl100k_base' });
      const version = guard.worker.version;
      await guard.terminate();
      return window.__log('prepare in a module worker', { metrics, result, beats, requests, tokens, version, isWorker: guard.worker.worker instanceof Worker });
    }, { msgs, config: CONFIG });

    assert.deepEqual(r.metrics, expectedMetrics);
    assert.deepEqual(timeless(r.result), timeless(expected));
    assert.equal(r.result.compaction.status, 'completed');
    assert.ok(r.beats.length >= 2, `${r.beats.length} heartbeats`);
    assert.deepEqual(r.beats[0].operation, 'summary_compact');
    assert.deepEqual(r.requests, [{ messages: r.requests[0].messages, signal: true, attempt: 1 }]);
    assert.equal(r.tokens, 6);
    assert.equal(r.isWorker, true);
    assert.match(r.version, /^\d+\.\d+\.\d+/);
    assert.deepEqual(page.problems, []);
  });

  // What the main thread's share costs (snapshot, postMessage, long tasks) is measured by
  // benches/worker-transfer.mjs.
  test('the 2,000-message conversation: Node\'s counts; sent once, then only what is new', async () => {
    const expected = new ContextGuard({ model: 'gpt-4.1' }).measure(chat);
    const grown = [...chat, { role: 'user', content: 'One more question.' }];
    const expectedGrown = new ContextGuard({ model: 'gpt-4.1' }).measure(grown);
    const small = new ContextGuard({ model: 'gpt-4o' });
    const expectedPrepare = await small.prepare(chat, { summarize: async (req) => `Summary of ${req.messages.length} messages.` });
    small.free();

    const r = await page.evaluate(async () => {
      const messages = await (await fetch('/data/chat.json')).json();
      const { connectGuardWorker } = await import('ctxguard/worker');
      const worker = await connectGuardWorker(new Worker('/pkg/worker-serve.js', { type: 'module' }));
      const guard = await worker.createGuard({ model: 'gpt-4.1' });
      const first = await guard.measure(messages);
      const one = { ...worker.transferStats.lastCall };
      messages.push({ role: 'user', content: 'One more question.' });
      const second = await guard.measure(messages);
      const two = { ...worker.transferStats.lastCall };
      messages.pop();
      // prepare on gpt-4o's 128k window with the summarizer here.
      const small = await worker.createGuard({ model: 'gpt-4o' });
      const prepared = await small.prepare(messages, { summarize: async (req) => `Summary of ${req.messages.length} messages.` });
      await worker.terminate();
      return window.__log('2,000 messages', {
        messages: messages.length, first: first.usedTokens, second: second.usedTokens,
        one, two, prepared: { compaction: prepared.compaction, messages: prepared.messages.length, usedTokens: prepared.metrics.usedTokens },
      });
    });

    assert.equal(r.messages, 2000);
    assert.equal(r.first, expected.usedTokens);
    assert.equal(r.second, expectedGrown.usedTokens);
    assert.equal(r.one.sent, 2000);
    assert.deepEqual([r.two.sent, r.two.reused], [1, 2000]);
    assert.deepEqual(timeless(r.prepared.compaction), timeless(expectedPrepare.compaction));
    assert.equal(r.prepared.usedTokens, expectedPrepare.metrics.usedTokens);
    assert.deepEqual(page.problems, []);
  });

  test('abort and timeout reach the summarizer on the main thread', async () => {
    const r = await page.evaluate(async ({ msgs, config }) => {
      const { createWorkerGuard } = await import('ctxguard/worker');
      const guard = await createWorkerGuard('/pkg/worker-serve.js', config);
      const reasons = [];
      const timedOut = await guard.prepare(msgs, {
        timeoutMs: 100,
        summarize: ({ signal }) => new Promise(() => signal.addEventListener('abort', () => reasons.push(String(signal.reason?.message)))),
      });
      const controller = new AbortController();
      const stop = new Error('stopped by the user');
      let sameReason = null;
      const pending = guard.prepare(msgs, {
        signal: controller.signal,
        summarize: ({ signal }) => new Promise((resolve, reject) => {
          signal.addEventListener('abort', () => {
            sameReason = signal.reason === stop;
            reject(signal.reason);
          });
          setTimeout(() => controller.abort(stop), 50);
        }),
      });
      const aborted = await pending;
      await guard.terminate();
      return window.__log('abort and timeout', { timedOut: [timedOut.degradedReason, timedOut.compaction.attempts], reasons, aborted: aborted.degradedReason, sameReason });
    }, { msgs: conversation(), config: CONFIG });
    assert.deepEqual(r.timedOut, ['timeout', 3]);
    assert.equal(r.reasons.length, 3);
    assert.ok(r.reasons.every((m) => /timed out after 100 ms/.test(m)));
    assert.equal(r.aborted, 'aborted');
    assert.equal(r.sameReason, true);
  });

  test('a worker of the app\'s own with a method of its own; errors keep name, code and index', async () => {
    const msgs = conversation(3);
    const r = await page.evaluate(async ({ msgs, config }) => {
      const { createWorkerGuard } = await import('ctxguard/worker');
      const guard = await createWorkerGuard(new Worker('/guard.worker.js', { type: 'module' }), config);
      const outputs = await guard.worker.call('toolOutputs', { limit: 2 }, { messages: msgs });
      let error = null;
      try {
        await guard.measure([{ role: 'user', content: 'hi' }, { role: 'wizard', content: 'abracadabra' }]);
      } catch (e) {
        error = { isError: e instanceof Error, name: e.name, code: e.code, index: e.index, message: e.message };
      }
      await guard.terminate();
      let terminated = null;
      try {
        await guard.worker.countTokens('x');
      } catch (e) {
        terminated = e.code;
      }
      return window.__log('custom worker', { outputs, error, terminated });
    }, { msgs, config: CONFIG });
    assert.deepEqual(r.outputs.map((o) => o.id), ['c0', 'c1']);
    const { countTokens } = await import('ctxguard');
    assert.equal(r.outputs[0].tokens, countTokens(msgs[3].content, { model: 'gpt-4o' }));
    assert.deepEqual({ ...r.error, message: undefined }, { isError: true, name: 'CtxguardError', code: 'INVALID_ROLE', index: 1, message: undefined });
    assert.match(r.error.message, /wizard/);
    assert.equal(r.terminated, 'WORKER_TERMINATED');
  });

  test('a worker without WebAssembly, and one that never serves, reject with WORKER_FAILED and say why', async () => {
    const r = await page.evaluate(async () => {
      const { createWorkerGuard } = await import('ctxguard/worker');
      const failure = async (fn) => {
        try {
          await fn();
          return null;
        } catch (e) {
          return { name: e.name, code: e.code, message: e.message };
        }
      };
      const noWasm = await failure(() => createWorkerGuard(new Worker('/no-wasm.worker.js', { type: 'module' }), { model: 'gpt-4o' }));
      const idle = await failure(() => createWorkerGuard(new Worker('/idle.worker.js', { type: 'module' }), { model: 'gpt-4o' }, { readyTimeoutMs: 500 }));
      const missing = await failure(() => createWorkerGuard('/no-such.worker.js', { model: 'gpt-4o' }));
      return window.__log('failures', { noWasm, idle, missing });
    });
    assert.equal(r.noWasm.code, 'WORKER_FAILED');
    assert.match(r.noWasm.message, /WebAssembly is not available in this worker/);
    assert.equal(r.idle.code, 'WORKER_FAILED');
    assert.match(r.idle.message, /did not start serving within 500 ms/);
    assert.equal(r.missing.code, 'WORKER_FAILED');
    // The 404 of the missing worker script is the one expected problem.
    assert.ok(page.problems.every((p) => /no-such\.worker\.js|404/.test(p)), page.problems.join('\n'));
    page.problems.length = 0;
  });

  test('ctxguard/o200k/worker/serve in a module worker: the o200k build\'s results, and only its .wasm is fetched', async () => {
    const o200k = await import('ctxguard/o200k');
    const msgs = conversation();
    const expected = new o200k.ContextGuard(CONFIG).measure(msgs);
    const fetched = [];
    const onRequest = (req) => {
      if (req.url().endsWith('.wasm')) fetched.push(new URL(req.url()).pathname);
    };
    page.on('request', onRequest);
    try {
      const r = await page.evaluate(async ({ msgs, config }) => {
        const { createWorkerGuard } = await import('ctxguard/worker');
        const guard = await createWorkerGuard('/pkg/o200k/worker-serve.js', config);
        const metrics = await guard.measure(msgs);
        let other = null;
        try {
          await guard.worker.countTokens('x', { encoding: 'cl100k_base' });
        } catch (e) {
          other = { name: e.name, code: e.code };
        }
        await guard.terminate();
        return { metrics, other };
      }, { msgs, config: CONFIG });
      assert.deepEqual(r.metrics, expected);
      assert.deepEqual(r.other, { name: 'CtxguardError', code: 'UNKNOWN_ENCODING' });
      assert.deepEqual(fetched, ['/pkg/o200k/ctxguard_wasm_bg.wasm']);
    } finally {
      page.off('request', onRequest);
    }
  });
});
