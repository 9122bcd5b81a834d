// OpenAI Responses input items (`format: 'openai-responses'`) through the JS API: an Agents-SDK
// style history (reasoning items with encrypted content, function and custom calls, built-in tool
// items, a text file, an image, non-English text) through countMessages, measure, guardSources,
// prepare, resolveHistory, readAttachmentTool and the worker. Message items count like the same
// Chat Completions messages, the output is valid Responses input, `instructions` travels as
// `system`, reasoning items stay with the items after them, unchanged items come back byte for
// byte, and bad items are errors naming their index.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { ContextGuard, countMessages, readAttachmentTool, resolveHistory } from 'ctxguard';
import { createWorkerGuard } from 'ctxguard/worker';
import { throwsCtxguard, withFrozen } from './helpers.mjs';

// ---------------------------------------------------------------------------------------------
// Fixtures

const NOTES = Array.from({ length: 1500 }, (_, i) => `Notiz ${i}: Filiale ${i % 40} meldet Umsatz ${(i * 37) % 1000} € — 売上 ${i}`).join('\n');
const NOTES_DATA = `data:text/plain;base64,${Buffer.from(NOTES).toString('base64')}`;
const LOG = Array.from({ length: 3000 }, (_, i) => `${String(i).padStart(4, '0')} PASS tests::case_${i} (${i % 97} ms)`).join('\n');
const INSTRUCTIONS = 'You are a data analyst. Antworte auf Deutsch.';

/** One turn of an agent loop: the user asks, the model reasons and calls, the tool answers, the model answers. */
function turn(t, { output = `result ${t}`, question = `Frage ${t}: wie war Q${t % 4 + 1}?` } = {}) {
  return [
    { role: 'user', content: question },
    { id: `rs_${t}`, type: 'reasoning', summary: [{ type: 'summary_text', text: `**Planning ${t}**` }], encrypted_content: `gAAAAAB${'x'.repeat(200)}${t}` },
    { type: 'function_call', id: `fc_${t}`, call_id: `call_${t}`, name: 'query_sales', arguments: JSON.stringify({ quarter: `Q${t % 4 + 1}` }), status: 'completed' },
    { type: 'function_call_output', call_id: `call_${t}`, output },
    { id: `rs_${t}b`, type: 'reasoning', summary: [], encrypted_content: 'gAAAAABzz' },
    { id: `msg_${t}`, type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: `Antwort ${t}: Umsatz gestiegen 📈`, annotations: [], logprobs: [] }] },
  ];
}

function history() {
  return [
    { role: 'developer', content: 'Use metric units.' },
    ...turn(0, { output: LOG }),
    {
      type: 'message', role: 'user', content: [
        { type: 'input_text', text: 'Hier meine Notizen und das Diagramm.' },
        { type: 'input_file', filename: 'notizen.txt', file_data: NOTES_DATA },
        { type: 'input_image', image_url: 'https://example.com/chart.png', detail: 'low' },
      ],
    },
    { id: 'ws_1', type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'Q3 Umsatz' } },
    { type: 'custom_tool_call', call_id: 'call_py', name: 'python', input: 'print(sum([1, 2]))' },
    { type: 'custom_tool_call_output', call_id: 'call_py', output: [{ type: 'input_text', text: '3' }] },
    { id: 'msg_x', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Fertig.', annotations: [] }] },
    { role: 'user', content: 'Und jetzt Q4?' },
  ];
}

function longHistory() {
  const filler = Array.from({ length: 400 }, (_, i) => `Zeile ${i} der früheren Diskussion über Filialen und Umsätze`).join('\n');
  return [...Array.from({ length: 8 }, (_, t) => turn(t, { question: `Frage ${t}: ${filler}` })).flat(), ...turn(8).slice(0, 4)];
}

const KNOWN_ITEMS = new Set(['message', 'function_call', 'function_call_output', 'custom_tool_call', 'custom_tool_call_output', 'reasoning', 'web_search_call', 'item_reference', 'compaction', 'computer_call', 'computer_call_output']);
const KNOWN_PARTS = new Set(['input_text', 'output_text', 'input_image', 'input_file', 'input_audio', 'refusal']);

