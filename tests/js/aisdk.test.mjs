// Vercel AI SDK model messages (`format: 'ai-sdk'`) through the JS API: a real-looking AI SDK 5/6
// conversation (tool calls, a long JSON tool output, a text file, an image, non-English text)
// through countMessages, measure, guardSources, prepare, settle and resolveHistory. Counts equal
// the same conversation in OpenAI shape for a GPT model (and in Anthropic shape for Claude), the
// output is valid AI SDK shape, and unchanged messages come back byte for byte.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ContextGuard, countMessages, readAttachmentTool, resolveHistory } from 'ctxguard';
import { throwsCtxguard, withFrozen } from './helpers.mjs';

// ---------------------------------------------------------------------------------------------
// Fixtures

/** A PNG header of a `w` x `h` image (enough for ctxguard to read the size), as base64. */
function pngBase64(w, h) {
  const b = Buffer.alloc(64);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b, 0);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'ascii');
  b.writeUInt32BE(w, 16);
  b.writeUInt32BE(h, 20);
  b.set([8, 6, 0, 0, 0], 24);
  return b.toString('base64');
}
const CHART = `data:image/png;base64,${pngBase64(1200, 800)}`;
const NOTES = Array.from({ length: 1500 }, (_, i) => `Notiz ${i}: Filiale ${i % 40} meldet Umsatz ${(i * 37) % 1000} € — 売上 ${i}`).join('\n');
const NOTES_B64 = Buffer.from(NOTES).toString('base64');
const SALES = { quarter: 'Q3', rows: Array.from({ length: 1500 }, (_, i) => ({ id: i, region: ['EU', 'APAC', 'NA'][i % 3], sku: `SKU-${i}`, revenue: (i * 7919) % 10000 / 100 })) };

/** The conversation as an AI SDK host passes it to generateText / streamText. */
function aiSdkConversation() {
  return [
    { role: 'system', content: 'Du bist ein Datenanalyst. Réponds en français si on te parle français.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Analysiere die Verkaufsdaten für Q3 売上データ 📈' },
        { type: 'image', image: CHART, mediaType: 'image/png' },
        { type: 'file', data: NOTES_B64, mediaType: 'text/plain', filename: 'notizen.txt' },
      ],
      providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } },
    },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Ich lade die Daten.' },
        { type: 'tool-call', toolCallId: 'call_sales', toolName: 'fetch_sales', input: { quarter: 'Q3', region: 'alle' } },
      ],
    },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_sales', toolName: 'fetch_sales', output: { type: 'json', value: SALES } }] },
    { role: 'assistant', content: 'Die Umsätze in APAC sind um 12 % gestiegen.' },
    { role: 'user', content: 'Merci ! Et le résumé ?' },
  ];
}

/** The same conversation in OpenAI Chat Completions shape, as the AI SDK's OpenAI provider sends it. */
function openaiConversation() {
  return [
    { role: 'system', content: 'Du bist ein Datenanalyst. Réponds en français si on te parle français.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Analysiere die Verkaufsdaten für Q3 売上データ 📈' },
        { type: 'image_url', image_url: { url: CHART } },
        // ctxguard's OpenAI adapter takes the extracted text of a file from a non-standard `text`.
        { type: 'file', file: { filename: 'notizen.txt', file_data: `data:text/plain;base64,${NOTES_B64}` }, text: NOTES },
      ],
    },
    {
      role: 'assistant',
      content: 'Ich lade die Daten.',
      tool_calls: [{ id: 'call_sales', type: 'function', function: { name: 'fetch_sales', arguments: JSON.stringify({ quarter: 'Q3', region: 'alle' }) } }],
    },
    { role: 'tool', tool_call_id: 'call_sales', content: JSON.stringify(SALES) },
    { role: 'assistant', content: 'Die Umsätze in APAC sind um 12 % gestiegen.' },
    { role: 'user', content: 'Merci ! Et le résumé ?' },
  ];
}

