// Gemini contents (`format: 'gemini'`) through the JS API: a `@google/genai`-style conversation
// (thought parts and thought signatures, parallel calls without ids, a long JSON function
// response, a text file given inline, an image, non-English text) through countMessages,
// measure, guardSources, prepare, resolveHistory, readAttachmentTool and the worker. The output is
// valid Gemini contents, `systemInstruction` travels as `system` (ctxguard's notes appended as
// parts), a functionCall never loses its signature, unchanged contents come back byte for byte,
// and bad contents are errors naming their index.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { ContextGuard, countMessages, readAttachmentTool, resolveHistory } from 'ctxguard';
import { createWorkerGuard } from 'ctxguard/worker';
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
const NOTES = Array.from({ length: 1500 }, (_, i) => `Notiz ${i}: Filiale ${i % 40} meldet Umsatz ${(i * 37) % 1000} € — 売上 ${i}`).join('\n');
const NOTES_B64 = Buffer.from(NOTES).toString('base64');
const SALES = { quarter: 'Q3', rows: Array.from({ length: 1500 }, (_, i) => ({ id: i, region: ['EU', 'APAC', 'NA'][i % 3], revenue: (i * 7919) % 10000 / 100 })) };
const SYSTEM = { parts: [{ text: 'Du bist ein Datenanalyst. Antworte kurz.' }] };

function conversation() {
  return [
    { role: 'user', parts: [
      { text: 'Wie lief Q3? Hier meine Notizen und das Diagramm. 📊' },
      { inlineData: { mimeType: 'text/plain', data: NOTES_B64, displayName: 'notizen.txt' } },
      { inlineData: { mimeType: 'image/png', data: pngBase64(1200, 800) } },
    ] },
    { role: 'model', parts: [
      { text: '**Planning** I need the sales rows and the targets.', thought: true },
      { functionCall: { name: 'query_sales', args: { quarter: 'Q3' } }, thoughtSignature: 'c2lnbmF0dXJlLXEz' },
      { functionCall: { name: 'get_targets', args: { quarter: 'Q3' } } },
    ] },
    { role: 'user', parts: [
      { functionResponse: { name: 'query_sales', response: SALES } },
      { functionResponse: { name: 'get_targets', response: { output: 'APAC +10 %, EU +5 %' } } },
    ] },
    { role: 'model', parts: [{ text: 'APAC lag über dem Ziel. 📈', thoughtSignature: 'c2lnLXRleHQ=' }] },
    { role: 'user', parts: [{ text: 'Und Q4?' }] },
  ];
}

function longConversation() {
  const filler = Array.from({ length: 400 }, (_, i) => `Zeile ${i} der früheren Diskussion über Filialen und Umsätze`).join('\n');
  const turns = [];
  for (let t = 0; t < 8; t += 1) {
    turns.push(
      { role: 'user', parts: [{ text: `Frage ${t}: ${filler}` }] },
      { role: 'model', parts: [{ functionCall: { name: 'lookup', args: { q: t } }, thoughtSignature: `c2ln${t}` }] },
      { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { output: `Ergebnis ${t}` } } }] },
      { role: 'model', parts: [{ text: `Antwort ${t}` }] },
    );
  }
  turns.push(
    { role: 'user', parts: [{ text: 'Letzte Frage?' }] },
    { role: 'model', parts: [{ functionCall: { name: 'lookup', args: { q: 'last' } }, thoughtSignature: 'bGFzdA==' }] },
    { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { output: 'zuletzt' } } }] },
  );
  return turns;
}

/** Valid Gemini contents: user / model roles, calls only in model contents with their responses in the next user content. */
function assertGeminiContents(contents, { modelVisible = true } = {}) {
  assert.ok(Array.isArray(contents));
  for (const [i, c] of contents.entries()) {
    const where = `contents[${i}] ${JSON.stringify(c).slice(0, 120)}`;
    assert.ok(c.role === 'user' || c.role === 'model', where);
    assert.ok(Array.isArray(c.parts) && c.parts.length > 0, where);
    if (modelVisible) assert.ok(!('ctxguard' in c), `${where}: model-visible contents carry no markers`);
    const calls = c.parts.filter((p) => p.functionCall);
    const responses = c.parts.filter((p) => p.functionResponse);
    if (c.role === 'model') assert.equal(responses.length, 0, where);
    if (c.role === 'user') assert.equal(calls.length, 0, where);
    for (const p of responses) {
      assert.equal(typeof p.functionResponse.response, 'object', `${where}: a response is an object`);
      assert.ok(!Array.isArray(p.functionResponse.response), where);
    }
    if (calls.length > 0) {
      const next = contents[i + 1];
      assert.ok(next && next.role === 'user', `${where}: calls are answered by the next content`);
      assert.equal(next.parts.filter((p) => p.functionResponse).length, calls.length, `${where}: one response per call`);
    }
  }
}

