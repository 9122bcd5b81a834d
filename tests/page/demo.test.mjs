// Browser test of the demo page (www/): Debian's Chromium driven by playwright-core, as a person
// would use the page. Needs the built package in pkg/ (make build). Run: node --test tests/page/
// Screenshots go to artifacts/page/. Any page error or console error fails the test that caused it.

import assert from 'node:assert/strict';
import { copyFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { LOAD_TIMEOUT, PAGE_GUARDS, after1, artifacts, digits, expectClean, ready, shot, startPage, text } from './harness.mjs';

let env;

before(async () => {
  env = await startPage();
});

after(() => env?.close());

const openPage = (options) => env.openPage(options);

/**
 * What ctxguard itself says about the sample in this page: guardSources() with the page's
 * source-guard values plus `config` (raw: measure() of the same messages; counts: per message).
 */
function guardSample(page, config, options = {}) {
  return page.evaluate(async ({ cfg, opts }) => {
    const { ContextGuard, countMessages } = await import('/pkg/index.js');
    const { sample } = await import('/sample.js');
    const guard = new ContextGuard({ format: 'openai', ...cfg });
    try {
      const result = guard.guardSources(sample.messages, { tools: sample.tools, ...opts });
      const counts = countMessages(result.messages, { model: cfg.model, format: 'openai', tools: sample.tools });
      return { ...result, raw: guard.measure(sample.messages, { tools: sample.tools }), perMessage: counts.perMessage };
    } finally {
      guard.free();
    }
  }, { cfg: Object.fromEntries(Object.entries({ ...PAGE_GUARDS, ...config }).filter(([, v]) => v !== undefined)), opts: options });
}

/** The traces panel as data: operation, status and every field's value. */
function tracesOnPage(page) {
  return page.locator('#traces li.trace').evaluateAll((lis) => lis.map((li) => ({
    operation: li.dataset.operation,
    status: li.dataset.status,
    head: li.querySelector('.trace-head').innerText,
    fields: Object.fromEntries([...li.querySelectorAll('dd[data-field]')].map((dd) => [dd.dataset.field, JSON.parse(dd.dataset.value)])),
  })));
}

/** Every field of each trace on the page equals guardSources' trace (durationMs: a time, not compared). */
function assertTraces(onPage, expected) {
  assert.deepEqual(onPage.map((t) => `${t.operation} ${t.status}`), expected.map((t) => `${t.operation} ${t.status}`));
  onPage.forEach((t, i) => {
    assert.match(t.head, new RegExp(`^${expected[i].operation}\\s+${expected[i].status}`));
    for (const [key, value] of Object.entries(expected[i])) {
      if (key === 'operation' || key === 'status') continue;
      if (key === 'durationMs') assert.ok(typeof t.fields.durationMs === 'number' && t.fields.durationMs >= 0, 'durationMs');
      else assert.deepEqual(t.fields[key], value, `${expected[i].operation}.${key}`);
    }
  });
}

/**
 * What ctxguard says of a converted sample `conv` in `format` with the page's source guards (gpt-4o):
 * the raw and model-visible totals, the rows countMessages counts, the traces.
 */
function guardConverted(page, conv, format) {
  return page.evaluate(async ({ conv, format, cfg }) => {
    const { ContextGuard, countMessages } = await import('/pkg/index.js');
    const guard = new ContextGuard({ ...cfg, model: 'gpt-4o', format });
    const opts = { tools: conv.tools, ...(conv.system === undefined ? {} : { system: conv.system }) };
    try {
      const result = guard.guardSources(conv.messages, opts);
      return { raw: guard.measure(conv.messages, opts).usedTokens, used: result.metrics.usedTokens, rows: countMessages(conv.messages, { model: 'gpt-4o', format, ...opts }).perMessage.length, traces: result.traces };
    } finally {
      guard.free();
    }
  }, { conv, format, cfg: PAGE_GUARDS });
}

/** The message row of the raw/model-visible list whose text contains `needle`. */
const rowWith = (page, needle) => page.locator('#messages li.msg', { hasText: needle });


describe('demo page', () => {
  test('measures the built-in sample: the model-visible metrics guardSources returns, with the raw total', async () => {
    const page = await openPage();
    try {
      await ready(page);
      assert.equal(await page.locator('#model').inputValue(), 'gpt-4o');
      for (const [k, v] of Object.entries(PAGE_GUARDS)) assert.equal(await page.locator(`#guard-${k}`).inputValue(), String(v), k);
      const guarded = await guardSample(page, { model: 'gpt-4o' });
      // The budget and the breakdown show the model-visible view, with the raw total next to it.
      const expected = guarded.metrics;
      assert.equal(digits(await text(page, '#raw-tokens')), guarded.raw.usedTokens);
      assert.equal(digits(await page.locator('#saved-tokens').getAttribute('data-value')), guarded.raw.usedTokens - expected.usedTokens);
      assert.ok(expected.usedTokens < guarded.raw.usedTokens, 'the source guards cut the sample');

      assert.equal(digits(await text(page, '#used-tokens')), expected.usedTokens);
      assert.equal(digits(await text(page, '#usable-limit')), expected.usableLimit);
      assert.equal(await page.locator('#state').getAttribute('data-state'), expected.state);
      const label = { ok: 'OK', near_trigger: 'Near trigger', over_trigger: 'Over trigger', over_limit: 'Over limit' }[expected.state];
      assert.match(await text(page, '#state'), new RegExp(`^\\W*${label}`));

      // Breakdown: one row per source, each with its number, adding up to the used tokens.
      const rows = await page.locator('table.breakdown tbody tr').evaluateAll((trs) =>
        trs.map((tr) => ({ source: tr.dataset.source, tokens: tr.querySelector('td.num').textContent })));
      assert.deepEqual(rows.map((r) => r.source), ['system', 'toolDefinitions', 'user', 'assistant', 'toolOutputs', 'attachments', 'images', 'summary', 'framing']);
      for (const r of rows) {
        assert.match(r.tokens, /^\d[\d,]*$/, `breakdown row ${r.source}`);
        assert.equal(digits(r.tokens), expected.breakdown[r.source], `breakdown row ${r.source}`);
      }
      assert.equal(rows.reduce((sum, r) => sum + digits(r.tokens), 0), expected.usedTokens);
      const rawOf = await page.locator('table.breakdown tbody tr[data-raw]').evaluateAll((trs) => Object.fromEntries(trs.map((tr) => [tr.dataset.source, Number(tr.dataset.raw)])));
      assert.deepEqual(Object.keys(rawOf).sort(), ['attachments', 'toolOutputs']);
      for (const [source, tokens] of Object.entries(rawOf)) assert.equal(tokens, guarded.raw.breakdown[source], `raw ${source}`);
      for (const source of ['system', 'toolDefinitions', 'user', 'assistant', 'toolOutputs', 'attachments', 'images']) {
        assert.ok(expected.breakdown[source] > 0, `the sample has ${source}`);
      }

      assert.equal(await text(page, '#count-kind'), 'Exact');
      assert.match(await text(page, '#encoding'), /o200k_base/);
      assert.equal(digits(await text(page, '#message-count')), expected.messageCount);

      // Raw view: one row per message, each with its count.
      const counts = await page.locator('#messages .msg-tokens .num').allInnerTexts();
      assert.equal(counts.length, 9);
      for (const c of counts) assert.ok(digits(c) > 0, `per-message count ${c}`);

      await shot(page, 'sample-light');
      await page.emulateMedia({ colorScheme: 'dark' });
      await shot(page, 'sample-dark');
      expectClean(page);
    } finally {
      await page.close();
    }
  });

  test('switching to a cl100k model and to a Claude model changes the encoding and the count kind', async () => {
    const page = await openPage();
    try {
      await ready(page);
      assert.equal(await after1(page, () => page.selectOption('#model', 'gpt-4')), 'ready');
      assert.equal(await text(page, '#count-kind'), 'Exact');
      assert.match(await text(page, '#encoding'), /cl100k_base/);
      // gpt-4's 8k window cannot hold the sample.
      const gpt4 = (await guardSample(page, { model: 'gpt-4' })).metrics;
      assert.equal(digits(await text(page, '#used-tokens')), gpt4.usedTokens);
      assert.equal(await page.locator('#state').getAttribute('data-state'), gpt4.state);
      await shot(page, 'model-gpt-4');

      assert.equal(await after1(page, () => page.selectOption('#model', 'claude-sonnet-4')), 'ready');
      assert.equal(await text(page, '#count-kind'), 'Estimate');
      assert.match(await text(page, '#encoding'), /o200k_base × \d\.\d\d/);
      const claude = (await guardSample(page, { model: 'claude-sonnet-4' })).metrics;
      assert.equal(claude.kind, 'estimate');
      assert.equal(digits(await text(page, '#used-tokens')), claude.usedTokens);
      await shot(page, 'model-claude');
      expectClean(page);
    } finally {
      await page.close();
    }
  });

  test('reported usage calibrates an estimated model; exact counts are only reported; the next request has a cost', async () => {
    const page = await openPage();
    try {
      await ready(page);
      // gpt-4o: exact; the cost of the next request is on the budget card, from the price table.
      assert.match(await text(page, "#next-cost"), /^\$\d/);
      assert.match(await text(page, "#next-cost"), /cached \+ [\d,]+ uncached input, output up to [\d,]+/);
      const exact = digits(await text(page, '#used-tokens'));
      await page.fill('#usage-reported', String(exact + 12));
      assert.equal(await after1(page, () => page.click('#usage-observe')), 'ready');
      assert.match(await text(page, '#usage-result'), /reported [\d,]+, ctxguard predicted [\d,]+ \(-\d+\.\d %\)\. Exact counts are reported, never corrected\./);
      assert.equal(await text(page, '#count-kind'), 'Exact');
      assert.equal(digits(await text(page, '#used-tokens')), exact, 'an exact count is not corrected');

      // Claude: an estimate until three reports agree, then calibrated (the badge and the count change).
      assert.equal(await after1(page, () => page.selectOption('#model', 'claude-sonnet-4')), 'ready');
      assert.equal(await text(page, '#count-kind'), 'Estimate');
      const estimated = digits(await text(page, '#used-tokens'));
      const reported = Math.round(estimated * 0.95); // the provider counted 5 % less than ctxguard's safe estimate
      for (let i = 1; i <= 3; i++) {
        await page.fill('#usage-reported', String(reported + i));
        assert.equal(await after1(page, () => page.click('#usage-observe')), 'ready');
        assert.equal(await page.locator('#usage-result').getAttribute('data-observations'), String(i));
      }
      assert.match(await text(page, '#usage-result'), /Counts are now calibrated × \d\.\d{3}\./);
      assert.equal(await text(page, '#count-kind'), 'Calibrated');
      assert.match(await text(page, '#encoding'), /learned from 3 provider reports/);
      const calibrated = digits(await text(page, '#used-tokens'));
      assert.ok(calibrated < estimated && calibrated >= reported, `${calibrated} between ${reported} and ${estimated}`);
      await shot(page, 'calibrated');
      // Forgetting it brings the table's estimate back.
      assert.equal(await after1(page, () => page.click('#usage-reset')), 'ready');
      assert.equal(await text(page, '#count-kind'), 'Estimate');
      assert.equal(digits(await text(page, '#used-tokens')), estimated);
      expectClean(page);
    } finally {
      await page.close();
    }
  });

  test('custom limits recompute the budget, and impossible ones show their error code', async () => {
    const page = await openPage();
    try {
      await ready(page);
      const used = digits(await text(page, '#used-tokens'));
      assert.equal(await after1(page, () => page.fill('#limit-economicBudget', String(Math.floor(used / 2)))), 'ready');
      assert.equal(digits(await text(page, '#usable-limit')), Math.floor(used / 2));
      assert.equal(await page.locator('#state').getAttribute('data-state'), 'over_limit');
      assert.match(await text(page, '#state'), /Over limit/);
      await shot(page, 'economic-budget');

      assert.equal(await after1(page, () => page.fill('#limit-reservedOutputTokens', '999999999')), 'error');
      assert.equal(await text(page, '#error-code'), 'INVALID_BUDGET');
      assert.ok(await page.locator('#limits-error').isVisible());
      assert.equal(await after1(page, () => page.click('#reset-limits')), 'ready');
      assert.equal(digits(await text(page, '#used-tokens')), used);
      expectClean(page);
    } finally {
      await page.close();
    }
  });

  test('a malformed conversation shows an error with its code, never a blank page', async () => {
    const page = await openPage();
    try {
      await ready(page);
      const used = await text(page, '#used-tokens');
      const cases = [
        ['[{"role": "wizard", "content": "hi"}]', 'INVALID_ROLE'],
        ['{"messages": "not a list"}', 'INVALID_MESSAGES'],
        ['[{"role": "user", "content": "unclosed', 'INVALID_JSON'],
      ];
      for (const [input, code] of cases) {
        assert.equal(await after1(page, () => page.fill('#conversation', input)), 'error', input);
        assert.ok(await page.locator('#error').isVisible(), input);
        assert.equal(await text(page, '#error-code'), code, input);
        assert.ok((await text(page, '#error-message')).length > 0, input);
        assert.match(await text(page, '#conversation-error'), new RegExp(code));
        // The last valid figures stay on screen, marked stale.
        assert.equal(await text(page, '#used-tokens'), used);
        if (code === 'INVALID_ROLE') await shot(page, 'malformed');
      }
      assert.equal(await after1(page, () => page.click('#use-sample')), 'ready');
      assert.ok(await page.locator('#error').isHidden());
      assert.equal(await text(page, '#used-tokens'), used);
      expectClean(page);
    } finally {
      await page.close();
    }
  });

  test('an Anthropic conversation loaded from a file is measured with one row per tool result', async () => {
    const page = await openPage();
    try {
      await ready(page);
      const request = {
        system: 'You are a terse assistant.',
        messages: [
          { role: 'user', content: 'What does README.md say?' },
          { role: 'assistant', content: [{ type: 'text', text: 'Reading it.' }, { type: 'tool_use', id: 'toolu_01', name: 'read_file', input: { path: 'README.md' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: '# Demo\nA small demo project.' }, { type: 'text', text: 'Summarize it in one line.' }] },
        ],
        tools: [{ name: 'read_file', description: 'Read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } }],
      };
      await page.selectOption('#model', 'claude-sonnet-4');
      const status = await after1(page, () =>
        page.setInputFiles('#file', { name: 'anthropic.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(request)) }));
      assert.equal(status, 'ready', await text(page, '#results'));
      assert.equal(await page.locator('#format').inputValue(), 'anthropic');
      const expected = await page.evaluate(async (req) => {
        const { ContextGuard } = await import('/pkg/index.js');
        const guard = new ContextGuard({ model: 'claude-sonnet-4', format: 'anthropic' });
        return guard.measure(req.messages, { system: req.system, tools: req.tools });
      }, request);
      assert.equal(digits(await text(page, '#used-tokens')), expected.usedTokens);
      const roles = await page.locator('#messages .msg-line .role').allInnerTexts();
      assert.deepEqual(roles, ['system', 'user', 'assistant', 'tool', 'user']);
      assert.equal(await page.locator('#messages .msg-tokens .num').count(), 5);
      assert.equal(await page.locator('#messages-card .notice').count(), 0);
      // Nothing to compact and no attachment blocks: no trace at all, nothing marked as changed.
      assert.ok(await page.locator('#no-traces').isVisible());
      assert.equal(await page.locator('#messages li.msg.changed').count(), 0);
      await shot(page, 'anthropic-file');
      expectClean(page);
    } finally {
      await page.close();
    }
  });

  test('the format selector converts the unedited sample to Anthropic and AI SDK messages, measured as guardSources measures them', async () => {
    const page = await openPage();
    try {
      await ready(page);
      for (const format of ['anthropic', 'ai-sdk']) {
        assert.equal(await after1(page, () => page.selectOption('#format', format)), 'ready', await text(page, '#results'));
        const conv = JSON.parse(await page.locator('#conversation').inputValue());
        // The system prompt as `system` (AI SDK 7 rejects system messages in `messages` by default).
        assert.equal(typeof conv.system, 'string');
        assert.ok(conv.messages.every((m) => m.role !== 'system'));
        if (format === 'ai-sdk') {
          assert.deepEqual(Object.keys(conv.tools), ['read_file', 'run_tests', 'list_ci_runs']);
          assert.ok(conv.messages.some((m) => m.role === 'tool' && m.content.length === 2 && m.content.every((p) => p.type === 'tool-result')));
        }
        const expected = await guardConverted(page, conv, format);
        assert.equal(digits(await text(page, '#raw-tokens')), expected.raw, format);
        assert.equal(digits(await text(page, '#used-tokens')), expected.used, format);
        assert.ok(expected.used < expected.raw, `the source guards cut the ${format} sample`);
        // One row per internal message (a tool result each), each with its count; no notice.
        const roles = await page.locator('#messages .msg-line .role').allInnerTexts();
        assert.equal(roles.length, expected.rows, format);
        assert.deepEqual(roles.filter((r) => r === 'tool').length, 3, format);
        assert.equal(await page.locator('#messages .msg-tokens .num').count(), expected.rows, format);
        assert.equal(await page.locator('#messages-card .notice').count(), 0, format);
        // Only the two long tool outputs and the attachment message are changed (not the system prompt).
        assert.deepEqual(await page.locator('#messages li.msg.changed .role').allInnerTexts(), ['user', 'tool', 'tool'], format);
        // Both attachments (the PDF report's block and the changelog file) are in the reader.
        const attachments = await page.locator('#reader-attachment option').allInnerTexts();
        assert.equal(attachments.length, 2, `${format}: ${attachments}`);
        assert.ok(attachments.some((t) => t.includes('money-CHANGELOG.md')), `${format}: ${attachments}`);
        assert.ok(await page.locator('#error').isHidden(), format);
        await shot(page, `sample-${format}`);
      }
      // Compaction in the AI SDK format: the checkpoint downloads as AI SDK turns (tools by name)
      // and reloads from the checkpoint.
      await page.locator('#compaction-card').scrollIntoViewIfNeeded();
      await page.click('#run-prepare');
      await page.waitForFunction(() => document.querySelector('#compaction-card').dataset.state === 'done', null, { timeout: 30_000 });
      assert.equal(await page.locator('#compaction-record dd[data-field="status"]').getAttribute('data-value'), '"completed"');
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download-checkpoint')]);
      const file = join(artifacts, 'checkpoint-ai-sdk.json');
      await copyFile(await download.path(), file);
      const saved = JSON.parse(await readFile(file, 'utf8'));
      assert.equal(saved.format, 'ai-sdk');
      assert.deepEqual(Object.keys(saved.tools), ['read_file', 'run_tests', 'list_ci_runs']);
      await page.setInputFiles('#reload-file', file);
      await page.waitForSelector('#reload-status');
      assert.equal(await page.locator('#reload-status').getAttribute('data-from-checkpoint'), 'true');
      const reloaded = await page.locator('#reload-fields dd[data-field]').evaluateAll((dds) => Object.fromEntries(dds.map((dd) => [dd.dataset.field, JSON.parse(dd.dataset.value)])));
      const expectedReload = await page.evaluate(async ({ turns, tools }) => {
        const { ContextGuard, resolveHistory } = await import('/pkg/index.js');
        const resolved = resolveHistory(turns, { format: 'ai-sdk' });
        const guard = new ContextGuard({ model: 'gpt-4o', format: 'ai-sdk' });
        try {
          return { messages: resolved.messages.length, usedTokens: guard.measure(resolved.messages, { tools, ...(resolved.system ? { system: resolved.system } : {}) }).usedTokens };
        } finally {
          guard.free();
        }
      }, saved);
      assert.equal(reloaded.messages, expectedReload.messages);
      assert.equal(reloaded.usedTokens, expectedReload.usedTokens);
      // An edited conversation is not converted: it is re-read in the new format (and fails there).
      const edited = (await page.locator('#conversation').inputValue()).replace('Read a file', 'Read one file');
      assert.equal(await after1(page, () => page.fill('#conversation', edited)), 'ready');
      assert.equal(await after1(page, () => page.selectOption('#format', 'openai')), 'error');
      assert.equal(await page.locator('#conversation').inputValue(), edited);
      assert.equal(await after1(page, () => page.click('#use-sample')), 'ready');
      assert.equal(await page.locator('#format').inputValue(), 'openai');
      assert.equal(digits(await page.locator('#messages .msg-tokens .num').count()), 9);
      expectClean(page);
    } finally {
      await page.close();
    }
  });

  test('AI SDK: a system message in the middle of the conversation stays in its row in both views, unchanged', async () => {
    const page = await openPage();
    try {
      await ready(page);
      const request = {
        tools: { lookup: { description: 'Look up an order', inputSchema: { type: 'object', properties: { id: { type: 'string' } } } } },
        messages: [
          { role: 'user', content: 'Where is order 42?' },
          { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'lookup', input: { id: '42' } }] },
          { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'lookup', output: { type: 'json', value: { status: 'shipped' } } }] },
          { role: 'system', content: 'Reminder: answer in one sentence.' },
          { role: 'user', content: 'And when does it arrive?' },
        ],
      };
      // Typed (filled) text keeps the selected format (OpenAI): these messages are not OpenAI's.
      assert.equal(await after1(page, () => page.fill('#conversation', JSON.stringify(request))), 'error');
      assert.equal(await text(page, '#error-code'), 'INVALID_MESSAGE');
      // Pasted, the format it is in is picked.
      await page.locator('#conversation').dispatchEvent('paste');
      assert.equal(await after1(page, () => page.fill('#conversation', JSON.stringify(request, null, 1))), 'ready', await text(page, '#results'));
      assert.equal(await page.locator('#format').inputValue(), 'ai-sdk');
      const roles = await page.locator('#messages .msg-line .role').allInnerTexts();
      assert.deepEqual(roles, ['user', 'assistant', 'tool', 'system', 'user']);
      assert.equal(await page.locator('#messages li.msg.changed').count(), 0);
      const counts = await page.evaluate(async (req) => {
        const { countMessages } = await import('/pkg/index.js');
        return countMessages(req.messages, { model: 'gpt-4o', format: 'ai-sdk', tools: req.tools }).perMessage;
      }, request);
      const shown = await page.locator('#messages .msg-tokens .num').allInnerTexts();
      assert.deepEqual(shown.map(digits), counts);
      expectClean(page);
    } finally {
      await page.close();
    }
  });

  test('AI SDK: a tool-approval response\'s row names the tool call its approval was requested for', async () => {
    const page = await openPage();
    try {
      await ready(page);
      const request = {
        tools: { refund: { description: 'Refund an order', inputSchema: { type: 'object', properties: { id: { type: 'string' } } } } },
        messages: [
          { role: 'user', content: 'Refund order 42, please.' },
          {
            role: 'assistant',
            content: [
              { type: 'tool-call', toolCallId: 'call_refund_7', toolName: 'refund', input: { id: '42' } },
              { type: 'tool-approval-request', approvalId: 'appr_91', toolCallId: 'call_refund_7' },
            ],
          },
          { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'appr_91', approved: true }] },
        ],
      };
      await page.locator('#conversation').dispatchEvent('paste');
      assert.equal(await after1(page, () => page.fill('#conversation', JSON.stringify(request, null, 1))), 'ready', await text(page, '#results'));
      assert.equal(await page.locator('#format').inputValue(), 'ai-sdk');
      const roles = await page.locator('#messages .msg-line .role').allInnerTexts();
      assert.deepEqual(roles, ['user', 'assistant', 'tool']);
      const refs = await page.locator('#messages li.msg .ref').allInnerTexts();
      assert.deepEqual(refs.map((r) => r.trim()), ['↳ refund · call_refund_7']);
      assert.equal(await page.locator('#messages li.msg.changed').count(), 0);
      expectClean(page);
    } finally {
      await page.close();
    }
  });

  test('the model-visible view shows the compacted log and the attachment preview; the traces equal guardSources', async () => {
    const page = await openPage();
    try {
      await ready(page);
      const expected = await guardSample(page, { model: 'gpt-4o' });
      const visible = expected.messages;

      // The long test log (#4) and the JSON output (#6) are compacted, the short file read (#3) is not.
      const log = rowWith(page, 'call_rt_02');
      assert.equal(await log.getAttribute('data-changed'), 'compacted');
      assert.match(await log.locator('.change-badge').innerText(), /tool output compacted/);
      assert.equal(digits(await log.locator('.msg-visible .vnum').getAttribute('data-value')), expected.perMessage[4]);
      const marker = log.locator('.cell.added.marker-line');
      assert.equal(await marker.count(), 1);
      const markerText = await marker.innerText();
      assert.match(markerText, /^\[ctxguard:compacted-tool-output\] original \d+ tokens/);
      assert.ok(visible[4].content.includes(markerText), 'the marker line is the one guardSources wrote');
      assert.ok(await log.locator('.cell.gone').count() > 0, 'omitted raw lines are marked');
      assert.equal(await rowWith(page, 'call_ci_03').getAttribute('data-changed'), 'compacted');
      assert.equal(await rowWith(page, 'call_ci_03').locator('mark.marker-token', { hasText: /items omitted/ }).count(), 1);
      assert.match(await rowWith(page, 'call_rf_01').getAttribute('class'), /\bunchanged\b/);

      // The attachment: the report is previewed, with the footer that names the reader tool.
      const user = page.locator('#messages li.msg[data-changed="preview"]');
      assert.equal(await user.count(), 1);
      const footer = await user.locator('.cell.added.marker-line').innerText();
      assert.match(footer, /\[ctxguard:attachment-preview\] report\.pdf \(application\/pdf\)/);
      assert.match(footer, /read_attachment\(\{"id": "att_[0-9a-f]{12}", "offset": \d+\}\)/);
      assert.equal(digits(await user.locator('.msg-visible .vnum').getAttribute('data-value')), expected.perMessage[1]);
      assert.equal(await page.locator('#messages li.msg.changed').count(), 3);
      assert.equal(await page.locator('#messages li.msg.unchanged').count(), 6);

      // The traces panel: every field of both traces, as guardSources returned them.
      assert.deepEqual(expected.traces.map((t) => `${t.operation} ${t.status}`), ['tool_output applied', 'attachment_preview applied']);
      assertTraces(await tracesOnPage(page), expected.traces);
      assert.match(await text(page, '#traces-card'), /2 delivered to onTrace/);
      assert.equal(expected.traces[0].messagesTruncated, 2);
      assert.equal(expected.traces[1].attachmentBlocksTruncated, 1);

      await shot(page, 'guards-light');
      await log.locator('.compare').screenshot({ path: join(artifacts, 'compare-log.png') });
      await user.locator('.compare').screenshot({ path: join(artifacts, 'compare-attachment.png') });
      await page.locator('#traces-card').screenshot({ path: join(artifacts, 'traces.png') });
      await page.emulateMedia({ colorScheme: 'dark' });
      await shot(page, 'guards-dark');
      await log.locator('.compare').screenshot({ path: join(artifacts, 'compare-log-dark.png') });

      // "changed only" hides the unchanged rows.
      await page.check('#only-changed');
      assert.equal(await page.locator('#messages li.msg:visible').count(), 3);
      expectClean(page);
    } finally {
      await page.close();
    }
  });

  test('changing toolOutputLimit, the emergency pass and the defaults change what the model gets', async () => {
    const page = await openPage();
    try {
      await ready(page);
      const afterTokens = async () => (await tracesOnPage(page)).find((t) => t.operation === 'tool_output')?.fields.afterTokens;
      const at1000 = await afterTokens();
      assert.equal(at1000, (await guardSample(page, { model: 'gpt-4o' })).traces[0].afterTokens);

      assert.equal(await after1(page, () => page.fill('#guard-toolOutputLimit', '2000')), 'ready');
      const expected = await guardSample(page, { model: 'gpt-4o', toolOutputLimit: 2000 });
      const at2000 = await afterTokens();
      assert.ok(at2000 > at1000, `${at2000} > ${at1000}`);
      assertTraces(await tracesOnPage(page), expected.traces);
      assert.equal(digits(await text(page, '#used-tokens')), expected.metrics.usedTokens);
      assert.equal(digits(await rowWith(page, 'call_rt_02').locator('.msg-visible .vnum').getAttribute('data-value')), expected.perMessage[4]);

      // The emergency pass quarters the limit.
      assert.equal(await after1(page, () => page.check('#guard-emergency')), 'ready');
      const emergency = await guardSample(page, { model: 'gpt-4o', toolOutputLimit: 2000 }, { emergency: true });
      assertTraces(await tracesOnPage(page), emergency.traces);
      assert.equal(emergency.traces[0].emergency, true);
      assert.ok(await afterTokens() < at2000);
      assert.equal(await after1(page, () => page.uncheck('#guard-emergency')), 'ready');

      // A retrieval tool: the marker line says how to get the full output.
      assert.equal(await after1(page, () => page.fill('#guard-retrievalTool', 'get_tool_output')), 'ready');
      assert.match(await rowWith(page, 'call_rt_02').locator('.marker-line').innerText(), /Full output: call `get_tool_output` with \{"id": "call_rt_02"\}/);
      assert.equal(await after1(page, () => page.fill('#guard-retrievalTool', '')), 'ready');

      // ctxguard's defaults: the ~5,000-token outputs fit 8,000, so no tool-output event; the
      // attachments fit their budget, so the attachment event is a noop.
      assert.equal(await after1(page, () => page.click('#default-guards')), 'ready');
      const defaults = await guardSample(page, { model: 'gpt-4o', toolOutputLimit: undefined, attachmentBudget: undefined });
      assert.deepEqual(defaults.traces.map((t) => `${t.operation} ${t.status}`), ['attachment_preview noop']);
      assertTraces(await tracesOnPage(page), defaults.traces);
      assert.equal(await page.locator('#messages li.msg.changed').count(), 0);
      assert.ok(await page.locator('#all-same').isVisible());
      assert.equal(digits(await text(page, '#used-tokens')), digits(await text(page, '#raw-tokens')));
      await shot(page, 'guards-defaults');

      // A value ctxguard rejects is reported next to the source-guard fields.
      assert.equal(await after1(page, () => page.fill('#guard-toolOutputLimit', '-5')), 'error');
      assert.equal(await text(page, '#error-code'), 'INVALID_OPTIONS');
      assert.ok(await page.locator('#guards-error').isVisible());
      assert.ok(await page.locator('#limits-error').isHidden());
      assert.equal(await after1(page, () => page.click('#page-guards')), 'ready');
      assert.equal(await afterTokens(), at1000);
      expectClean(page);
    } finally {
      await page.close();
    }
  });

  test('the attachment reader pages through the full text with readAttachment', async () => {
    const page = await openPage();
    try {
      await ready(page);
      const expected = await guardSample(page, { model: 'gpt-4o' });
      // The id the model-visible preview names is the one the reader uses.
      const [, id, previewOffset] = /read_attachment\(\{"id": "(att_[0-9a-f]{12})", "offset": (\d+)\}\)/.exec(expected.messages[1].content[0].text);
      assert.equal(await page.locator('#reader-attachment').inputValue(), id);
      const limit = Number(await page.locator('#reader-limit-input').inputValue());
      const read = (offset) => page.evaluate(async ({ id, offset, limit }) => {
        const { readAttachment } = await import('/pkg/index.js');
        const { sample } = await import('/sample.js');
        const text = sample.messages[1].content[0].text;
        const body = text.slice(text.indexOf('>', text.indexOf('<attachment')) + 1, text.indexOf('</attachment>'));
        return { body, page: readAttachment({ [id]: body }, { id, offset, limit, model: 'gpt-4o' }) };
      }, { id, offset, limit });

      const pages = [];
      let offset = 0;
      for (;;) {
        const { body, page: want } = await read(offset);
        assert.equal(digits(await text(page, '#reader-offset')), offset);
        assert.equal(await page.locator('#reader-text').textContent(), want.text);
        assert.equal(await page.locator('#reader-next-offset').getAttribute('data-value'), JSON.stringify(want.nextOffset));
        assert.equal(digits(await text(page, '#reader-total')), want.totalTokens);
        pages.push(want.text);
        if (pages.length === 2) await page.locator('#reader-card').screenshot({ path: join(artifacts, 'reader.png') });
        if (want.nextOffset === null) {
          assert.ok(await page.locator('#reader-next').isDisabled());
          assert.equal(pages.join(''), body, 'the pages add up to the whole attachment');
          break;
        }
        assert.ok(pages.length < 50, 'the reader reaches the end');
        await page.click('#reader-next');
        await page.waitForFunction((n) => document.querySelector('#reader-offset')?.textContent.replace(/\D/g, '') === String(n), want.nextOffset);
        offset = want.nextOffset;
      }
      assert.ok(pages.length >= 3, `the report takes several pages of ${limit} tokens`);

      // The footer's suggestion: continue where the preview stops.
      await page.click('#reader-continue');
      await page.waitForFunction((n) => document.querySelector('#reader-offset')?.textContent === String(n), Number(previewOffset));
      assert.equal(await page.locator('#reader-text').textContent(), (await read(Number(previewOffset))).page.text);

      // An offset past the end gets ctxguard's error in the reader, not a console error.
      await page.fill('#reader-offset-input', '100000');
      await page.locator('#reader-offset-input').dispatchEvent('change');
      await page.waitForSelector('#reader-error');
      assert.match(await text(page, '#reader-error'), /INVALID_OPTIONS/);

      // The changelog is sent whole: listed, without a preview to continue from.
      const other = await page.locator('#reader-attachment option').evaluateAll((os) => os.map((o) => [o.value, o.textContent]));
      assert.equal(other.length, 2);
      assert.match(other[1][1], /money-CHANGELOG\.md .*sent whole/);
      await page.selectOption('#reader-attachment', other[1][0]);
      await page.waitForFunction(() => document.querySelector('#reader-offset')?.textContent === '0');
      assert.ok(await page.locator('#reader-continue').isHidden());
      assert.match(await page.locator('#reader-text').textContent(), /@acme\/money changelog/);
      expectClean(page);
    } finally {
      await page.close();
    }
  });

  test('compaction: prepare() with the built-in summarizer shows heartbeats, the record and the checkpoint, which downloads and reloads', async () => {
    const page = await openPage();
    try {
      await ready(page);
      const card = page.locator('#compaction-card');
      await card.scrollIntoViewIfNeeded();
      assert.ok(await page.locator('#summarizer-builtin').isChecked(), 'the built-in summarizer is the default');
      assert.ok(await page.locator('#cmp-force').isChecked());
      const win = Number(await page.locator('#cmp-window').inputValue());
      assert.ok(win > 0, 'a small window is suggested');

      // What prepare() itself returns for the sample with the same settings (summarizer without its delay).
      const expected = await page.evaluate(async (win) => {
        const { ContextGuard } = await import('/pkg/index.js');
        const { sample } = await import('/sample.js');
        const { builtinSummarizer } = await import('/summarizers.js');
        const out = Math.floor(win / 8);
        const guard = new ContextGuard({ model: 'gpt-4o', format: 'openai', toolOutputLimit: 1000, attachmentBudget: 400, contextWindow: win, maxOutputTokens: out, reservedOutputTokens: out });
        try {
          return await guard.prepare(sample.messages, { tools: sample.tools, force: true, summarize: builtinSummarizer({ delayMs: 0 }) });
        } finally {
          guard.free();
        }
      }, win);
      assert.equal(expected.compaction.status, 'completed');

      await page.click('#run-prepare');
      // Heartbeats every 250 ms while the ~1.5 s summarizer runs: on screen, live.
      await page.waitForFunction(() => document.querySelectorAll('#cmp-beats li').length >= 2 && document.querySelector('#compaction-card').dataset.state === 'running', null, { timeout: 10_000 });
      assert.match(await text(page, '#cmp-live'), /Summarizing .* \d[\d,]* ms · attempt 1 · \d+ heartbeats/);
      await page.locator('#compaction-card').screenshot({ path: join(artifacts, 'compaction-running.png') });
      await page.waitForFunction(() => document.querySelector('#compaction-card').dataset.state === 'done', null, { timeout: 30_000 });
      const beats = await page.locator('#cmp-beats li').evaluateAll((lis) => lis.map((li) => ({ elapsed: Number(li.dataset.elapsed), attempt: Number(li.dataset.attempt) })));
      assert.ok(beats.length >= 3, `${beats.length} heartbeats`);
      for (let i = 1; i < beats.length; i++) assert.ok(beats[i].elapsed >= beats[i - 1].elapsed, 'elapsed grows');
      assert.ok(beats.every((b) => b.attempt === 1));
      assert.match(await text(page, '#cmp-live'), /prepare\(\) finished in/);

      // The record on screen is the one prepare() returns.
      const record = await page.locator('#compaction-record dd[data-field]').evaluateAll((dds) => Object.fromEntries(dds.map((dd) => [dd.dataset.field, JSON.parse(dd.dataset.value)])));
      assert.deepEqual(Object.keys(record).sort(), Object.keys(expected.compaction).sort(), 'every field of the record is shown');
      for (const k of ['status', 'removedItems', 'attempts', 'failureReason', 'beforeTokens', 'afterTokens', 'tokensSaved']) assert.deepEqual(record[k], expected.compaction[k], k);
      assert.ok(record.durationMs >= beats.at(-1).elapsed, 'the duration includes the summarizer call its heartbeats reported');
      assert.equal(await page.locator('#cmp-degraded').getAttribute('data-degraded'), 'false');
      assert.match(await text(page, '#cmp-log'), /\[SummaryCompact\]/);
      assert.match(await text(page, '#compaction-card'), /\[ctxguard:summary\]/);
      await shot(page, 'compaction-done');
      await page.locator('#compaction-card').screenshot({ path: join(artifacts, 'compaction-card.png') });

      // The checkpoint downloads as stored turns; the last turn's chain is prepare()'s checkpoint.
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download-checkpoint')]);
      const file = join(artifacts, 'checkpoint.json');
      await copyFile(await download.path(), file);
      const saved = JSON.parse(await readFile(file, 'utf8'));
      assert.equal(saved.format, 'openai');
      assert.equal(saved.turns.length, 2);
      assert.deepEqual(saved.turns.at(-1).messages, expected.checkpoint.messages);
      assert.equal(JSON.stringify(saved).includes('sk-'), false);

      // Reloading the file resumes from the checkpoint, as resolveHistory says in the page.
      await page.setInputFiles('#reload-file', file);
      await page.waitForSelector('#reload-status');
      const resolved = await page.evaluate(async (turns) => {
        const { resolveHistory } = await import('/pkg/index.js');
        return resolveHistory(turns, { format: 'openai' });
      }, saved.turns);
      assert.equal(resolved.fromCheckpoint, true);
      assert.equal(await page.locator('#reload-status').getAttribute('data-from-checkpoint'), 'true');
      assert.match(await text(page, '#reload-status'), /from checkpoint/i);
      const shown = await page.locator('#reload-fields dd[data-field]').evaluateAll((dds) => Object.fromEntries(dds.map((dd) => [dd.dataset.field, JSON.parse(dd.dataset.value)])));
      assert.equal(shown.messages, resolved.messages.length);
      assert.equal(shown.checkpointIndex, resolved.checkpointIndex);
      assert.ok(shown.messages < shown.storedMessages, 'fewer messages than stored');
      assert.ok(shown.usedTokens > 0);
      await page.locator('.cmp-reload').screenshot({ path: join(artifacts, 'reload.png') });

      // The copy in localStorage gives the same.
      await page.evaluate(() => document.querySelector('#reload-output').replaceChildren());
      await page.click('#reload-storage');
      await page.waitForSelector('#reload-status');
      assert.equal(await page.locator('#reload-status').getAttribute('data-from-checkpoint'), 'true');
      assert.match(await text(page, '#reload-status'), /localStorage/);
      expectClean(page);
    } finally {
      await page.close();
    }
  });

  test('tool outputs by age: each output\'s age, what it became and its tokens, and the clearing steps, as guardSources gives them', async () => {
    const page = await openPage();
    try {
      await ready(page);
      /** What ctxguard says of the sample's three tool outputs (messages 3, 4 and 6), newest first. */
      const expectedAges = (config) => page.evaluate(async (cfg) => {
        const { ContextGuard, countMessages } = await import('/pkg/index.js');
        const { sample } = await import('/sample.js');
        const guard = new ContextGuard({ format: 'openai', ...cfg });
        try {
          const r = guard.guardSources(sample.messages, { tools: sample.tools });
          const raw = countMessages(sample.messages, { model: cfg.model, tools: sample.tools }).perMessage;
          const vis = countMessages(r.messages, { model: cfg.model, tools: sample.tools }).perMessage;
          const became = (i) => (r.messages[i].content.includes('[ctxguard:cleared-tool-output]') ? 'cleared' : r.messages[i].content.includes('[ctxguard:compacted-tool-output]') ? 'compacted' : 'verbatim');
          return { outputs: [6, 4, 3].map((i) => ({ state: became(i), before: raw[i], after: vis[i] })), clearing: r.metrics.clearing, steps: r.traces.filter((t) => t.operation === 'tool_output_clear') };
        } finally {
          guard.free();
        }
      }, { model: 'gpt-4o', ...PAGE_GUARDS, ...config });
      const onPage = () => page.locator('#age-table tbody tr').evaluateAll((trs) => trs.map((tr) => ({
        state: tr.dataset.state, age: Number(tr.dataset.age), ref: tr.querySelector('.age-ref code').textContent,
        before: Number(tr.children[2].dataset.value), after: Number(tr.children[3].dataset.value), badge: tr.querySelector('.age-badge').textContent,
      })));
      const clearingOnPage = () => page.locator('#age-clearing').evaluate((dd) => ({ cleared: Number(dd.dataset.cleared), compacted: Number(dd.dataset.compacted), savedTokens: Number(dd.dataset.saved), protectTokens: Number(dd.dataset.protect), clearAtLeast: Number(dd.dataset.clearAtLeast) }));

      // The page's values: the two ~5,000-token outputs compacted by size, the file read whole.
      let expected = await expectedAges({});
      let rows = await onPage();
      assert.deepEqual(rows.map((r) => r.ref), ['list_ci_runs', 'run_tests', 'read_file'], 'newest first');
      assert.deepEqual(rows.map((r) => r.age), [1, 1, 1], 'one user turn after them');
      assert.deepEqual(rows.map(({ state, before, after }) => ({ state, before, after })), expected.outputs);
      assert.deepEqual(rows.map((r) => r.state), ['compacted', 'compacted', 'verbatim']);
      assert.deepEqual(await clearingOnPage(), expected.clearing);
      assert.equal(await page.locator('#age-strip .age-cell').count(), 3);
      assert.deepEqual(await page.locator('#age-strip .age-cell').evaluateAll((cells) => cells.map((c) => c.dataset.state)), ['verbatim', 'compacted', 'compacted'], 'the strip runs oldest to newest');
      assert.match(await text(page, '#age-protect'), /default/);
      assert.ok(await page.locator('#age-steps').isVisible());
      assert.equal(await page.locator('#age-steps tr[data-cleared]').count(), 0, 'no clearing step at 128k');

      // A 5,000-token window: the oldest output is cleared to a stub and the next compacted by age,
      // in one step whose invalidated prefix is on screen.
      assert.equal(await after1(page, () => page.fill('#limit-contextWindow', '5000')), 'ready');
      expected = await expectedAges({ contextWindow: 5000 });
      rows = await onPage();
      assert.deepEqual(rows.map(({ state, before, after }) => ({ state, before, after })), expected.outputs);
      assert.deepEqual(rows.map((r) => r.state), ['compacted', 'compacted', 'cleared']);
      assert.equal(rows[2].badge, 'cleared (stub)');
      assert.match(await page.locator('#age-table tbody tr[data-state="cleared"] .age-stub').getAttribute('title'), /^\[ctxguard:cleared-tool-output\] read_file\(path=src\/billing\/period\.ts\)/);
      assert.deepEqual(await clearingOnPage(), expected.clearing);
      assert.deepEqual(expected.clearing.cleared, 1);
      assert.equal(expected.steps.length, 1);
      const step = await page.locator('#age-steps tr[data-cleared]').evaluateAll((trs) => trs.map((tr) => ({ cleared: Number(tr.dataset.cleared), prefix: Number(tr.dataset.prefix) })));
      assert.deepEqual(step, expected.steps.map((t) => ({ cleared: t.messagesCleared, prefix: t.prefixInvalidatedTokens })));
      // The cleared output is marked in the message list too.
      assert.equal(await page.locator('#messages li.msg[data-changed="cleared"]').count(), 1);
      await page.locator('#ages-card').screenshot({ path: join(artifacts, 'ages.png') });

      // The protected budget given in the Source guards panel is the one shown, and is used.
      assert.equal(await after1(page, () => page.fill('#guard-protectTokens', '400')), 'ready');
      assert.equal(await page.locator('#age-protect').getAttribute('data-value'), '400');
      expected = await expectedAges({ contextWindow: 5000, clearToolOutputs: { protectTokens: 400 } });
      assert.deepEqual((await onPage()).map(({ state, before, after }) => ({ state, before, after })), expected.outputs);
      await page.setViewportSize({ width: 390, height: 800 });
      await page.locator('#ages-card').screenshot({ path: join(artifacts, 'ages-390.png') });
      expectClean(page);
    } finally {
      await page.close();
    }
  });

  test('the format selector converts the sample to OpenAI Responses items and Gemini contents, measured as guardSources measures them', async () => {
    const page = await openPage();
    try {
      await ready(page);
      const formats = await page.locator('#format option').evaluateAll((os) => os.map((o) => o.value));
      assert.deepEqual(formats, ['openai', 'anthropic', 'ai-sdk', 'openai-responses', 'gemini']);
      for (const format of ['openai-responses', 'gemini']) {
        assert.equal(await after1(page, () => page.selectOption('#format', format)), 'ready', await text(page, '#results'));
        const conv = JSON.parse(await page.locator('#conversation').inputValue());
        if (format === 'openai-responses') {
          assert.equal(typeof conv.system, 'string', 'instructions');
          assert.deepEqual(conv.messages.filter((m) => m.type === 'function_call_output').map((m) => m.call_id), ['call_rf_01', 'call_rt_02', 'call_ci_03']);
          assert.deepEqual(conv.tools.map((t) => t.name), ['read_file', 'run_tests', 'list_ci_runs']);
        } else {
          assert.deepEqual(Object.keys(conv.system), ['parts'], 'systemInstruction');
          assert.ok(conv.messages.every((m) => m.role === 'user' || m.role === 'model'));
          assert.ok(conv.messages.some((m) => m.parts.length === 2 && m.parts.every((p) => p.functionResponse)), 'a turn\'s two responses in one content');
          assert.deepEqual(conv.tools[0].functionDeclarations.map((d) => d.name), ['read_file', 'run_tests', 'list_ci_runs']);
        }
        const expected = await guardConverted(page, conv, format);
        assert.equal(digits(await text(page, '#raw-tokens')), expected.raw, format);
        assert.equal(digits(await text(page, '#used-tokens')), expected.used, format);
        assert.ok(expected.used < expected.raw, `the source guards cut the ${format} sample`);
        assertTraces(await tracesOnPage(page), expected.traces);
        // One row per message ctxguard counts, each with its count; the three tool outputs by age.
        const roles = await page.locator('#messages .msg-line .role').allInnerTexts();
        assert.equal(roles.length, expected.rows, format);
        assert.equal(roles.filter((r) => r === 'tool').length, 3, format);
        assert.equal(await page.locator('#messages .msg-tokens .num').count(), expected.rows, format);
        assert.equal(await page.locator('#messages-card .notice').count(), 0, format);
        assert.deepEqual(await page.locator('#messages li.msg.changed .role').allInnerTexts(), ['user', 'tool', 'tool'], format);
        assert.deepEqual(await page.locator('#age-table tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.state)), ['compacted', 'compacted', 'verbatim'], format);
        await shot(page, `sample-${format}`);
      }
      expectClean(page);
    } finally {
      await page.close();
    }
  });

  /** Plays `turns` turns in the Whole conversation card with `settings` (field id → value) and waits until it is done. */
  async function play(page, turns, settings = {}) {
    await page.locator('#session-card').scrollIntoViewIfNeeded();
    await page.fill('#play-turns', String(turns));
    for (const [id, value] of Object.entries(settings)) {
      if (id === 'play-summarizer') await page.selectOption('#play-summarizer', value);
      else if (id === 'play-ahead') await page.setChecked('#play-ahead', value);
      else await page.fill(`#${id}`, String(value));
    }
    const before = Number(await page.locator('#session-card').getAttribute('data-turns') ?? 0);
    await page.click('#play');
    await page.waitForFunction((n) => document.querySelector('#session-card').dataset.state === 'done' && Number(document.querySelector('#session-card').dataset.turns) >= n, before + turns, { timeout: 180_000 });
    return page.locator('#play-rows tr').evaluateAll((trs) => trs.map((tr) => ({ turn: Number(tr.dataset.turn), used: Number(tr.dataset.used), events: tr.dataset.events.split(' ').filter(Boolean), calls: Number(tr.dataset.calls), breaker: tr.dataset.breaker })));
  }

  /**
   * The same session replayed with ContextGuard on the page's thread: the sample, an answer to
   * its last user message, then each turn of session-turns.js, prepare() on the whole history.
   */
  function replay(page, turns, { summarizer = 'instant' } = {}) {
    return page.evaluate(async ({ turns, summarizer, cfg }) => {
      const { ContextGuard } = await import('/pkg/index.js');
      const { sample } = await import('/sample.js');
      const { closingReply, turnMessages } = await import('/session-turns.js');
      const { builtinSummarizer, failingSummarizer } = await import('/summarizers.js');
      const guard = new ContextGuard(cfg);
      const inner = summarizer === 'failing' ? failingSummarizer({ delayMs: 0 }) : builtinSummarizer({ delayMs: 0 });
      let calls = 0;
      const summarize = (r) => {
        calls++;
        return inner(r);
      };
      const history = [...sample.messages, closingReply('openai')];
      const out = [];
      try {
        for (let n = 1; n <= turns; n++) {
          const { ask, reply } = turnMessages('openai', n, 800);
          history.push(...ask);
          const r = await guard.prepare(history, { tools: sample.tools, summarize, timeoutMs: 10_000, retryDelayMs: 0 });
          history.push(reply);
          const events = [];
          if (r.traces.some((t) => t.operation === 'tool_output_clear')) events.push('clear');
          if (r.degraded) events.push('degraded');
          else if (r.compaction) events.push('compacted');
          if (!r.compaction && r.metrics.memory.coveredMessages > 0) events.push('remembered');
          out.push({ turn: n, used: r.metrics.usedTokens, events, calls, breaker: r.metrics.breaker.state, reason: r.degradedReason });
        }
        return out;
      } finally {
        guard.free();
      }
    }, { turns, summarizer, cfg: { model: 'gpt-4o', format: 'openai', ...PAGE_GUARDS, contextWindow: 16000, maxOutputTokens: 2000, reservedOutputTokens: 2000, breaker: { cooldownCalls: 10 } } });
  }

  test('a whole conversation, turn by turn: prepare() on the display history every turn, in the worker, as ctxguard gives it', async () => {
    const page = await openPage();
    try {
      await ready(page);
      assert.equal(await page.locator('#session-card').getAttribute('data-state'), 'idle');
      assert.equal(await page.locator('#play-summarizer').inputValue(), 'instant');
      const rows = await play(page, 40);
      const expected = await replay(page, 40);
      assert.deepEqual(rows.map((r) => r.turn), expected.map((r) => r.turn));
      assert.deepEqual(rows.map((r) => r.used), expected.map((r) => r.used), 'model-input tokens per turn');
      assert.deepEqual(rows.map((r) => r.events.sort()), expected.map((r) => r.events.sort()), 'what happened per turn');
      assert.deepEqual(rows.map((r) => r.calls), expected.map((r) => r.calls), 'summarizer calls so far');
      // Clearing comes before summarizing; after the compaction the remembered summary is reused.
      const first = (kind) => rows.findIndex((r) => r.events.includes(kind));
      assert.ok(first('clear') >= 0 && first('compacted') > first('clear'), 'clearing steps before the first summary');
      assert.ok(first('remembered') > first('compacted'));
      assert.equal(rows.at(-1).calls, rows.filter((r) => r.events.includes('compacted')).length, 'one summarizer call per compaction, none for a remembered summary');
      const summary = page.locator('#play-summary');
      assert.equal(await summary.getAttribute('data-turns'), '40');
      assert.equal(await summary.getAttribute('data-calls'), String(rows.at(-1).calls));
      assert.equal(await summary.getAttribute('data-clear'), String(rows.filter((r) => r.events.includes('clear')).length));
      assert.match(await text(page, '#play-summary'), /the last prepare\(\) sent 4 new messages to the worker and referred to the \d+ it already had/);
      // Tool outputs by age on the last turn: the newest whole, older ones compacted, cleared, summarized.
      const states = await page.locator('#play-ages #age-table tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.state));
      assert.equal(states[0], 'verbatim', 'the newest output reaches the model whole');
      for (const s of ['compacted', 'cleared', 'summarized']) assert.ok(states.includes(s), `${s} in ${states}`);
      const order = ['verbatim', 'compacted', 'cleared', 'summarized'];
      assert.deepEqual(states, [...states].sort((a, b) => order.indexOf(a) - order.indexOf(b)), 'older outputs are never kept in a fuller form than newer ones');
      assert.ok(await page.locator('#play-ages #age-steps tr[data-cleared]').count() >= 1);
      await page.locator('#session-card').screenshot({ path: join(artifacts, 'session.png') });

      // More turns continue the same guard and history.
      const more = await play(page, 5);
      assert.equal(more.length, 45);
      assert.deepEqual(more.map((r) => r.turn), [...rows.map((r) => r.turn), 41, 42, 43, 44, 45]);
      assert.deepEqual(more.slice(0, 40).map((r) => r.used), rows.map((r) => r.used));
      expectClean(page);
    } finally {
      await page.close();
    }
  });

  test('the circuit breaker: a failing summarizer opens it after 3 failed compactions, it half-opens after its cool-down, resetBreaker closes it', async () => {
    const page = await openPage();
    try {
      await ready(page);
      const rows = await play(page, 45, { 'play-summarizer': 'failing' });
      const expected = await replay(page, 45, { summarizer: 'failing' });
      assert.deepEqual(rows.map((r) => r.breaker), expected.map((r) => r.breaker));
      assert.deepEqual(rows.map((r) => r.calls), expected.map((r) => r.calls));
      const opened = rows.findIndex((r) => r.breaker === 'open');
      assert.ok(opened > 0, 'the breaker opens');
      assert.equal(rows[opened].calls, 9, 'three failed compactions of three attempts each');
      assert.equal(await page.locator('#breaker-log li[data-kind="opened"]').getAttribute('data-turn'), String(rows[opened].turn));
      // While open, no summarizer call: the turns go straight to the fallback.
      const skipped = expected.filter((r) => r.reason === 'breaker_open').length;
      assert.ok(skipped >= 5, `${skipped} turns with breaker_open`);
      assert.equal(await page.locator('#breaker-skipped').getAttribute('data-skipped'), String(skipped));
      assert.equal(rows[opened + 1].calls, 9);
      // After 10 calls it half-opens, asks once, fails: open again (one call more).
      assert.equal(await page.locator('#breaker-log li[data-kind="reopened"]').count() >= 1, true);
      assert.equal(rows.find((r, i) => i > opened && r.calls > 9)?.calls, 10);
      const state = page.locator('#breaker-state');
      assert.equal(await state.getAttribute('data-state'), 'open');
      assert.match(await text(page, '#breaker-state'), /half-opens after \d+ more prepare calls?/);
      await page.locator('#session-card').screenshot({ path: join(artifacts, 'breaker-open.png') });

      await page.click('#reset-breaker');
      await page.waitForFunction(() => document.querySelector('#breaker-state')?.dataset.state === 'closed');
      assert.equal(await state.getAttribute('data-failures'), '0');
      assert.ok(await page.locator('#breaker-log li[data-kind="reset"]').isVisible());
      // Closed: the next compaction asks the summarizer again.
      const calls = rows.at(-1).calls;
      const after = await play(page, 3);
      assert.ok(after.at(-1).calls > calls, 'the summarizer is asked again');
      expectClean(page);
    } finally {
      await page.close();
    }
  });

  test('the Compaction card offers a failing and a hanging summarizer: three attempts, then the fallback', async () => {
    const page = await openPage();
    try {
      await ready(page);
      await page.locator('#compaction-card').scrollIntoViewIfNeeded();
      for (const [kind, reason] of [['failing', 'callback_error'], ['hanging', 'timeout']]) {
        await page.check(`#summarizer-${kind}`);
        if (kind === 'hanging') assert.equal(await page.locator('#cmp-timeout').inputValue(), '2000', 'a short timeout for a summarizer that never answers');
        await page.fill('#cmp-timeout', kind === 'hanging' ? '300' : '30000');
        await page.click('#run-prepare');
        await page.waitForFunction(() => document.querySelector('#compaction-card').dataset.state === 'done', null, { timeout: 60_000 });
        assert.equal(await page.locator('#cmp-degraded').getAttribute('data-degraded'), 'true', kind);
        assert.equal(await page.locator('#cmp-degraded').getAttribute('data-reason'), reason, kind);
        assert.equal(await page.locator('#compaction-record dd[data-field="attempts"]').getAttribute('data-value'), '3', kind);
        assert.equal(await page.locator('#compaction-record dd[data-field="status"]').getAttribute('data-value'), '"fallback"', kind);
      }
      expectClean(page);
    } finally {
      await page.close();
    }
  });

  test('ahead: true starts the summary in the background and the turn that crosses the trigger applies it', async () => {
    const page = await openPage();
    try {
      await ready(page);
      assert.match(await text(page, '#ahead-box'), /ahead: off/);
      // A 2-second summarizer and a user who pauses between turns: the summary is ready before the trigger.
      const rows = await play(page, 30, { 'play-summarizer': 'slow', 'play-ahead': true, 'play-pause': 150 });
      const started = rows.findIndex((r) => r.events.includes('ahead-started'));
      const applied = rows.findIndex((r) => r.events.includes('ahead-applied'));
      assert.ok(started >= 0 && applied > started, `started on turn ${rows[started]?.turn}, applied on turn ${rows[applied]?.turn}`);
      assert.ok(!rows.some((r) => r.events.includes('compacted')), 'no compaction inside a prepare() call');
      const run = page.locator('#ahead-runs li').first();
      assert.equal(await run.getAttribute('data-status'), 'applied');
      assert.equal(await run.getAttribute('data-started'), String(rows[started].turn));
      assert.equal(await run.getAttribute('data-applied'), String(rows[applied].turn));
      assert.deepEqual((await run.getAttribute('data-traces')).split(' '), ['in_progress', 'completed', 'applied']);
      assert.ok(Number(await run.getAttribute('data-beats')) >= 1, 'heartbeats with ahead: true');
      assert.match(await run.innerText(), /the user did not wait [\d,]+ ms of the summary's [\d,]+ ms/);
      // The summarizer was called for it once, while the turns went on.
      assert.equal(rows[applied].calls, 1);
      await page.locator('#session-card').screenshot({ path: join(artifacts, 'ahead.png') });
      expectClean(page);
    } finally {
      await page.close();
    }
  });

  test('without WebAssembly, or without the package, the page says so', async () => {
    const noWasm = await openPage({ before: (p) => p.addInitScript(() => { delete globalThis.WebAssembly; }) });
    try {
      await noWasm.waitForFunction(() => document.documentElement.dataset.status === 'fatal', null, { timeout: LOAD_TIMEOUT });
      assert.match(await text(noWasm, '#fatal'), /WebAssembly is not available/);
      assert.ok(await noWasm.locator('#app').isHidden());
      await shot(noWasm, 'no-webassembly');
      expectClean(noWasm);
    } finally {
      await noWasm.close();
    }

    // The page loads the package's worker helper (/pkg/worker.js), and its worker the rest of /pkg/.
    const noPkg = await openPage({ before: (p) => p.route('**/pkg/**', (r) => r.fulfill({ status: 404, body: 'not found' })) });
    try {
      await noPkg.waitForFunction(() => document.documentElement.dataset.status === 'fatal', null, { timeout: LOAD_TIMEOUT });
      assert.match(await text(noPkg, '#fatal'), /ctxguard could not be loaded/);
      await shot(noPkg, 'no-package');
      // The failed module request is the one expected problem.
      assert.ok(noPkg.problems.every((p) => /404|pkg\/worker\.js/.test(p)), noPkg.problems.join('\n'));
    } finally {
      await noPkg.close();
    }
  });
});
