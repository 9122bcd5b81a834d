// countMessages on real-looking conversations, OpenAI and Anthropic formats.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ContextGuard, countMessages, countTokens } from 'ctxguard';
import {
  anthropicConversation,
  calculatorTool,
  cookbookConversation,
  cookbookPerMessage,
  sum,
  toolConversation,
  weatherTool,
  withFrozen,
} from './helpers.mjs';

function assertAccounting(result) {
  assert.equal(result.total, sum(result.perMessage) + result.toolDefinitions + result.priming, 'total = messages + tools + priming');
  for (const n of result.perMessage) assert.ok(Number.isInteger(n) && n > 0, `per-message count ${n}`);
}

test("OpenAI cookbook conversation: 129 tokens with cl100k_base (gpt-4), 124 with o200k_base (gpt-4o)", () => {
  const gpt4 = countMessages(cookbookConversation, { model: 'gpt-4' });
  assert.deepEqual(gpt4, {
    total: 129,
    perMessage: cookbookPerMessage.cl100k_base,
    toolDefinitions: 0,
    priming: 3,
    exact: true,
    kind: 'exact',
    encoding: 'cl100k_base',
  });
  const gpt4o = countMessages(cookbookConversation, { model: 'gpt-4o' });
  assert.equal(gpt4o.total, 124);
  assert.deepEqual(gpt4o.perMessage, cookbookPerMessage.o200k_base);
  assert.equal(gpt4o.encoding, 'o200k_base');
  // No model: OpenAI's rules in the chosen encoding, exact.
  assert.deepEqual(countMessages(cookbookConversation, { encoding: 'cl100k_base' }), gpt4);
  assert.deepEqual(countMessages(cookbookConversation), gpt4o);
});

test('a message costs its content plus framing', () => {
  const content = 'Can you review this pull request before lunch?';
  const { perMessage } = countMessages([{ role: 'user', content }], { model: 'gpt-4o' });
  assert.equal(perMessage[0], 3 + countTokens('user') + countTokens(content));
});

test('OpenAI conversation with parallel tool calls and tool definitions', () => {
  const withTools = countMessages(toolConversation, { model: 'gpt-4o', tools: [weatherTool] });
  assertAccounting(withTools);
  assert.equal(withTools.perMessage.length, toolConversation.length);
  assert.equal(withTools.exact, true);
  assert.equal(withTools.kind, 'exact');
  assert.equal(withTools.encoding, 'o200k_base');
  assert.ok(withTools.toolDefinitions > 0, 'tool definitions are billed');

  const withoutTools = countMessages(toolConversation, { model: 'gpt-4o' });
  assert.equal(withoutTools.toolDefinitions, 0);
  assert.deepEqual(withoutTools.perMessage, withTools.perMessage);
  assert.equal(withTools.total - withoutTools.total, withTools.toolDefinitions);

  // The assistant turn that only calls tools costs at least its arguments and names.
  const calls = toolConversation[2].tool_calls;
  const argumentTokens = sum(calls.map((c) => countTokens(c.function.arguments) + countTokens(c.function.name)));
  assert.ok(withTools.perMessage[2] >= argumentTokens, `${withTools.perMessage[2]} < ${argumentTokens}`);

  // Longer arguments cost more; nothing else changes.
  const longer = structuredClone(toolConversation);
  longer[2].tool_calls[0].function.arguments = '{"city":"Paris","unit":"celsius","days":7,"hourly":true}';
  const longerCount = countMessages(longer, { model: 'gpt-4o' });
  assert.ok(longerCount.perMessage[2] > withoutTools.perMessage[2]);
  assert.deepEqual(longerCount.perMessage.toSpliced(2, 1), withoutTools.perMessage.toSpliced(2, 1));
});

test('counting is deterministic and repeatable (cache hits give the same numbers)', () => {
  const first = countMessages(toolConversation, { model: 'gpt-4o', tools: [weatherTool] });
  for (let i = 0; i < 3; i += 1) {
    assert.deepEqual(countMessages(toolConversation, { model: 'gpt-4o', tools: [weatherTool] }), first);
  }
});

test('unknown fields on messages are accepted and do not change the count', () => {
  const tagged = toolConversation.map((m, i) => ({ ...m, id: `msg_${i}`, createdAt: '2025-01-01T00:00:00Z' }));
  const plain = countMessages(toolConversation, { model: 'gpt-4o' });
  assert.deepEqual(countMessages(tagged, { model: 'gpt-4o' }).perMessage, plain.perMessage);
});

test('Anthropic conversation with tool_use / tool_result blocks is an estimate', () => {
  const result = countMessages(anthropicConversation, {
    model: 'claude-sonnet-4-5',
    format: 'anthropic',
    system: 'You are a careful calculator assistant.',
    tools: [calculatorTool],
  });
  assertAccounting(result);
  assert.equal(result.exact, false);
  assert.equal(result.kind, 'estimate');
  assert.ok(result.toolDefinitions > 0);
  assert.ok(result.perMessage.length >= anthropicConversation.length);
  // The system prompt is counted: adding one costs tokens.
  const withoutSystem = countMessages(anthropicConversation, {
    model: 'claude-sonnet-4-5',
    format: 'anthropic',
    tools: [calculatorTool],
  });
  assert.ok(result.total > withoutSystem.total);
});

test('countMessages never modifies its input', () => {
  withFrozen({ messages: toolConversation, tools: [weatherTool] }, ({ messages, tools }) =>
    countMessages(messages, { model: 'gpt-4o', tools }),
  );
  withFrozen({ messages: anthropicConversation, tools: [calculatorTool] }, ({ messages, tools }) =>
    countMessages(messages, { model: 'claude-sonnet-4-5', format: 'anthropic', tools, system: 'Be brief.' }),
  );
});

test('results are plain JSON data', () => {
  const result = countMessages(toolConversation, { model: 'gpt-4o', tools: [weatherTool] });
  assert.deepEqual(JSON.parse(JSON.stringify(result)), result);
  assert.equal(Object.getPrototypeOf(result), Object.prototype);
});

// JSON writes a JS number of 2^53 or more without a fraction (12345678901234567000), which reads
// as an integer beyond what serde-wasm-bindgen passes back: such numbers must come back as the
// same JS numbers, on the stored path and on the plain one (a URL object forces the plain path).
test('integers beyond 2^53 in message data come back as the same JS numbers', async () => {
  const big = { role: 'user', content: 'hi', meta: { id: 12345678901234567890, neg: -9007199254740993, max: Number.MAX_SAFE_INTEGER, huge: 1e300, list: [2 ** 60, -(2 ** 62)] } };
  for (const extra of [{}, { link: new URL('https://example.com/a') }]) {
    const msgs = [{ role: 'system', content: 'Be brief.', ...extra }, big];
    const want = JSON.parse(JSON.stringify(msgs));
    const g = new ContextGuard({ model: 'gpt-4o' });
    assert.deepEqual(g.guardSources(msgs).messages, want);
    assert.deepEqual((await g.prepare(msgs)).messages, want);
    assert.deepEqual((await g.prepare(msgs)).messages, want, 'again, from the store');
    assert.equal(g.measure(msgs).usedTokens, countMessages(want, { model: 'gpt-4o' }).total);
    g.free();
  }
});