const sameJson = (a, b) => assert.equal(JSON.stringify(a), JSON.stringify(b));

// ---------------------------------------------------------------------------------------------
// Tests

test('countMessages: the estimate for Gemini models; for a GPT model, like the same conversation in OpenAI shape', () => {
  const gemini = [
    { role: 'user', parts: [{ text: 'Wetter in Paris? 🌦' }] },
    { role: 'model', parts: [{ functionCall: { name: 'weather', args: { city: 'Paris' } } }] },
    { role: 'user', parts: [{ functionResponse: { name: 'weather', response: { output: '18 °C' } } }] },
  ];
  const openai = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Wetter in Paris? 🌦' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: '18 °C' },
  ];
  assert.equal(countMessages(gemini, { model: 'gpt-4o', format: 'gemini', system: 'Be brief.' }).total, countMessages(openai, { model: 'gpt-4o' }).total);
  const r = countMessages(gemini, { model: 'gemini-2.5-pro', format: 'gemini', system: { parts: [{ text: 'Be brief.' }] } });
  assert.equal(r.kind, 'estimate');
  assert.equal(r.perMessage.length, 4);
  // Function declarations are counted as tool definitions.
  const tools = [{ functionDeclarations: [{ name: 'weather', description: 'Weather for a city', parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } } } }] }];
  assert.ok(countMessages(gemini, { model: 'gemini-2.5-pro', format: 'gemini', tools }).toolDefinitions > 10);
});

test('measure and guardSources: a JSON function response stays an object, the inline text file is previewed, signatures stay', () => {
  const guard = new ContextGuard({ model: 'gemini-2.5-pro', format: 'gemini', toolOutputLimit: 800, attachmentBudget: 1200 });
  const input = conversation();
  const m = withFrozen(input, (msgs) => guard.measure(msgs, { system: SYSTEM }));
  assert.equal(m.kind, 'estimate');
  assert.ok(m.breakdown.images > 0 && m.breakdown.attachments > 0 && m.breakdown.toolOutputs > 0);
  const r = withFrozen(input, (msgs) => guard.guardSources(msgs, { system: SYSTEM }));
  sameJson(r.system, SYSTEM);
  assertGeminiContents(r.messages);
  assert.equal(r.messages.length, input.length);
  assert.ok(r.metrics.usedTokens < m.usedTokens);
  const sales = r.messages[2].parts[0].functionResponse.response;
  assert.ok(Array.isArray(sales.rows) && sales.rows.length < SALES.rows.length, 'compacted as JSON');
  sameJson(r.messages[2].parts[1], input[2].parts[1]);
  const notes = Buffer.from(r.messages[0].parts[1].inlineData.data, 'base64').toString();
  assert.match(notes, /ctxguard:attachment-preview/);
  assert.equal(r.messages[0].parts[1].inlineData.mimeType, 'text/plain');
  for (const k of [1, 3, 4]) sameJson(r.messages[k], input[k]);
  sameJson(r.messages[0].parts[2], input[0].parts[2]);
});

test('unchanged contents round-trip exactly, odd key orders, code execution and every systemInstruction shape included', () => {
  const guard = new ContextGuard({ model: 'gemini-2.5-flash', format: 'gemini' });
  const input = [
    { parts: [{ text: 'ohne Rolle' }] },
    { parts: [{ executableCode: { language: 'PYTHON', code: 'print(1)' } }, { codeExecutionResult: { outcome: 'OUTCOME_OK', output: '1\n' } }], role: 'model' },
    { role: 'model', parts: [{ thoughtSignature: 'c2ln', functionCall: { args: { z: 1, a: [2, { y: null }] }, name: 'f', id: 'call-1' } }] },
    { role: 'user', parts: [{ functionResponse: { id: 'call-1', name: 'f', response: { ok: true, n: 1.5 } } }] },
    { role: 'user', parts: [{ fileData: { fileUri: 'gs://b/clip.mp4', mimeType: 'video/mp4' }, videoMetadata: { startOffset: '2s' } }, { text: 'Was passiert?' }] },
  ];
  for (const system of ['Sei kurz.', SYSTEM, { text: 'Sei kurz.' }, [{ text: 'Sei' }, { text: 'kurz.' }], undefined]) {
    const r = guard.guardSources(input, { system });
    sameJson(r.messages, input);
    sameJson(r.system, system ?? null);
  }
});

