// The chat at the top of the demo page (www/chat-view.js), used as a person would: it is the
// first screen from the first paint, and each send shows what it carried — prepare()'s model
// input against the usable limit, what ctxguard did — while the chat keeps every message.
// Run: node --test tests/page/ (needs pkg/: make build). Screenshots in artifacts/page/.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { digits, expectClean, ready, shot, startPage } from './harness.mjs';

let env;
before(async () => {
  env = await startPage();
});
after(() => env?.close());

/** The receipts of the sends so far, as data. */
const receipts = (page) =>
  page.locator('#chat-log li[data-send]').evaluateAll((lis) =>
    lis.map((li) => ({
      send: Number(li.dataset.send),
      used: Number(li.dataset.used),
      usable: Number(li.dataset.usable),
      sent: Number(li.dataset.sent),
      history: Number(li.dataset.history),
      events: (li.dataset.events ?? '').split(' ').filter(Boolean),
      text: li.querySelector('p').innerText,
    })));

/** Wait until `n` sends are done and the chat takes input again. */
const sendsDone = (page, n) =>
  page.waitForFunction((k) => Number(document.querySelector('#chat').dataset.sends ?? 0) >= k && document.querySelector('#chat').dataset.state === 'ready', n, { timeout: 120_000 });

describe('the chat on the first screen', () => {
  test('is the first screen before the worker answers, and takes input once it does', async () => {
    let release;
    const held = new Promise((ok) => { release = ok; });
    // Hold the worker's module until the first screen has been looked at.
    const page = await env.openPage({ before: (p) => p.route('**/guard.worker.js', async (route) => { await held; await route.continue(); }) });
    try {
      await page.waitForSelector('#chat-log li.welcome');
      const box = await page.locator('#chat').boundingBox();
      const viewport = page.viewportSize();
      assert.ok(box && box.y < viewport.height / 4, `the chat starts near the top (y = ${box?.y})`);
      assert.ok(await page.locator('#chat-input').isVisible());
      assert.ok(await page.locator('#chat-carried').isVisible());
      assert.equal(await page.locator('#chat').getAttribute('data-state'), 'loading');
      assert.ok(await page.locator('#chat-send').isDisabled(), 'no send before the worker answers');
      assert.match(await page.locator('#chat-input').getAttribute('placeholder'), /Starting ctxguard/);
      await shot(page, 'chat-first-screen');
      release();
      await ready(page);
      await page.waitForFunction(() => document.querySelector('#chat').dataset.state === 'ready');
      assert.ok(await page.locator('#chat-send').isEnabled());
      expectClean(page);
    } finally {
      release();
      await page.close();
    }
  });

  test('each send carries what fits: old tool outputs cleared first, then a summary, the chat keeping every message', async () => {
    const page = await env.openPage();
    try {
      await ready(page);
      await page.waitForFunction(() => document.querySelector('#chat').dataset.state === 'ready');
      // A typed message, sent with Enter.
      await page.locator('#chat-input').fill('Is the rounding in the billing period code consistent?');
      await page.locator('#chat-input').press('Enter');
      await sendsDone(page, 1);
      let r = await receipts(page);
      assert.equal(r.length, 1);
      assert.match(r[0].text, /^Is the rounding/);
      // The system prompt and the question: everything fits, nothing to do.
      assert.deepEqual([r[0].sent, r[0].history, r[0].events], [2, 2, []]);
      assert.equal(await page.locator('#chat-log li.msg.tool').count(), 1, 'the stand-in model read a file');

      await page.click('#chat-auto12');
      await sendsDone(page, 13);
      r = await receipts(page);
      assert.equal(r.length, 13);
      // The display history grows by the question and the three messages of each answer; the
      // model input never passes the usable limit.
      r.forEach((x, i) => {
        assert.equal(x.history, 2 + 4 * i, `send ${x.send}: display history`);
        assert.ok(x.used > 0 && x.used <= x.usable, `send ${x.send}: ${x.used} of ${x.usable}`);
      });
      const first = (kind) => r.findIndex((x) => x.events.includes(kind));
      assert.ok(first('clear') > 0, 'a clearing step');
      assert.ok(first('summary') > first('clear'), 'clearing comes before any summary');
      const summarized = r[first('summary')];
      assert.ok(summarized.events.includes('checkpoint'), 'a summary gives a checkpoint to store');
      assert.ok(summarized.sent < summarized.history, 'after the summary, fewer messages are sent than the chat shows');
      assert.ok(summarized.used < r[first('summary') - 1].used, 'the summary made room');
      // The panel shows the last send: its figure, its meter, one row per message sent.
      const last = r.at(-1);
      assert.equal(digits(await page.locator('#chat-used').innerText()), last.used);
      assert.equal(Number(await page.locator('#chat-carried [role=meter]').getAttribute('aria-valuenow')), last.used);
      assert.equal(await page.locator('#chat-carried .chat-sent li').count(), last.sent);
      assert.equal(await page.locator('#chat-carried .chat-sent li[data-kind=summary]').count(), 1, 'the summary is one of the messages sent');
      // The chat itself still shows every message.
      assert.equal(await page.locator('#chat-log li.msg:not(.welcome)').count(), last.history - 1 + 3);
      await page.evaluate(() => window.scrollTo(0, 0));
      await shot(page, 'chat-after-13-sends');

      // Start over: a new guard and an empty chat.
      await page.click('#chat-reset');
      await page.waitForFunction(() => document.querySelectorAll('#chat-log li.msg:not(.welcome)').length === 0);
      await page.click('#chat-auto');
      await sendsDone(page, 1);
      assert.deepEqual((await receipts(page)).map((x) => [x.send, x.history]), [[1, 2]]);
      expectClean(page);
    } finally {
      await page.close();
    }
  });

  test('fits a phone screen: no sideways scrolling, the chat before the inspector', async () => {
    const page = await env.openPage({ before: (p) => p.setViewportSize({ width: 390, height: 844 }) });
    try {
      await ready(page);
      await page.waitForFunction(() => document.querySelector('#chat').dataset.state === 'ready');
      await page.click('#chat-auto');
      await sendsDone(page, 1);
      const wide = await page.evaluate(() => document.scrollingElement.scrollWidth - window.innerWidth);
      assert.ok(wide <= 0, `the page scrolls sideways by ${wide}px`);
      const chat = await page.locator('#chat').boundingBox();
      const inspector = await page.locator('#app').boundingBox();
      assert.ok(chat.y < inspector.y, 'the chat comes first');
      await shot(page, 'chat-phone');
      expectClean(page);
    } finally {
      await page.close();
    }
  });
});
