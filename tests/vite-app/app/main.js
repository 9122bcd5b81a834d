// A Vite app using ctxguard the two ways: on the main thread (`ctxguard`), and in a module worker
// (`ctxguard/worker`) whose summarizer runs here. tests/vite-app/vite.test.mjs builds it with
// `vite build`, serves dist/ and checks window.__result against Node's counts.
import { ContextGuard, countMessages, countTokens, loadVocabulary, version } from 'ctxguard';
import { createWorkerGuard } from 'ctxguard/worker';
import { CONFIG, conversation } from './conversation.js';

const results = document.getElementById('results');
const status = document.getElementById('status');
const show = (label, value) => {
  const dt = document.createElement('dt');
  dt.textContent = label;
  const dd = document.createElement('dd');
  dd.textContent = typeof value === 'string' ? value : JSON.stringify(value);
  results.append(dt, dd);
};

async function run() {
  const messages = conversation(40);
  const config = CONFIG;

  // Main thread.
  const guard = new ContextGuard(config);
  const main = {
    version: version(),
    hello: countTokens('hello world'),
    total: countMessages(messages, { model: 'gpt-4o' }).total,
    used: guard.measure(messages).usedTokens,
  };
  guard.free();
  // A vocabulary the bundler emitted next to the module, fetched when loaded.
  await loadVocabulary('llama3');
  main.llama = countTokens('Die Katze sitzt auf der Matte. 猫がマットの上に座っている。', { model: 'llama3.1:8b' });
  show('Main thread', main);

  // Worker: the bundler emits guard.worker.js (and the .wasm it loads) as assets.
  const worker = new Worker(new URL('./guard.worker.js', import.meta.url), { type: 'module' });
  const remote = await createWorkerGuard(worker, config);
  const beats = [];
  const asked = [];
  const used = (await remote.measure(messages)).usedTokens;
  // The summarizer answers once two heartbeats have reached this thread (not after a time).
  let twoBeats;
  const heard = new Promise((resolve) => {
    twoBeats = resolve;
  });
  const prepared = await remote.prepare(messages, {
    force: true,
    heartbeatMs: 50,
    onProgress: (e) => {
      if (beats.push(e.elapsedMs) === 2) twoBeats();
    },
    summarize: async ({ messages: source, signal }) => {
      asked.push({ messages: source.length, signal: signal instanceof AbortSignal, onMainThread: typeof document === 'object' });
      await heard;
      return `The user asked ${source.filter((m) => m.role === 'user').length} questions about failing modules.`;
    },
  });
  const inWorker = {
    version: remote.worker.version,
    used,
    compaction: prepared.compaction.status,
    afterTokens: prepared.compaction.afterTokens,
    messages: prepared.messages.length,
    summary: prepared.messages.find((m) => m.role === 'system' && m.content.startsWith('[ctxguard:summary]'))?.content.split('\n')[0] ?? null,
    heartbeats: beats.length,
    asked,
  };
  show('In the worker', inWorker);
  await remote.terminate();
  window.__result = { main, inWorker, wasmUrl: performance.getEntriesByType('resource').map((e) => e.name).filter((n) => n.endsWith('.wasm')) };
  status.textContent = 'Done';
  status.dataset.state = 'done';
}

run().catch((e) => {
  window.__result = { failed: `${e?.name}: ${e?.message}\n${e?.stack}` };
  status.textContent = `Failed: ${e?.name}: ${e?.message}`;
  status.dataset.state = 'failed';
});
