// AI SDK UI messages (`format: 'ai-sdk-ui'`, what a `useChat` app holds) against the AI SDK itself
// (the `ai` package, a dev dependency): detectFormat names them, countMessages of a UIMessage[]
// equals countMessages of AI SDK 7's own convertToModelMessages of it, prepare gives back UI
// messages that convertToModelMessages and validateUIMessages accept (same ids, compacted tool
// outputs in their tool parts, ctxguard's notes in `system` for `instructions`), and an
// unchanged conversation comes back as it was. Errors name the right format.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { convertToModelMessages, validateUIMessages } from 'ai';
import { ContextGuard, countMessages, detectFormat } from 'ctxguard';
import { throwsCtxguard, withFrozen } from './helpers.mjs';

const FIXTURE = JSON.parse(readFileSync(new URL('../support/ai_sdk_ui.json', import.meta.url), 'utf8'));

/** A long JSON tool output (a search over a code base), as a tool would return it. */
function hits(n, salt) {
  return { query: `TODO ${salt}`, hits: Array.from({ length: n }, (_, i) => ({ file: `src/mod${i % 50}/file${i}.rs`, line: (i * 37) % 900, text: `// TODO(${salt}) handle the case ${i} — 处理 ${i}` })) };
}

/** A useChat conversation of `turns` turns, each with a tool step and an answer. */
function chat(turns) {
  const messages = [];
  for (let t = 0; t < turns; t++) {
    messages.push({ id: `u${t}`, role: 'user', metadata: { at: 1_730_000_000_000 + t }, parts: [{ type: 'text', text: `Question ${t}: where are the TODOs of part ${t}? Antworte kurz.` }] });
    messages.push({
      id: `a${t}`,
      role: 'assistant',
      parts: [
        { type: 'step-start' },
        { type: 'text', text: `Searching part ${t}.`, state: 'done' },
        { type: 'tool-search', toolCallId: `call_${t}`, state: 'output-available', input: { q: 'TODO', part: t }, output: hits(60, t) },
        { type: 'step-start' },
        { type: 'text', text: `Part ${t} has 60 TODOs, most in src/mod${t}.`, state: 'done' },
        { type: 'data-usage', data: { tokens: 1000 + t } },
      ],
    });
  }
  messages.push({ id: 'last', role: 'user', parts: [{ type: 'text', text: 'Summarize what you found.' }] });
  return messages;
}

test('detectFormat names UI messages, a useChat request body too', () => {
  assert.equal(detectFormat(FIXTURE.ui), 'ai-sdk-ui');
  assert.equal(detectFormat({ id: 'chat-1', messages: FIXTURE.ui, trigger: 'submit-message' }), 'ai-sdk-ui');
  assert.equal(detectFormat(FIXTURE.model), 'ai-sdk');
  assert.equal(detectFormat([{ role: 'user', parts: [{ text: 'hi' }] }]), 'gemini');
});

test('the committed fixture is what AI SDK 7 converts today', async () => {
  assert.deepEqual(JSON.parse(JSON.stringify(await convertToModelMessages(FIXTURE.ui))), FIXTURE.model);
});

test('counting UI messages equals counting convertToModelMessages of them', async () => {
  for (const ui of [FIXTURE.ui, chat(3)]) {
    const model = await convertToModelMessages(ui);
    for (const name of ['gpt-4o', 'gpt-4.1', 'claude-sonnet-4-5']) {
      const ours = withFrozen(ui, (m) => countMessages(m, { model: name }));
      const explicit = countMessages(ui, { model: name, format: 'ai-sdk-ui' });
      const theirs = countMessages(model, { model: name, format: 'ai-sdk' });
      assert.equal(ours.total, theirs.total, name);
      assert.deepEqual(explicit, ours);
      assert.deepEqual(ours.perMessage, theirs.perMessage, name);
    }
  }
  // With a system prompt and tools, as the server sends them.
  const tools = { search: { description: 'Search the code', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } } };
  const ui = chat(2);
  assert.equal(
    countMessages(ui, { model: 'gpt-4o', system: 'Be brief.', tools }).total,
    countMessages(await convertToModelMessages(ui), { model: 'gpt-4o', format: 'ai-sdk', system: 'Be brief.', tools }).total,
  );
});

test('prepare of an unchanged conversation gives it back', async () => {
  const guard = new ContextGuard({ model: 'gpt-4o', format: 'ai-sdk-ui' });
  const r = await withFrozen(FIXTURE.ui, (m) => guard.prepare(m, { system: 'Be brief.' }));
  assert.equal(JSON.stringify(r.messages), JSON.stringify(FIXTURE.ui));
  assert.deepEqual(r.system, [{ role: 'system', content: 'Be brief.' }]);
  guard.free();
});