test('prepare with a summarizer: Gemini contents to the summarizer and back, the summary appended to systemInstruction, the checkpoint reloads', async () => {
  const guard = new ContextGuard({ model: 'gemini-2.5-pro', format: 'gemini', contextWindow: 20000, reservedOutputTokens: 2000 });
  const input = longConversation();
  assert.equal(guard.measure(input, { system: SYSTEM }).state, 'over_limit');
  let request;
  const r = await withFrozen(input, (msgs) =>
    guard.prepare(msgs, {
      system: SYSTEM,
      summarize: async (req) => {
        request = req;
        return { summary: `Acht Fragen, ${req.messages.length} Inhalte.`, key_facts: ['lookup liefert Ergebnisse'], decisions: [], plan: null, open_questions: [] };
      },
    }),
  );
  assert.equal(request.format, 'gemini');
  assertGeminiContents(request.messages);
  assert.equal(r.compaction.status, 'completed');
  assertGeminiContents(r.messages);
  assert.ok(r.metrics.usedTokens <= r.metrics.targetLimit, `${r.metrics.usedTokens}`);
  assert.deepEqual(r.system.parts[0], SYSTEM.parts[0]);
  assert.ok(r.system.parts[1].text.startsWith('[ctxguard:summary]'));
  assert.equal(r.system.parts.length, 2);
  // The current turn, its signature on its call.
  sameJson(r.messages.slice(-3), input.slice(-3));

  assertGeminiContents(r.checkpoint.messages, { modelVisible: false });
  const turns = [{ id: 't0', messages: input.slice(0, -3), system: SYSTEM }, { id: 't1', messages: r.checkpoint.messages, system: r.checkpoint.system }];
  const reloaded = resolveHistory(JSON.parse(JSON.stringify(turns)), { format: 'gemini' });
  assert.equal(reloaded.fromCheckpoint, true);
  assert.equal(reloaded.checkpointIndex, 1);
  sameJson(reloaded.system, r.checkpoint.system);
  sameJson(reloaded.messages, r.checkpoint.messages);
  const next = await guard.prepare([...reloaded.messages, { role: 'user', parts: [{ text: 'Danke.' }] }], { system: reloaded.system });
  assert.equal(next.compaction, null);
  assertGeminiContents(next.messages);
});

test('a signed functionCall is never split from its signature or its step; orphan responses go', async () => {
  const guard = new ContextGuard({ model: 'gemini-2.5-pro', format: 'gemini' });
  const input = [
    { role: 'user', parts: [{ text: 'Los.' }] },
    { role: 'model', parts: [{ functionCall: { name: 'a', args: {} }, thoughtSignature: 'c2lnLWE=' }, { functionCall: { name: 'b', args: {} } }] },
    // b has no response: the signed step cannot be sent in part; a's response goes with it.
    { role: 'user', parts: [{ functionResponse: { name: 'a', response: { output: 'A' } } }] },
    { role: 'user', parts: [{ functionResponse: { name: 'zzz', response: { output: 'orphan' } } }, { text: 'Und?' }] },
  ];
  const r = await guard.prepare(input, {});
  assertGeminiContents(r.messages);
  sameJson(r.messages, [input[0], { role: 'user', parts: [{ text: 'Und?' }] }]);
  assert.equal(r.droppedMessages, 3);
  // Kept calls keep their signature on the very part.
  const kept = await guard.prepare(conversation(), {});
  sameJson(kept.messages[1], conversation()[1]);
});

test('readAttachmentTool is a Tool with one declaration; the emergency layer keeps calls and responses paired', async () => {
  const tool = readAttachmentTool({ format: 'gemini' });
  assert.deepEqual(Object.keys(tool), ['functionDeclarations']);
  const [decl] = tool.functionDeclarations;
  assert.equal(decl.name, 'read_attachment');
  assert.equal(decl.parametersJsonSchema.type, 'object');
  assert.ok(countMessages([{ role: 'user', parts: [{ text: 'x' }] }], { model: 'gemini-2.5-pro', format: 'gemini', tools: [tool] }).toolDefinitions > 30);

  const small = new ContextGuard({ model: 'gemini-2.5-pro', format: 'gemini', contextWindow: 9000, reservedOutputTokens: 1000, toolOutputLimit: 300 });
  const r = await small.prepare(longConversation(), { system: SYSTEM });
  assert.equal(r.degraded, true);
  assertGeminiContents(r.messages);
  assert.ok(r.system.parts.some((p) => p.text.includes('[ctxguard:evidence]')));
  assert.ok(r.metrics.usedTokens <= r.metrics.usableLimit);
});

