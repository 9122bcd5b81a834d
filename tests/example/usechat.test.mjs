// The useChat example (examples/usechat/) in headless Chromium and Firefox: built with Vite from
// its lock file and the package in pkg/, served by its own server with the mock model. Per
// browser: 50 turns typed through the page (every fifth asks for a search, so tool outputs grow
// the context), the meter moves and compaction happens, every request that reached the mock
// model fits the window (the first step of each turn, what the page prepared, within the usable
// limit, and counted as the page's meter said), a reload restores the chat, the meter and the
// checkpoint, and the next send reuses the remembered summary instead of asking again.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { countMessages } from 'ctxguard';
import { BROWSERS, launch } from '../browser/browsers.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const app = join(root, 'examples', 'usechat');
const artifacts = join(root, 'artifacts', 'example');
const TURNS = Number(process.env.EXAMPLE_TURNS ?? 50);

/** `npm ci` when the lock changed since the last install, then `vite build`. */
function build() {
  const stamp = join(app, 'node_modules', '.ctxguard-stamp');
  const want = createHash('sha256').update(readFileSync(join(app, 'package-lock.json'))).digest('hex');
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== want) {
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: app, stdio: 'inherit' });
    writeFileSync(stamp, want);
  }
  execFileSync(join(app, 'node_modules', '.bin', 'vite'), ['build', '--logLevel', 'error'], { cwd: app, stdio: 'inherit' });
}

let server;
let config;
before(async () => {
  build();
  mkdirSync(artifacts, { recursive: true });
  config = await import(pathToFileURL(join(app, 'shared', 'chat-config.js')).href);
  const { startServer } = await import(pathToFileURL(join(app, 'server', 'server.mjs')).href);
  server = await startServer({ port: 0, quiet: true });
});
after(() => server?.close());

const textOf = (m) => (typeof m.content === 'string' ? m.content : (m.content ?? []).map((p) => p.text ?? '').join(''));
const isSummaryCall = (body) => /summar/i.test(textOf(body.messages.at(-1) ?? {})) && body.messages.some((m) => m.role === 'system' && /summar/i.test(textOf(m)));

async function sendTurn(page, text, turn) {
  await page.fill('input[aria-label="Message"]', text);
  // React has the text and the chat is idle: then Send sends it.
  await page.waitForFunction(
    (t) => document.querySelector('input[aria-label="Message"]')?.value === t && !document.querySelector('form button')?.disabled,
    text,
    { timeout: 10_000 },
  );
  await page.click('form button[type="submit"]');
  await page.waitForFunction(
    (n) => {
      const main = document.querySelector('main');
      const last = [...document.querySelectorAll('.messages li')].at(-1);
      return main?.dataset.status === 'ready' && Number(main.dataset.turns) === n && last?.dataset.role === 'assistant' && last.textContent.length > 0;
    },
    turn,
    { timeout: 60_000 },
  );
  return page.evaluate(() => {
    const m = document.querySelector('[data-testid="meter"]');
    const s = document.querySelector('[data-testid="guard-status"]');
    return { used: Number(m.dataset.used), state: m.dataset.state, limit: Number(m.dataset.limit), compactions: Number(s.dataset.compactions), error: document.querySelector('[data-testid="error"]')?.textContent ?? null };
  });
}

