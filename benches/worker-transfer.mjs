// What the main thread pays when ctxguard runs in a worker (ctxguard/worker), on the benchmark's
// 2,000-message conversation: the first call (the whole conversation is sent: snapshot, then
// postMessage), a call after one new message (only that message is sent), the round trips, a
// plain structuredClone of the array for comparison, and in Chromium the main thread's long
// tasks during a prepare (gpt-4o's window: a summary, here) — medians of N fresh workers. The
// tests (tests/js/worker.test.mjs, tests/browser/worker.test.mjs) assert what is sent; these
// times were printed by them before and are measured here.
//
//   node benches/worker-transfer.mjs [--runs N] [--only node|chromium]
import os from 'node:os';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { connectGuardWorker } from 'ctxguard/worker';
import { generateInputs } from './lib/inputs.mjs';
import { startServer } from '../scripts/serve.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : dflt;
};
const runs = Number(opt('runs', 5)) || 5;
const only = opt('only', 'node,chromium').split(',');
const { chat } = generateInputs({ variant: 0 });
const bytes = Buffer.byteLength(JSON.stringify(chat));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const f = (x) => (x === undefined ? '–' : x.toFixed(1));

/**
 * The figures of one fresh worker connection: a structuredClone of the array, the first call,
 * the call after one new message (appended to `messages`, then removed). It runs in Node and, as
 * source text, in the page: it uses nothing but its arguments and `performance`.
 */
async function transferFigures(worker, messages) {
  const t = performance.now();
  structuredClone(messages);
  const cloneMs = performance.now() - t;
  const guard = await worker.createGuard({ model: 'gpt-4.1' });
  const t0 = performance.now();
  await guard.measure(messages);
  const firstMs = performance.now() - t0;
  const one = { ...worker.transferStats.lastCall };
  messages.push({ role: 'user', content: 'One more question.' });
  const t1 = performance.now();
  await guard.measure(messages);
  const secondMs = performance.now() - t1;
  const two = { ...worker.transferStats.lastCall };
  messages.pop();
  return { cloneMs, firstMs, secondMs, one, two };
}

async function nodeRun() {
  const w = await connectGuardWorker(new Worker("import('ctxguard/worker/serve');", { eval: true }));
  try {
    return await transferFigures(w, chat.map((m) => ({ ...m })));
  } finally {
    await w.terminate();
  }
}

/** The same in a Chromium page, plus the long tasks of the main thread during a prepare. */
async function chromiumRuns() {
  const { chromium } = await import('playwright-core');
  const data = mkdtempSync(join(os.tmpdir(), 'ctxguard-transfer-'));
  writeFileSync(join(data, 'chat.json'), JSON.stringify(chat));
  const { server, url } = await startServer({
    port: 0,
    quiet: true,
    mounts: { '/pkg/': join(ROOT, 'pkg'), '/data/': data, '/': join(ROOT, 'tests', 'browser', 'worker-fixture') },
  });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--headless=new', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const out = [];
  try {
    for (let i = 0; i < runs; i++) {
      const page = await browser.newPage();
      await page.addInitScript(() => {
        window.__longTasks = [];
        new PerformanceObserver((list) => {
          for (const e of list.getEntries()) window.__longTasks.push(e.duration);
        }).observe({ type: 'longtask', buffered: true });
      });
      await page.goto(url);
      out.push(await page.evaluate(async (source) => {
        const figures = new Function(`return (${source})`)();
        const messages = await (await fetch('/data/chat.json')).json();
        const { connectGuardWorker } = await import('ctxguard/worker');
        const worker = await connectGuardWorker(new Worker('/pkg/worker-serve.js', { type: 'module' }));
        const transfer = await figures(worker, messages);
        const small = await worker.createGuard({ model: 'gpt-4o' });
        const before = window.__longTasks.length;
        const t2 = performance.now();
        await small.prepare(messages, { summarize: async (req) => `Summary of ${req.messages.length} messages.` });
        const prepareMs = performance.now() - t2;
        const longDuring = window.__longTasks.slice(before);
        await worker.terminate();
        return { ...transfer, prepareMs, longest: Math.max(0, ...longDuring), longTasks: longDuring.length };
      }, transferFigures.toString()));
      await page.close();
    }
  } finally {
    await browser.close();
    server.close();
    rmSync(data, { recursive: true, force: true });
  }
  return out;
}

function row(name, rs) {
  const m = (pick) => median(rs.map(pick));
  const cells = [
    name,
    f(m((r) => r.cloneMs)),
    `${f(m((r) => r.one.encodeMs))} + ${f(m((r) => r.one.postMs))}`,
    f(m((r) => r.firstMs)),
    `${f(m((r) => r.two.encodeMs))} + ${f(m((r) => r.two.postMs))}`,
    f(m((r) => r.secondMs)),
    rs[0].prepareMs === undefined ? '–' : `${f(m((r) => r.prepareMs))} ms, ${m((r) => r.longTasks)} long tasks, longest ${f(m((r) => r.longest))} ms`,
  ];
  return `| ${cells.join(' | ')} |`;
}

const rows = [];
if (only.includes('node')) {
  const rs = [];
  for (let i = 0; i < runs; i++) rs.push(await nodeRun());
  rows.push(row(`Node ${process.versions.node}`, rs));
}
if (only.includes('chromium')) rows.push(row('Chromium', await chromiumRuns()));

console.log(`2,000-message conversation (${(bytes / 1e6).toFixed(2)} MB of JSON), medians of ${runs} fresh workers; load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}, ${os.cpus().length} CPUs`);
console.log('| runtime | structuredClone of the array, ms | first call: snapshot + postMessage, ms | first round trip, ms | after one new message: snapshot + postMessage, ms | its round trip, ms | prepare (gpt-4o) on the main thread |');
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) console.log(r);