/** Valid Responses input items (what responses.create accepts); model-visible: no ctxguard metadata. */
function assertResponsesItems(items, { modelVisible = true, serverCalls = [] } = {}) {
  assert.ok(Array.isArray(items));
  const calls = new Set(serverCalls);
  for (const [i, item] of items.entries()) {
    const where = `items[${i}] ${JSON.stringify(item).slice(0, 120)}`;
    assert.equal(typeof item, 'object', where);
    const type = item.type ?? 'message';
    assert.ok(KNOWN_ITEMS.has(type), `${where}: type ${type}`);
    if (modelVisible) assert.ok(!('ctxguard' in item), `${where}: model-visible items carry no markers`);
    if (type === 'message') {
      assert.ok(['user', 'assistant', 'system', 'developer'].includes(item.role), where);
      if (modelVisible && typeof item.id === 'string') assert.ok(!item.id.startsWith('ctxguard-'), where);
      if (typeof item.content !== 'string') {
        for (const p of item.content) assert.ok(KNOWN_PARTS.has(p.type), `${where}: part ${p.type}`);
      }
    } else if (type === 'function_call' || type === 'custom_tool_call') {
      assert.equal(typeof item.call_id, 'string', where);
      assert.equal(typeof item.name, 'string', where);
      assert.equal(typeof (item.arguments ?? item.input), 'string', where);
      calls.add(item.call_id);
    } else if (type.endsWith('_output')) {
      assert.ok(calls.has(item.call_id), `${where}: an output follows its call`);
      assert.ok(typeof item.output === 'string' || Array.isArray(item.output), where);
    } else if (type === 'reasoning') {
      const next = items[i + 1];
      assert.ok(next && (next.type === 'reasoning' || next.type === 'function_call' || next.type === 'message' || next.type === 'custom_tool_call' || next.type === 'web_search_call'), `${where}: a reasoning item is followed by its item`);
    }
  }
}

const sameJson = (a, b) => assert.equal(JSON.stringify(a), JSON.stringify(b));

// ---------------------------------------------------------------------------------------------
// Tests

test('countMessages: message items and instructions count like the same Chat Completions messages', () => {
  const items = [
    { role: 'user', content: 'Wie ist das Wetter in Paris? 🌦' },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Sonnig, 18 °C.', annotations: [] }] },
    { role: 'user', content: [{ type: 'input_text', text: 'Danke' }] },
  ];
  const chat = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Wie ist das Wetter in Paris? 🌦' },
    { role: 'assistant', content: 'Sonnig, 18 °C.' },
    { role: 'user', content: [{ type: 'text', text: 'Danke' }] },
  ];
  for (const model of ['gpt-4o', 'gpt-4', 'o3']) {
    const r = countMessages(items, { model, format: 'openai-responses', system: 'Be brief.' });
    assert.equal(r.total, countMessages(chat, { model }).total, model);
    assert.equal(r.exact, true);
    assert.equal(r.perMessage.length, 4, 'instructions count as one system message');
  }
  // Function tools in the Responses shape count like the same Chat Completions tools.
  const fn = { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };
  const responsesTools = countMessages(items, { model: 'gpt-4o', format: 'openai-responses', tools: [{ type: 'function', ...fn, strict: true }] });
  const chatTools = countMessages(chat.slice(1), { model: 'gpt-4o', tools: [{ type: 'function', function: fn }] });
  assert.equal(responsesTools.toolDefinitions, chatTools.toolDefinitions);
});

test('measure and guardSources: compacted outputs keep their shape, the file preview goes into file_data, the rest is unchanged', () => {
  const guard = new ContextGuard({ model: 'gpt-4o', format: 'openai-responses', toolOutputLimit: 800, attachmentBudget: 1200 });
  const input = history();
  const m = withFrozen(input, (msgs) => guard.measure(msgs, { system: INSTRUCTIONS }));
  assert.equal(m.kind, 'exact');
  const r = withFrozen(input, (msgs) => guard.guardSources(msgs, { system: INSTRUCTIONS }));
  assert.equal(r.system, INSTRUCTIONS);
  assertResponsesItems(r.messages);
  assert.equal(r.messages.length, input.length, 'one item per item');
  assert.ok(r.metrics.usedTokens < m.usedTokens);
  const out = r.messages[4];
  assert.equal(out.type, 'function_call_output');
  assert.ok(typeof out.output === 'string' && out.output.length < LOG.length / 3 && out.output.includes('0000 PASS'));
  const file = r.messages[7].content[1];
  assert.ok(file.file_data.startsWith('data:text/plain;base64,') && file.file_data.length < NOTES_DATA.length / 3);
  assert.match(Buffer.from(file.file_data.split(',')[1], 'base64').toString(), /ctxguard:attachment-preview/);
  for (const k of [0, 1, 2, 3, 5, 6, 8, 9, 10, 11, 12, 13]) sameJson(r.messages[k], input[k]);
  assert.deepEqual(r.traces.map((t) => t.operation).sort(), ['attachment_preview', 'tool_output']);
});