test('prepare compacts tool outputs in their tool parts; what it returns is valid for the AI SDK', async () => {
  const ui = chat(12);
  const guard = new ContextGuard({ model: 'gpt-4o', format: 'ai-sdk-ui', contextWindow: 16_000, reservedOutputTokens: 1_000 });
  const before = countMessages(ui, { model: 'gpt-4o' }).total;
  assert.ok(before > 16_000, `the conversation is over the window: ${before}`);
  const r = await withFrozen(ui, (m) => guard.prepare(m, { system: 'Be brief.' }));
  assert.ok(r.metrics.usedTokens <= r.metrics.usableLimit, JSON.stringify(r.metrics));
  // What comes back is UI messages: the app's ids, and the AI SDK takes them as they are.
  const ids = new Set(ui.map((m) => m.id));
  for (const m of r.messages) assert.ok(ids.has(m.id), `unknown id ${m.id}`);
  assert.equal(r.messages.at(-1).id, 'last');
  await validateUIMessages({ messages: r.messages });
  const model = await convertToModelMessages(r.messages);
  assert.ok(model.length > 0);
  // Tool outputs that changed stay in their tool part, which keeps its shape.
  const parts = r.messages.filter((m) => m.role === 'assistant').flatMap((m) => m.parts.filter((p) => p.type === 'tool-search'));
  const changed = parts.filter((p) => JSON.stringify(p.output) !== JSON.stringify(hits(60, Number(p.toolCallId.slice(5)))));
  assert.ok(changed.length > 0, 'some outputs were compacted or cleared');
  for (const p of parts) assert.deepEqual(Object.keys(p), ['type', 'toolCallId', 'state', 'input', 'output']);
  // The summary or note, if any, is a system model message for `instructions`.
  for (const s of r.system) assert.deepEqual(Object.keys(s), ['role', 'content']);
  // The prepared messages count what the metrics say, once the system is added.
  const recount = countMessages(r.messages, { model: 'gpt-4o', system: r.system });
  assert.equal(recount.total, r.metrics.usedTokens);
  guard.free();
});

test('a checkpoint of a UI conversation restores in a new guard', async () => {
  // Long answers, nothing to clear: only a summary makes it fit.
  const ui = Array.from({ length: 30 }, (_, t) => [
    { id: `u${t}`, role: 'user', parts: [{ type: 'text', text: `Question ${t}: explain part ${t}.` }] },
    { id: `a${t}`, role: 'assistant', parts: [{ type: 'step-start' }, { type: 'text', text: `Part ${t} works like this. `.repeat(40) }] },
  ]).flat();
  ui.push({ id: 'last', role: 'user', parts: [{ type: 'text', text: 'And now?' }] });
  const summarize = async ({ messages }) => `The user asked about ${messages.length} messages of TODO searches.`;
  const opts = { model: 'gpt-4o', format: 'ai-sdk-ui', contextWindow: 12_000, reservedOutputTokens: 1_000, edits: 'trigger' };
  const g1 = new ContextGuard(opts);
  const r1 = await g1.prepare(ui, { summarize });
  assert.ok(r1.checkpoint, 'compacted: a checkpoint to persist');
  assert.ok(r1.checkpoint.system.some((s) => s.ctxguard?.summaryCompacted), JSON.stringify(r1.checkpoint.system));
  const saved = JSON.parse(JSON.stringify(r1.checkpoint));
  const g2 = new ContextGuard(opts);
  assert.equal(g2.restore(saved).restored, true);
  const r2 = await g2.prepare(ui, { summarize: async () => assert.fail('the remembered summary applies') });
  assert.deepEqual(r2.messages, r1.messages);
  assert.deepEqual(r2.system, r1.system);
  g1.free();
  g2.free();
});

test('errors name the format that reads the messages', () => {
  const e = throwsCtxguard(() => countMessages(FIXTURE.ui, { model: 'gpt-4o', format: 'ai-sdk' }), 'INVALID_MESSAGE');
  assert.match(e.message, /these look like AI SDK UIMessages \(parts\): use format: 'ai-sdk-ui'/);
  for (const format of ['ai-sdk', undefined]) {
    const guard = new ContextGuard({ model: 'gpt-4o', format });
    const g = throwsCtxguard(() => guard.measure(FIXTURE.ui), 'INVALID_MESSAGE');
    assert.match(g.message, /use format: 'ai-sdk-ui'/, `${format}: ${g.message}`);
    guard.free();
  }
  const e2 = throwsCtxguard(() => countMessages(FIXTURE.model, { model: 'gpt-4o', format: 'ai-sdk-ui' }), 'INVALID_MESSAGE');
  assert.match(e2.message, /looks like an AI SDK ModelMessage: use format: 'ai-sdk'/);
});

test('an unanswered tool call leaves only its own tool part; the text of the message stays', async () => {
  const u = (id, text) => ({ id, role: 'user', parts: [{ type: 'text', text }] });
  const cases = [
    [{ type: 'step-start' }, { type: 'tool-x', toolCallId: 'c', state: 'input-available', input: { q: 1 } }, { type: 'text', text: 'ANSWER' }],
    [{ type: 'step-start' }, { type: 'text', text: 'BEFORE' }, { type: 'tool-x', toolCallId: 'c', state: 'input-available', input: { q: 1 } }, { type: 'text', text: 'ANSWER' }],
    [{ type: 'step-start' }, { type: 'tool-x', toolCallId: 'c', state: 'input-available', input: { q: 1 } }, { type: 'step-start' }, { type: 'text', text: 'ANSWER' }],
  ];
  for (const parts of cases) {
    const messages = [u('u0', 'hi'), { id: 'a0', role: 'assistant', parts }, u('u1', 'next')];
    const r = await withFrozen(messages, (m) => new ContextGuard({ model: 'gpt-4o', format: 'ai-sdk-ui' }).prepare(m));
    const a = r.messages.find((m) => m.id === 'a0');
    // A step whose only part was the call goes with its boundary; the next step keeps its own.
    const expected = parts.filter((p) => p.type !== 'tool-x').filter((p, k, all) => !(p.type === 'step-start' && all[k + 1]?.type === 'step-start'));
    assert.deepEqual(a.parts, expected);
    const dropped = r.traces.find((t) => t.reason === 'unanswered_tool_call');
    assert.deepEqual([dropped.messageIndex, dropped.callIds, dropped.removed], [1, ['c'], false]);
    await validateUIMessages({ messages: r.messages });
    const model = await convertToModelMessages(r.messages);
    assert.ok(!JSON.stringify(model).includes('tool-call'), 'no call without its result reaches the model');
  }
});