/** The same conversation in Anthropic Messages shape (system separate). */
function anthropicConversation() {
  const [, , , , answer, last] = openaiConversation();
  return {
    system: 'Du bist ein Datenanalyst. Réponds en français si on te parle français.',
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Analysiere die Verkaufsdaten für Q3 売上データ 📈' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: pngBase64(1200, 800) } },
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: NOTES }, title: 'notizen.txt' },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'Ich lade die Daten.' }, { type: 'tool_use', id: 'call_sales', name: 'fetch_sales', input: { quarter: 'Q3', region: 'alle' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_sales', content: JSON.stringify(SALES) }] },
      answer,
      last,
    ],
  };
}

const aiSdkTools = {
  fetch_sales: {
    description: 'Verkaufszahlen eines Quartals',
    inputSchema: { type: 'object', properties: { quarter: { type: 'string' }, region: { type: 'string', description: 'Region oder "alle"' } }, required: ['quarter'] },
  },
};
const openaiTools = [{ type: 'function', function: { name: 'fetch_sales', description: aiSdkTools.fetch_sales.description, parameters: aiSdkTools.fetch_sales.inputSchema } }];

// ---------------------------------------------------------------------------------------------
// A structural check of AI SDK `ModelMessage[]` (ai 5/6: provider-utils types/*-model-message.ts).

const OUTPUT_TYPES = new Set(['text', 'json', 'error-text', 'error-json', 'content', 'execution-denied']);
const isStr = (v) => typeof v === 'string';

function assertDataContent(v, where) {
  assert.ok(isStr(v), `${where}: data must be a string (base64 or URL), got ${typeof v}`);
}

function assertPart(part, allowed, where) {
  assert.ok(part && typeof part === 'object', `${where}: part must be an object`);
  assert.ok(allowed.includes(part.type), `${where}: part type ${part.type} not allowed here`);
  switch (part.type) {
    case 'text':
    case 'reasoning':
      assert.ok(isStr(part.text), `${where}: text`);
      break;
    case 'image':
      assertDataContent(part.image, where);
      break;
    case 'file':
      assertDataContent(part.data, where);
      assert.ok(isStr(part.mediaType), `${where}: mediaType`);
      break;
    case 'tool-call':
      assert.ok(isStr(part.toolCallId) && isStr(part.toolName) && 'input' in part, `${where}: tool-call fields`);
      break;
    case 'tool-result':
      assert.ok(isStr(part.toolCallId) && isStr(part.toolName), `${where}: tool-result ids`);
      assert.ok(OUTPUT_TYPES.has(part.output?.type), `${where}: output type ${part.output?.type}`);
      if (['text', 'error-text'].includes(part.output.type)) assert.ok(isStr(part.output.value), `${where}: text output value`);
      if (['json', 'error-json'].includes(part.output.type)) assert.ok('value' in part.output, `${where}: json output value`);
      break;
    default:
  }
  assert.ok(!('ctxguard' in part), `${where}: ctxguard metadata in a model-visible part`);
}

/** Valid AI SDK `system` (for `system` / `instructions`): system messages with string content. */
function assertAiSdkSystem(system) {
  assert.ok(Array.isArray(system) && system.length > 0, 'system must be a non-empty array or null');
  for (const m of system) {
    assert.equal(m.role, 'system');
    assert.ok(isStr(m.content));
  }
}