test('unchanged items round-trip exactly, odd key orders and unknown item kinds included', () => {
  const guard = new ContextGuard({ model: 'gpt-4o', format: 'openai-responses' });
  const input = [
    { content: 'hi', role: 'user', type: 'message' },
    { arguments: '{"a":1}', name: 'f', call_id: 'c1', type: 'function_call', status: 'completed', id: 'fc_1' },
    { output: 'ok', call_id: 'c1', type: 'function_call_output', custom: { z: 1, a: [2, { y: null }] } },
    { type: 'item_reference', id: 'msg_0' },
    { type: 'compaction', id: 'cmp_1', encrypted_content: 'gAAAAABjb21w' },
    { type: 'a_future_item', payload: { n: 1.5 } },
    { type: 'function_call_output', call_id: 'call_from_previous_response', output: '42' },
    { role: 'user', content: 'weiter' },
  ];
  const r = guard.guardSources(input);
  sameJson(r.messages, input);
  assert.equal(r.system, null);
});

test('prepare with a summarizer: Responses items to the summarizer and back, instructions as system, the checkpoint reloads', async () => {
  const guard = new ContextGuard({ model: 'gpt-4o', format: 'openai-responses', contextWindow: 20000, reservedOutputTokens: 2000 });
  const input = longHistory();
  assert.equal(guard.measure(input, { system: INSTRUCTIONS }).state, 'over_limit');
  let request;
  const r = await withFrozen(input, (msgs) =>
    guard.prepare(msgs, {
      system: INSTRUCTIONS,
      summarize: async (req) => {
        request = req;
        return { summary: `Wir haben ${req.messages.length} Einträge ausgewertet.`, key_facts: ['Q3 +12 %'], decisions: [], plan: null, open_questions: [] };
      },
    }),
  );
  assert.equal(request.format, 'openai-responses');
  assert.equal(request.system, null, 'the summary source holds no system message (no earlier summary)');
  assertResponsesItems(request.messages);
  assert.equal(r.compaction.status, 'completed');
  assert.equal(r.system, INSTRUCTIONS, 'instructions come back as system');
  assertResponsesItems(r.messages);
  assert.ok(r.metrics.usedTokens <= r.metrics.targetLimit, `${r.metrics.usedTokens}`);
  const summary = r.messages.find((m) => m.role === 'system');
  assert.deepEqual(Object.keys(summary), ['role', 'content']);
  assert.ok(summary.content.startsWith('[ctxguard:summary]'));
  // The current turn (question, reasoning, call, output) is there, unchanged.
  sameJson(r.messages.slice(-4), input.slice(-4));

  assertResponsesItems(r.checkpoint.messages, { modelVisible: false });
  assert.equal(r.checkpoint.system, INSTRUCTIONS);
  assert.deepEqual(r.checkpoint.messages.find((m) => m.role === 'system').ctxguard, { summaryCompacted: true });
  const turns = [{ id: 't0', messages: input.slice(0, -4), system: INSTRUCTIONS }, { id: 't1', messages: r.checkpoint.messages, system: r.checkpoint.system }];
  const reloaded = resolveHistory(JSON.parse(JSON.stringify(turns)), { format: 'openai-responses' });
  assert.equal(reloaded.fromCheckpoint, true);
  assert.equal(reloaded.checkpointIndex, 1);
  assert.equal(reloaded.system, INSTRUCTIONS);
  sameJson(reloaded.messages, r.checkpoint.messages);
  const next = await guard.prepare([...reloaded.messages, { role: 'user', content: 'Danke.' }], { system: reloaded.system });
  assert.equal(next.compaction, null);
  assertResponsesItems(next.messages);
});

