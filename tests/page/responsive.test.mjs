// The demo page on the 2,000-message conversation (the benchmark's, benches/lib/inputs.mjs),
// loaded from a file as a person would. What keeps the main thread responsive is asserted as what
// the page does, not as a duration: ctxguard's WebAssembly runs only in the page's Web Worker (the
// main thread never fetches a .wasm), the file is read and parsed in the worker (the 5 MB text
// never enters the editor), the list is drawn 100 rows at a time, and the progress indicator is
// updated during the pass. How long the main thread's tasks take is a benchmark figure
// (`node benches/page-tasks.mjs`), not a test bound: on a shared 2-core machine the same pass
// measured 141 ms and 216 ms. The page must also make no request outside its own origin (no CDN).
// Screenshots: artifacts/page/long-*.png.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { ContextGuard } from 'ctxguard';
import { generateInputs } from '../../benches/lib/inputs.mjs';
import { PAGE_GUARDS, artifacts, digits, expectClean, ready, root, shot, startPage, text } from './harness.mjs';

const PASS_TIMEOUT = 120_000;

const chat = generateInputs({ variant: 0 }).chat;
let env;
let dir;
let file;

before(async () => {
  env = await startPage();
  // A file on disk: Chromium reads it itself. (A buffer would be decoded by the test driver in
  // the page, a long task that is not the page's.)
  dir = await mkdtemp(join(tmpdir(), 'ctxguard-long-'));
  file = join(dir, 'chat-2000.json');
  await writeFile(file, JSON.stringify({ messages: chat }));
});