/** Valid AI SDK messages, every tool call answered by a later result and every result after its call. */
function assertAiSdkMessages(messages, { modelVisible = true } = {}) {
  assert.ok(Array.isArray(messages));
  const open = new Set();
  messages.forEach((m, i) => {
    const where = `messages[${i}]`;
    if (modelVisible) assert.ok(!('ctxguard' in m), `${where}: ctxguard metadata in a model-visible message`);
    switch (m.role) {
      case 'system':
        assert.fail(`${where}: system messages belong in \`system\` (AI SDK 7 rejects them in messages)`);
        break;
      case 'user':
        if (!isStr(m.content)) m.content.forEach((p, j) => assertPart(p, ['text', 'image', 'file'], `${where}.content[${j}]`));
        break;
      case 'assistant':
        if (!isStr(m.content)) {
          m.content.forEach((p, j) => {
            assertPart(p, ['text', 'file', 'reasoning', 'tool-call', 'tool-result', 'tool-approval-request'], `${where}.content[${j}]`);
            if (p.type === 'tool-call' && !p.providerExecuted) open.add(p.toolCallId);
          });
        }
        break;
      case 'tool':
        assert.ok(Array.isArray(m.content) && m.content.length > 0, `${where}: tool content`);
        m.content.forEach((p, j) => {
          assertPart(p, ['tool-result', 'tool-approval-response'], `${where}.content[${j}]`);
          if (p.type === 'tool-result') {
            assert.ok(open.has(p.toolCallId), `${where}: result ${p.toolCallId} without its call before it`);
            open.delete(p.toolCallId);
          }
        });
        break;
      default:
        assert.fail(`${where}: role ${m.role}`);
    }
  });
  assert.deepEqual([...open], [], 'tool calls without a result');
}

const sameJson = (a, b) => assert.equal(JSON.stringify(a), JSON.stringify(b));

// ---------------------------------------------------------------------------------------------

test('countMessages: AI SDK messages count like the same conversation in OpenAI shape (GPT) and Anthropic shape (Claude)', () => {
  const ai = withFrozen(aiSdkConversation(), (msgs) => countMessages(msgs, { model: 'gpt-4o', format: 'ai-sdk', tools: aiSdkTools }));
  const oa = countMessages(openaiConversation(), { model: 'gpt-4o', tools: openaiTools });
  assert.deepEqual(ai, oa);
  assert.ok(ai.exact);
  assert.ok(ai.total > 30000, `${ai.total}`);
  // The system prompt given as generateText's `system` option.
  const [system, ...rest] = aiSdkConversation();
  assert.deepEqual(countMessages(rest, { model: 'gpt-4o', format: 'ai-sdk', system: system.content, tools: aiSdkTools }), oa);

  const an = anthropicConversation();
  const claude = countMessages(aiSdkConversation(), { model: 'claude-sonnet-4-5', format: 'ai-sdk' });
  assert.deepEqual(claude, countMessages(an.messages, { model: 'claude-sonnet-4-5', format: 'anthropic', system: an.system }));
  assert.equal(claude.kind, 'estimate');
});

test('providerOptions, reasoning of earlier turns and approvals are not counted', () => {
  const base = countMessages(aiSdkConversation(), { model: 'gpt-4o', format: 'ai-sdk' });
  const decorated = aiSdkConversation();
  decorated[2].providerOptions = { openai: { reasoningEffort: 'high', note: 'x'.repeat(5000) } };
  decorated[2].content.unshift({ type: 'reasoning', text: 'Ich sollte zuerst die Daten laden. '.repeat(200), providerOptions: { anthropic: { signature: 'sig' } } });
  decorated[3].content[0].providerOptions = { anthropic: { cacheControl: { type: 'ephemeral' } } };
  assert.deepEqual(countMessages(decorated, { model: 'gpt-4o', format: 'ai-sdk' }), base);

  // Reasoning of the current turn (after the latest user message) goes back to the model in a
  // tool loop: it is counted.
  const loop = [...aiSdkConversation(), { role: 'assistant', content: [{ type: 'reasoning', text: 'Je dois résumer. '.repeat(100) }, { type: 'text', text: 'Voilà.' }] }];
  const counted = countMessages(loop, { model: 'gpt-4o', format: 'ai-sdk' });
  assert.ok(counted.perMessage.at(-1) > 300, `${counted.perMessage.at(-1)}`);
});