test('a reasoning item is dropped together with the call after it; outputs of server-side calls stay', async () => {
  const guard = new ContextGuard({ model: 'gpt-4o', format: 'openai-responses' });
  const input = [
    { role: 'user', content: 'Los.' },
    { id: 'rs_1', type: 'reasoning', summary: [], encrypted_content: 'gAAAA' },
    { type: 'function_call', call_id: 'a', name: 'f', arguments: '{}' },
    { type: 'function_call', call_id: 'b', name: 'g', arguments: '{}' },
    { type: 'function_call_output', call_id: 'a', output: 'A' },
    // No output for b: the bundle (rs_1, a, b) cannot be sent; a's output goes with it.
    { type: 'function_call_output', call_id: 'call_on_server', output: 'kept' },
    { role: 'user', content: 'Und?' },
  ];
  const r = await guard.prepare(input, {});
  assertResponsesItems(r.messages, { serverCalls: ['call_on_server'] });
  sameJson(r.messages, [input[0], input[5], input[6]]);
  assert.equal(r.droppedMessages, 4);
});

test('readAttachmentTool is a flat non-strict function tool; the emergency layer keeps bundles whole', async () => {
  const tool = readAttachmentTool({ format: 'openai-responses' });
  assert.deepEqual(Object.keys(tool), ['type', 'name', 'description', 'parameters', 'strict']);
  assert.equal(tool.type, 'function');
  assert.equal(tool.name, 'read_attachment');
  assert.equal(tool.strict, false);
  const counted = countMessages([{ role: 'user', content: 'x' }], { model: 'gpt-4o', format: 'openai-responses', tools: [tool] });
  assert.ok(counted.toolDefinitions > 30);

  // Without a summarizer and a small window: the fallback and the emergency layer drop old items;
  // no reasoning item is left without its item, no output without its call.
  const small = new ContextGuard({ model: 'gpt-4o', format: 'openai-responses', contextWindow: 9000, reservedOutputTokens: 1000, toolOutputLimit: 300 });
  const r = await small.prepare(longHistory(), { system: INSTRUCTIONS });
  assert.equal(r.degraded, true);
  assertResponsesItems(r.messages);
  assert.ok(r.messages.some((m) => m.role === 'system' && m.content.includes('[ctxguard:evidence]')));
  assert.ok(r.metrics.usedTokens <= r.metrics.usableLimit);
});

test('settle gets the conversation in this format', async () => {
  const guard = new ContextGuard({ model: 'gpt-4o', format: 'openai-responses' });
  let seen;
  const s = await guard.settle(history(), {
    summarize: async (req) => {
      seen = req;
      return JSON.stringify({ session_state: { summary: 'Q3 analysiert.', key_facts: [], decisions: [], plan: null, open_questions: [] }, memory_entries: [], reflections: [], learnings: [] });
    },
  });
  assert.equal(seen.format, 'openai-responses');
  assertResponsesItems(seen.messages);
  assert.equal(s.sessionState.summary, 'Q3 analysiert.');
});

test('the worker gives the same results in this format', async () => {
  const config = { model: 'gpt-4o', format: 'openai-responses', contextWindow: 20000, reservedOutputTokens: 2000 };
  const remote = await createWorkerGuard(new Worker(new URL('./fixtures/guard-worker.mjs', import.meta.url)), config);
  const local = new ContextGuard(config);
  try {
    const summarize = async (req) => `${req.format}: ${req.messages.length} Einträge.`;
    const timeless = (v) => JSON.parse(JSON.stringify(v, (k, x) => (k === 'durationMs' ? 0 : x)));
    const [a, b] = [await local.prepare(longHistory(), { system: INSTRUCTIONS, summarize }), await remote.prepare(longHistory(), { system: INSTRUCTIONS, summarize })];
    assert.deepEqual(timeless(b), timeless(a));
    assert.equal(a.compaction.status, 'completed');
    assert.deepEqual(timeless(await remote.measure(history())), timeless(local.measure(history())));
  } finally {
    local.free();
    await remote.terminate();
  }
});

