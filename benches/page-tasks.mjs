// The demo page's main thread on the benchmark's 2,000-message conversation (benches/lib/inputs.mjs),
// loaded from a file as a person would, then a model change and a compaction with the built-in
// summarizer: the long tasks (> 50 ms) of the main thread, medians of N fresh pages.
// tests/page/responsive.test.mjs asserts what keeps the thread responsive (the work in the
// worker, chunked drawing, the progress indicator); the durations are measured here, because on
// a shared machine the same pass measured 141 ms and 216 ms.
//
//   node benches/page-tasks.mjs [--runs N]
import os from 'node:os';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateInputs } from './lib/inputs.mjs';
import { ready, startPage } from '../tests/page/harness.mjs';

const args = process.argv.slice(2);
const runs = Number(args[args.indexOf('--runs') + 1]) || 3;
const TIMEOUT = 120_000;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const dir = await mkdtemp(join(os.tmpdir(), 'ctxguard-page-tasks-'));
const file = join(dir, 'chat-2000.json');
await writeFile(file, JSON.stringify({ messages: generateInputs({ variant: 0 }).chat }));
const env = await startPage();

const passes = (page) => page.evaluate(() => Number(document.documentElement.dataset.passes ?? 0));
async function settle(page, action) {
  const n = await passes(page);
  await action();
  await page.waitForFunction((k) => Number(document.documentElement.dataset.passes ?? 0) > k, n, { timeout: TIMEOUT });
}

const results = [];
try {
  for (let i = 0; i < runs; i++) {
    const page = await env.openPage({
      before: (p) => p.addInitScript(() => {
        window.__longTasks = [];
        new PerformanceObserver((list) => {
          for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, duration: e.duration });
        }).observe({ type: 'longtask', buffered: true });
      }),
    });
    try {
      await ready(page);
      const t0 = await page.evaluate(() => performance.now());
      await settle(page, () => page.setInputFiles('#file', file));
      const loaded = await page.evaluate((since) => window.__longTasks.filter((e) => e.start >= since).map((e) => e.duration), t0);
      const t1 = await page.evaluate(() => performance.now());
      await settle(page, () => page.selectOption('#model', 'gpt-4.1'));
      await page.click('#run-prepare');
      await page.waitForFunction(() => document.querySelector('#compaction-card').dataset.state === 'done', null, { timeout: TIMEOUT });
      const rest = await page.evaluate((since) => window.__longTasks.filter((e) => e.start >= since).map((e) => e.duration), t1);
      results.push({ loaded, rest });
    } finally {
      await page.close();
    }
  }
} finally {
  await env.close();
  await rm(dir, { recursive: true, force: true });
}

const longest = (xs) => Math.max(0, ...xs);
const fmt = (pick) => `${median(results.map((r) => pick(r).length))} long tasks, longest ${median(results.map((r) => longest(pick(r)))).toFixed(0)} ms (runs: ${results.map((r) => longest(pick(r)).toFixed(0)).join(', ')} ms)`;
console.log(`Demo page, 2,000-message conversation from a file, main thread (Chromium), medians of ${runs} pages; load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}, ${os.cpus().length} CPUs`);
console.log(`- loading the file (read, parse, measure in the worker; first 100 rows drawn): ${fmt((r) => r.loaded)}`);
console.log(`- another model, then a compaction with the built-in summarizer: ${fmt((r) => r.rest)}`);