test('measure and guardSources: same tokens as OpenAI shape, valid AI SDK output, json output stays json, text file previewed', () => {
  const config = { model: 'gpt-4o', toolOutputLimit: 2000, attachmentBudget: 1500, retrievalTool: 'get_tool_output' };
  const ai = new ContextGuard({ ...config, format: 'ai-sdk' });
  const oa = new ContextGuard(config);
  assert.equal(ai.measure(aiSdkConversation()).usedTokens, oa.measure(openaiConversation()).usedTokens);

  const input = aiSdkConversation();
  const r = withFrozen(input, (msgs) => ai.guardSources(msgs));
  const o = oa.guardSources(openaiConversation());
  // The system message comes back unchanged in `system` (for generateText's system / instructions).
  assert.equal(JSON.stringify(r.system), JSON.stringify([input[0]]));
  assert.equal(r.metrics.usedTokens, o.metrics.usedTokens);
  assert.deepEqual(r.traces.map((t) => [t.operation, t.messagesTruncated, t.attachmentBlocksTruncated]), o.traces.map((t) => [t.operation, t.messagesTruncated, t.attachmentBlocksTruncated]));
  assertAiSdkMessages(r.messages);
  assert.equal(r.messages.length, input.length - 1);

  // The JSON output was compacted to JSON, exactly the text the OpenAI shape got.
  const output = r.messages[2].content[0].output;
  assert.equal(output.type, 'json');
  assert.match(output.value._ctxguard, /^\[ctxguard:compacted-tool-output\] original \d+ tokens/);
  assert.match(output.value._ctxguard, /get_tool_output/);
  assert.equal(JSON.stringify(output.value), o.messages[3].content);

  // The text file is now a preview, still a text/plain file part with base64 data.
  const file = r.messages[0].content[2];
  assert.deepEqual(Object.keys(file), ['type', 'data', 'mediaType', 'filename']);
  const preview = Buffer.from(file.data, 'base64').toString('utf8');
  assert.match(preview, /\[ctxguard:attachment-preview\] notizen\.txt \(text\/plain\)/);
  assert.ok(preview.length < NOTES.length / 4);

  // Everything else comes back byte for byte (key order and providerOptions included).
  for (const i of [2, 4, 5]) sameJson(r.messages[i - 1], input[i]);
  sameJson(r.messages[0].content.slice(0, 2), input[1].content.slice(0, 2));
  sameJson(r.messages[0].providerOptions, input[1].providerOptions);
});

test('unchanged messages round-trip exactly, including odd key orders, URL objects and v4 fields', () => {
  const guard = new ContextGuard({ model: 'gpt-4o-mini', format: 'ai-sdk' });
  const msgs = [
    { content: 'Kurz bitte.', role: 'system', providerOptions: { openai: { store: false } } },
    { role: 'user', content: [{ text: 'Was zeigt das Bild?', type: 'text' }, { type: 'image', image: CHART }] },
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'zoom', args: { factor: 2 } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'zoom', result: { ok: true } }] },
    { role: 'assistant', content: [{ type: 'reasoning', text: 'alt' }, { type: 'text', text: 'Ein Balkendiagramm.' }] },
    { role: 'user', content: [{ type: 'image', image: new URL('https://example.com/chart.png') }] },
  ];
  const before = JSON.stringify(msgs);
  const r = guard.guardSources(msgs);
  assert.equal(JSON.stringify(msgs), before, 'the input was modified');
  assert.ok(msgs[5].content[0].image instanceof URL);
  sameJson(r.system, [msgs[0]]);
  assert.equal(r.messages.length, msgs.length - 1);
  for (let i = 1; i < 5; i++) sameJson(r.messages[i - 1], msgs[i]);
  // A URL object crosses as its href, which the AI SDK accepts as well.
  assert.deepEqual(r.messages[4].content[0], { type: 'image', image: 'https://example.com/chart.png' });
});