test('settle gets the conversation in this format', async () => {
  const guard = new ContextGuard({ model: 'gemini-2.5-pro', format: 'gemini' });
  let seen;
  const s = await guard.settle(conversation(), {
    summarize: async (req) => {
      seen = req;
      return JSON.stringify({ session_state: { summary: 'Q3 analysiert.', key_facts: [], decisions: [], plan: null, open_questions: [] }, memory_entries: [], reflections: [], learnings: [] });
    },
  });
  assert.equal(seen.format, 'gemini');
  assertGeminiContents(seen.messages);
  assert.equal(s.sessionState.summary, 'Q3 analysiert.');
});

test('the worker gives the same results in this format', async () => {
  const config = { model: 'gemini-2.5-pro', format: 'gemini', contextWindow: 20000, reservedOutputTokens: 2000 };
  const remote = await createWorkerGuard(new Worker(new URL('./fixtures/guard-worker.mjs', import.meta.url)), config);
  const local = new ContextGuard(config);
  try {
    const summarize = async (req) => `${req.format}: ${req.messages.length} Inhalte.`;
    const timeless = (v) => JSON.parse(JSON.stringify(v, (k, x) => (k === 'durationMs' ? 0 : x)));
    const [a, b] = [await local.prepare(longConversation(), { system: SYSTEM, summarize }), await remote.prepare(longConversation(), { system: SYSTEM, summarize })];
    assert.deepEqual(timeless(b), timeless(a));
    assert.equal(a.compaction.status, 'completed');
    assert.deepEqual(timeless(await remote.guardSources(conversation())), timeless(local.guardSources(conversation())));
  } finally {
    local.free();
    await remote.terminate();
  }
});

test('bad contents are errors naming their index', () => {
  const ok = { role: 'user', parts: [{ text: 'ok' }] };
  const rows = [
    ['text', 'INVALID_MESSAGE'],
    [{ role: 'assistant', parts: [{ text: 'x' }] }, 'INVALID_ROLE'],
    [{ role: 'system', parts: [{ text: 'x' }] }, 'INVALID_ROLE'],
    [{ role: 'user' }, 'INVALID_MESSAGE'],
    [{ role: 'user', content: 'x' }, 'INVALID_MESSAGE'],
    [{ role: 'user', parts: [{ text: 1 }] }, 'INVALID_CONTENT_PART'],
    [{ role: 'user', parts: [{ inlineData: { mimeType: 'image/png' } }] }, 'INVALID_CONTENT_PART'],
    [{ role: 'user', parts: [{ functionCall: { name: 'f' } }] }, 'INVALID_CONTENT_PART'],
    [{ role: 'model', parts: [{ functionResponse: { name: 'f', response: {} } }] }, 'INVALID_CONTENT_PART'],
    [{ role: 'model', parts: [{ functionCall: { args: {} } }] }, 'INVALID_TOOL'],
    [{ role: 'user', parts: [{ functionResponse: { name: 'f', response: 'x' } }] }, 'INVALID_TOOL'],
    [{ role: 'user', parts: [{ text: 'x' }], ctxguard: 'yes' }, 'INVALID_MESSAGE'],
    // Values JSON would change: INVALID_MESSAGES with the index, like every format.
    [{ role: 'user', parts: [{ inlineData: { mimeType: 'image/png', data: new Uint8Array([1, 2]) } }] }, 'INVALID_MESSAGES'],
    [{ role: 'user', parts: [{ text: 'x', at: new Date(0) }] }, 'INVALID_MESSAGES'],
  ];
  const guard = new ContextGuard({ model: 'gemini-2.5-pro', format: 'gemini' });
  for (const [bad, code] of rows) {
    for (const call of [
      () => countMessages([ok, bad], { model: 'gemini-2.5-pro', format: 'gemini' }),
      () => guard.measure([ok, bad]),
      () => guard.guardSources([ok, bad]),
    ]) {
      const err = throwsCtxguard(call, code);
      assert.equal(err.index, 1, `${JSON.stringify(bad)}: ${err.message}`);
      assert.match(err.message, /^messages\[1\]/);
    }
  }
  throwsCtxguard(() => countMessages({ contents: [ok] }, { format: 'gemini' }), 'INVALID_MESSAGES');
  throwsCtxguard(() => countMessages([ok], { format: 'gemini', system: 42 }), 'INVALID_OPTIONS');
  throwsCtxguard(() => countMessages([ok], { format: 'gemini', tools: [{ functionDeclarations: [{ description: 'no name' }] }] }), 'INVALID_TOOL');
  assert.equal(countMessages([ok], { model: 'gemini-2.5-pro', format: 'gemini' }).perMessage.length, 1);
});