test('bad items are errors naming their index', () => {
  const ok = { role: 'user', content: 'ok' };
  const rows = [
    [7, 'INVALID_MESSAGE'],
    [{ role: 'tool', content: 'x' }, 'INVALID_ROLE'],
    [{ role: 'user' }, 'INVALID_MESSAGE'],
    [{ role: 'user', content: 5 }, 'INVALID_MESSAGE'],
    [{ role: 'user', content: [{ type: 'input_text' }] }, 'INVALID_CONTENT_PART'],
    [{ role: 'user', content: [{ type: 'input_image', detail: 'low' }] }, 'INVALID_CONTENT_PART'],
    [{ role: 'user', content: [{ type: 'input_file', filename: 3 }] }, 'INVALID_CONTENT_PART'],
    [{ type: 'function_call', name: 'f', arguments: '{}' }, 'INVALID_TOOL'],
    [{ type: 'function_call', call_id: 'c', name: 'f', arguments: { a: 1 } }, 'INVALID_TOOL'],
    [{ type: 'function_call_output', output: 'x' }, 'INVALID_TOOL'],
    [{ type: 'function_call_output', call_id: 'c', output: 3 }, 'INVALID_MESSAGE'],
    [{ type: 'computer_call', action: {} }, 'INVALID_TOOL'],
    [{ type: 7 }, 'INVALID_MESSAGE'],
    [{ role: 'user', content: 'x', ctxguard: 'yes' }, 'INVALID_MESSAGE'],
    // Values JSON would change: INVALID_MESSAGES with the index, like every format.
    [{ role: 'user', content: [{ type: 'input_text', text: 'x', at: new Date(0) }] }, 'INVALID_MESSAGES'],
    [{ type: 'function_call_output', call_id: 'c', output: new Uint8Array([1]) }, 'INVALID_MESSAGES'],
  ];
  const guard = new ContextGuard({ model: 'gpt-4o', format: 'openai-responses' });
  for (const [bad, code] of rows) {
    for (const call of [
      () => countMessages([ok, bad], { model: 'gpt-4o', format: 'openai-responses' }),
      () => guard.measure([ok, bad]),
      () => guard.guardSources([ok, bad]),
    ]) {
      const err = throwsCtxguard(call, code);
      assert.equal(err.index, 1, `${JSON.stringify(bad)}: ${err.message}`);
      assert.match(err.message, /^messages\[1\]/);
    }
  }
  throwsCtxguard(() => countMessages('a string input', { format: 'openai-responses' }), 'INVALID_MESSAGES');
  throwsCtxguard(() => countMessages([ok], { format: 'openai-responses', system: [{ role: 'system', content: 'x' }] }), 'INVALID_OPTIONS');
  throwsCtxguard(() => countMessages([ok], { format: 'openai-responses', tools: [{ type: 'function', function: { name: 'nested' } }] }), 'INVALID_TOOL');
  throwsCtxguard(() => new ContextGuard({ model: 'gpt-4o', format: 'responses' }), ['INVALID_OPTIONS', 'UNKNOWN_FORMAT']);
  // The module keeps working.
  assert.equal(countMessages([ok], { model: 'gpt-4o', format: 'openai-responses' }).perMessage.length, 1);
});

test('measure starts at the latest compaction item, as prepare sends: first call and remembered objects alike', async () => {
  const old = Array.from({ length: 30 }, (_, i) => [
    { role: 'user', content: `Frage ${i}: ${LOG.slice(0, 2000)}` },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `Antwort ${i}` }] },
  ]).flat();
  const after = [
    { type: 'compaction', id: 'cmp_9', encrypted_content: 'gAAAAAB'.repeat(200) },
    { role: 'user', content: 'Und jetzt?' },
  ];
  const input = [...old, ...after];
  const guard = new ContextGuard({ model: 'gpt-5', format: 'openai-responses' });
  const fresh = new ContextGuard({ model: 'gpt-5', format: 'openai-responses' }).measure(after, { system: INSTRUCTIONS });
  const first = guard.measure(input, { system: INSTRUCTIONS });
  const again = guard.measure(input, { system: INSTRUCTIONS }); // the remembered objects: the stored path
  for (const m of [first, again]) {
    assert.equal(m.usedTokens, fresh.usedTokens);
    assert.equal(m.messageCount, fresh.messageCount);
    assert.deepEqual(m.breakdown, fresh.breakdown);
  }
  const r = await guard.prepare(input, { system: INSTRUCTIONS });
  sameJson(r.messages, after);
  assert.equal(r.metrics.usedTokens, first.usedTokens);
  assert.ok(countMessages(input, { model: 'gpt-5', format: 'openai-responses' }).total > 10 * fresh.usedTokens, 'countMessages counts every item');
});