test('binary data is an INVALID_MESSAGES error naming the part; base64 text is the way', () => {
  // JS values JSON would change are refused before the adapter sees them (src/js/json.js): the
  // message names the path and the kind; the adapter's own INVALID_CONTENT_PART (with the hint to
  // pass base64) remains for JSON-shaped binary, e.g. a Buffer already turned into { type, data }.
  const guard = new ContextGuard({ model: 'gpt-4o', format: 'ai-sdk' });
  const bytes = Buffer.from(pngBase64(10, 10), 'base64');
  for (const image of [new Uint8Array(bytes), bytes, bytes.buffer.slice(0, 8)]) {
    const err = throwsCtxguard(() => guard.measure([{ role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image', image }] }]), 'INVALID_MESSAGES');
    assert.equal(err.index, 0);
    assert.match(err.message, /messages\[0\]\.content\[1\]\.image is an? (Uint8Array|ArrayBuffer)/);
  }
  throwsCtxguard(() => countMessages([{ role: 'user', content: [{ type: 'file', data: new Uint8Array(4), mediaType: 'application/pdf' }] }], { format: 'ai-sdk' }), 'INVALID_MESSAGES');
  const asJson = JSON.parse(JSON.stringify({ image: Buffer.from([1, 2, 3]) })).image; // { type: 'Buffer', data: [...] }
  const err = throwsCtxguard(() => guard.measure([{ role: 'user', content: [{ type: 'image', image: asJson }] }]), 'INVALID_CONTENT_PART');
  assert.match(err.message, /base64/);
  // Base64 text (what `Buffer.from(bytes).toString('base64')` gives) counts like the image it is.
  assert.deepEqual(
    countMessages([{ role: 'user', content: [{ type: 'image', image: bytes.toString('base64'), mediaType: 'image/png' }] }], { model: 'gpt-4o', format: 'ai-sdk' }),
    countMessages([{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${bytes.toString('base64')}` } }] }], { model: 'gpt-4o' }),
  );
  assert.match(throwsCtxguard(() => countMessages([{ role: 'user', content: 'x' }], { format: 'ai_sdk' }), 'INVALID_OPTIONS').message, /`ai-sdk`/);
  throwsCtxguard(() => countMessages([{ role: 'developer', content: 'x' }], { format: 'ai-sdk' }), 'INVALID_ROLE');
});

/** A long AI SDK conversation: 14 analysis rounds with tool calls, then a new question. */
function longConversation() {
  const msgs = [{ role: 'system', content: 'Du bist ein Datenanalyst.' }];
  for (let i = 0; i < 14; i++) {
    msgs.push({ role: 'user', content: `Runde ${i}: prüfe Region ${['EU', 'APAC', 'NA'][i % 3]} — ${'Details '.repeat(400)}` });
    msgs.push({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: `Plan ${i}` },
        { type: 'text', text: `Ich rufe die Daten für Runde ${i} ab.` },
        { type: 'tool-call', toolCallId: `call_${i}`, toolName: 'fetch_sales', input: { round: i } },
      ],
    });
    msgs.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: `call_${i}`, toolName: 'fetch_sales', output: { type: 'json', value: { round: i, rows: SALES.rows.slice(0, 60) } } }] });
    msgs.push({ role: 'assistant', content: `Ergebnis ${i}: ${'stabil '.repeat(400)}` });
  }
  msgs.push({ role: 'user', content: 'Et maintenant, le résumé final ?' });
  return msgs;
}

test('prepare with a summarizer: the summarizer gets AI SDK messages, the result is valid AI SDK messages, the checkpoint reloads', async () => {
  const guard = new ContextGuard({ model: 'gpt-4o', format: 'ai-sdk', contextWindow: 20000, reservedOutputTokens: 2000, edits: 'trigger' });
  const input = longConversation();
  const before = guard.measure(input);
  assert.equal(before.state, 'over_limit');
  let request;
  const r = await withFrozen(input, (msgs) =>
    guard.prepare(msgs, {
      summarize: async (req) => {
        request = req;
        return { summary: `Wir haben ${req.messages.length} Nachrichten ausgewertet.`, key_facts: ['APAC +12 %'], decisions: [], plan: null, open_questions: [] };
      },
    }),
  );
  assert.equal(request.format, 'ai-sdk');
  assertAiSdkMessages(request.messages);
  assert.equal(r.compaction.status, 'completed');
  assert.equal(r.degraded, false);
  assertAiSdkMessages(r.messages);
  assert.ok(r.metrics.usedTokens <= r.metrics.targetLimit, `${r.metrics.usedTokens}`);
  // System messages (the host's, then the summary) are in `system`, for generateText's system / instructions.
  assertAiSdkSystem(r.system);
  sameJson(r.system[0], input[0]);
  assert.equal(r.system.length, 2);
  assert.ok(r.system[1].content.startsWith('[ctxguard:summary]'));
  assert.ok(!('ctxguard' in r.system[1]));
  sameJson(r.messages.at(-1), input.at(-1));

  // The checkpoint carries ctxguard's markers (not model-visible) and reloads in AI SDK shape.
  assertAiSdkMessages(r.checkpoint.messages, { modelVisible: false });
  assert.deepEqual(r.checkpoint.system[1].ctxguard, { summaryCompacted: true });
  const turns = [{ id: 't0', messages: input.slice(0, -1) }, { id: 't1', messages: r.checkpoint.messages, system: r.checkpoint.system }];
  const reloaded = resolveHistory(JSON.parse(JSON.stringify(turns)), { format: 'ai-sdk' });
  assert.equal(reloaded.fromCheckpoint, true);
  assert.equal(reloaded.checkpointIndex, 1);
  sameJson(reloaded.system, r.checkpoint.system);
  assertAiSdkMessages(reloaded.messages, { modelVisible: false });
  sameJson(reloaded.messages.at(-1), input.at(-1));
  // The next call: the reloaded history plus a new question, its system given back as `system`.
  const next = await guard.prepare([...reloaded.messages, { role: 'user', content: 'Danke.' }], { system: reloaded.system });
  assert.equal(next.compaction, null);
  sameJson(next.system.map((m) => m.content), r.system.map((m) => m.content));
});

test('prepare without a summarizer keeps tool evidence; the emergency layer keeps pairs whole', async () => {
  const guard = new ContextGuard({ model: 'claude-sonnet-4-5', format: 'ai-sdk', contextWindow: 12000, reservedOutputTokens: 2000, toolOutputLimit: 600 });
  const r = await guard.prepare(longConversation(), {});
  assert.equal(r.degraded, true);
  assert.equal(r.degradedReason, 'no_callback');
  assertAiSdkMessages(r.messages);
  assertAiSdkSystem(r.system);
  assert.ok(r.system.some((m) => m.content.includes('[ctxguard:evidence]')));
  assert.ok(r.metrics.usedTokens <= r.metrics.usableLimit);

  // A pending approval (AI SDK 6) keeps its call: the approval response answers it.
  const approval = [
    ...longConversation(),
    {
      role: 'assistant',
      content: [
        { type: 'tool-call', toolCallId: 'call_book', toolName: 'book', input: { room: 2 } },
        { type: 'tool-approval-request', approvalId: 'ap_1', toolCallId: 'call_book' },
      ],
    },
    { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'ap_1', approved: true }] },
  ];
  const a = await guard.prepare(approval, {});
  assert.ok(a.compaction !== null || a.droppedMessages > 0, 'pair sanitation ran');
  sameJson(a.messages.slice(-2), approval.slice(-2));
});

test('settle and readAttachmentTool in AI SDK shape', async () => {
  const guard = new ContextGuard({ model: 'gpt-4o', format: 'ai-sdk' });
  let seen;
  const s = await guard.settle(aiSdkConversation(), {
    summarize: async (req) => {
      seen = req;
      return JSON.stringify({ session_state: { summary: 'Q3 analysiert.', key_facts: [], decisions: [], plan: null, open_questions: [] }, memory_entries: [], reflections: [], learnings: [] });
    },
  });
  assert.equal(seen.format, 'ai-sdk');
  assertAiSdkMessages(seen.messages);
  assert.equal(s.sessionState.summary, 'Q3 analysiert.');

  const tool = readAttachmentTool({ format: 'ai-sdk' });
  assert.deepEqual(Object.keys(tool), ['read_attachment']);
  assert.equal(tool.read_attachment.inputSchema.type, 'object');
  assert.match(tool.read_attachment.description, /attachment/);
  const counted = countMessages([{ role: 'user', content: 'x' }], { model: 'gpt-4o', format: 'ai-sdk', tools: tool });
  assert.ok(counted.toolDefinitions > 30);
  throwsCtxguard(() => countMessages([], { format: 'ai-sdk', tools: [tool] }), 'INVALID_TOOL');
});