for (const name of BROWSERS) {
  test(`useChat example: ${TURNS} turns, the meter, a reload (${name})`, { timeout: 600_000 }, async () => {
    const browser = await launch(name);
    try {
      const page = await browser.newPage();
      const first = server.received.length;
      await page.goto(`${server.url}/`);
      await page.waitForFunction(() => document.querySelector('input[aria-label="Message"]') !== null, undefined, { timeout: 60_000 });
      const meters = [];
      for (let t = 1; t <= TURNS; t++) {
        const text = t % 5 === 0 ? `search TODO${t} in the parser` : `Question ${t}: what does module ${t} do, and why? ${'Some context. '.repeat(t % 7)}`;
        const m = await sendTurn(page, text, t).catch(async (e) => {
          await page.screenshot(join(artifacts, `usechat-${name}-failed.png`)).catch(() => {});
          const state = await page.evaluate(() => document.querySelector('main')?.outerHTML.slice(0, 600)).catch(() => '');
          throw new Error(`turn ${t}: ${e.message}\n${state}\n${page.problems.join('\n')}`);
        });
        assert.equal(m.error, null, `turn ${t}: ${m.error}`);
        meters.push(m);
      }
      await page.screenshot(join(artifacts, `usechat-${name}.png`));
      const used = meters.map((m) => m.used);
      assert.ok(new Set(used).size > TURNS / 2, `the meter moves: ${used}`);
      assert.ok(used.every((u, i) => u > 0 && u <= meters[i].limit), `within the usable limit: ${used}`);
      const compactions = meters.at(-1).compactions;
      assert.ok(compactions > 0, 'a 50-turn chat in a 10,500-token window is compacted');

      // What the mock model received. The first step of each turn is what the page prepared.
      const got = server.received.slice(first);
      const chat = got.filter((b) => !isSummaryCall(b));
      const firstSteps = chat.filter((b) => b.messages.at(-1)?.role === 'user');
      assert.equal(firstSteps.length, TURNS);
      const usable = config.CONTEXT_WINDOW - config.RESERVED_OUTPUT_TOKENS;
      for (const [i, b] of chat.entries()) {
        const n = countMessages(b.messages, { model: 'gpt-4o', tools: b.tools }).total;
        assert.ok(n <= config.CONTEXT_WINDOW, `request ${i} has ${n} tokens`);
        assert.equal(b.messages[0].role, 'system');
        assert.equal(b.messages[0].content.split('\n')[0], config.SYSTEM_PROMPT);
      }
      if (process.env.EXAMPLE_DEBUG) {
        writeFileSync(join(artifacts, `received-${name}.json`), JSON.stringify(got, null, 1));
        console.log(JSON.stringify(firstSteps.map((b, i) => [i + 1, countMessages(b.messages, { model: 'gpt-4o', tools: b.tools }).total, meters[i].used, b.messages.length])));
      }
      for (const [i, b] of firstSteps.entries()) {
        const n = countMessages(b.messages, { model: 'gpt-4o', tools: b.tools }).total;
        assert.ok(n <= usable, `turn ${i + 1}: ${n} > ${usable}`);
        // The meter counted what the model got, a summary included (as the model gets it,
        // without the seal that only the checkpoint keeps).
        assert.equal(n, meters[i].used, `turn ${i + 1}: the meter counted what the model got`);
      }
      const summaries = got.filter(isSummaryCall).length;
      assert.ok(summaries > 0, 'the summarizer was asked through the server');
      const withSummary = firstSteps.at(-1).messages.filter((m) => m.role === 'system').map(textOf).join('\n');
      assert.match(withSummary, /Summary of the earlier conversation/);

      // A reload: the chat, the meter and the checkpoint come back.
      const before = await page.evaluate(() => ({ items: document.querySelectorAll('.messages li').length, used: document.querySelector('[data-testid="meter"]').dataset.used }));
      await page.reload();
      await page.waitForFunction(() => document.querySelector('[data-testid="guard-status"]')?.dataset.restored !== undefined && document.querySelectorAll('.messages li').length > 0, undefined, { timeout: 60_000 });
      const after = await page.evaluate(() => ({
        items: document.querySelectorAll('.messages li').length,
        used: document.querySelector('[data-testid="meter"]').dataset.used,
        restored: document.querySelector('[data-testid="guard-status"]').dataset.restored,
      }));
      assert.deepEqual(after, { ...before, restored: 'true' });
      const mark = server.received.length;
      const m = await sendTurn(page, 'One more question after the reload?', TURNS + 1);
      assert.equal(m.error, null);
      const since = server.received.slice(mark);
      assert.equal(since.filter(isSummaryCall).length, 0, 'the restored summary is reused, not asked again');
      const sent = since.find((b) => b.messages.at(-1)?.role === 'user');
      assert.match(sent.messages.filter((x) => x.role === 'system').map(textOf).join('\n'), /Summary of the earlier conversation/);
      assert.deepEqual(page.problems.filter((p) => !/favicon/.test(p)), []);
      await page.close();
    } finally {
      await browser.close();
    }
  });
}