after(async () => {
  await env?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Requests leaving the page's origin, from the first one on. */
async function watch(page) {
  page.offsite = [];
  const origin = new URL(env.url).origin;
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (new URL(url).origin === origin || url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
    page.offsite.push(url);
    return route.abort();
  });
}

const passes = (page) => page.evaluate(() => Number(document.documentElement.dataset.passes ?? 0));

/** Runs `action`, then waits for the pass it starts (at most PASS_TIMEOUT), and for status ready. */
async function settle(page, action) {
  const n = await passes(page);
  await action();
  await page.waitForFunction((k) => Number(document.documentElement.dataset.passes ?? 0) > k, n, { timeout: PASS_TIMEOUT });
  assert.equal(await page.evaluate(() => document.documentElement.dataset.status), 'ready', await text(page, 'body'));
}

test('the 2,000-message conversation loaded from a file: Node\'s figures on screen, the work in the worker, chunked drawing and a progress indicator', async () => {
  const page = await env.openPage({ before: watch });
  try {
    await ready(page);
    const progressBefore = await page.evaluate(() => Number(document.documentElement.dataset.progressEvents ?? 0));

    // Load the file, as a person would; the worker reads and parses it, then measures it.
    await settle(page, () => page.setInputFiles('#file', file));
    assert.ok(await page.evaluate(() => Number(document.documentElement.dataset.progressEvents ?? 0)) > progressBefore, 'the progress indicator was updated');
    const cfg = { model: 'gpt-4o', format: 'openai', ...PAGE_GUARDS };
    const local = new ContextGuard(cfg);
    const raw = local.measure(chat);
    const guarded = local.guardSources(chat);
    local.free();
    assert.equal(digits(await text(page, '#message-count')), 2000);
    assert.equal(digits(await text(page, '#raw-tokens')), raw.usedTokens);
    assert.equal(digits(await text(page, '#used-tokens')), guarded.metrics.usedTokens);
    assert.equal(await page.locator('#state').getAttribute('data-state'), guarded.metrics.state);
    assert.equal(await page.locator('#conversation').inputValue(), '', 'the 5 MB file is not put in the editor');
    assert.match(await page.locator('#conversation').getAttribute('placeholder'), /2,000 messages/);
    // The list is drawn 100 rows at a time.
    assert.equal(await page.locator('#messages li.msg').count(), 100);
    assert.match(await text(page, '#messages-more'), /Show 100 more \(1,900 not drawn yet\)/);
    await page.click('#messages-more');
    assert.equal(await page.locator('#messages li.msg').count(), 200);
    await shot(page, 'long-loaded');

    // Another model: a new guard in the worker, the same messages (already there: only ids travel).
    await settle(page, () => page.selectOption('#model', 'gpt-4.1'));
    const wide = new ContextGuard({ ...cfg, model: 'gpt-4.1' });
    assert.equal(digits(await text(page, '#used-tokens')), wide.guardSources(chat).metrics.usedTokens);
    wide.free();
    await settle(page, () => page.selectOption('#model', 'gpt-4o'));

    // A compaction with the built-in summarizer, which runs on the main thread.
    const win = Number(await page.locator('#cmp-window').inputValue());
    const { builtinSummarizer } = await import(pathToFileURL(join(root, 'www', 'summarizers.js')).href);
    const out = Math.floor(win / 8);
    const small = new ContextGuard({ ...cfg, contextWindow: win, maxOutputTokens: out, reservedOutputTokens: out });
    const expected = await small.prepare(chat, { force: true, summarize: builtinSummarizer({ delayMs: 0 }) });
    small.free();
    await page.click('#run-prepare');
    await page.waitForFunction(() => document.querySelector('#compaction-card').dataset.state === 'done', null, { timeout: PASS_TIMEOUT });
    const record = await page.locator('#compaction-record dd[data-field]').evaluateAll((dds) => Object.fromEntries(dds.map((dd) => [dd.dataset.field, JSON.parse(dd.dataset.value)])));
    for (const k of ['status', 'removedItems', 'attempts', 'failureReason', 'beforeTokens', 'afterTokens', 'tokensSaved']) assert.deepEqual(record[k], expected.compaction[k], k);
    assert.equal(await page.locator('#cmp-degraded').getAttribute('data-degraded'), 'false');
    assert.ok(await page.locator('#cmp-beats li').count() >= 2, 'heartbeats arrived while the summarizer ran');
    assert.match(await text(page, '#cmp-saved'), /Not saved to localStorage .*download it instead/);
    await page.locator('#compaction-card').screenshot({ path: join(artifacts, 'long-compaction.png') });

    // The counting, guarding and summarizing pipeline ran in the worker: its WebAssembly was
    // fetched there, never by the main thread.
    const wasmIn = (g) => g.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name).filter((n) => /\.wasm(\?|$)/.test(n)));
    assert.deepEqual(await wasmIn(page), [], 'the main thread loaded no WebAssembly');
    const workers = page.workers();
    assert.ok(workers.length >= 1, 'the page runs a worker');
    const inWorkers = (await Promise.all(workers.map(wasmIn))).flat();
    assert.ok(inWorkers.length >= 1, `the worker loaded ctxguard's WebAssembly: ${JSON.stringify(inWorkers)}`);
    assert.deepEqual(page.offsite, [], 'the page reached outside its origin');
    expectClean(page);
  } finally {
    await page.close();
  }
});

test('the page needs no network: every request of a full session stays on its own origin', async () => {
  const page = await env.openPage({ before: watch });
  try {
    await ready(page);
    await page.click('#run-prepare');
    await page.waitForFunction(() => document.querySelector('#compaction-card').dataset.state === 'done', null, { timeout: PASS_TIMEOUT });
    await settle(page, () => page.selectOption('#model', 'claude-sonnet-4'));
    assert.deepEqual(page.offsite, []);
    expectClean(page);
  } finally {
    await page.close();
  }
});

test('a browser whose workers have no WebAssembly gets the same clear message as one without it at all', async () => {
  const page = await env.openPage({
    before: (p) => p.route('**/guard.worker.js', (route) => route.fulfill({
      contentType: 'text/javascript',
      body: "delete globalThis.WebAssembly;\nawait import('/guard.worker.js?without-wasm');\n",
    })),
  });
  try {
    await page.waitForFunction(() => document.documentElement.dataset.status === 'fatal', null, { timeout: PASS_TIMEOUT });
    assert.match(await text(page, '#fatal'), /WebAssembly is not available/);
    assert.ok(await page.locator('#app').isHidden());
    await shot(page, 'no-webassembly-in-worker');
    expectClean(page);
  } finally {
    await page.close();
  }
});
