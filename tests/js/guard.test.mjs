// ContextGuard: the budget it resolves and the metrics snapshot it returns.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ContextGuard, countMessages, countTokens } from 'ctxguard';
import { sum, toolConversation, weatherTool, withFrozen } from './helpers.mjs';

const SMALL = { contextWindow: 1000, maxOutputTokens: 200, reservedOutputTokens: 100, triggerRatio: 0.8, targetRatio: 0.5 };

/** A user/assistant conversation of just over `tokens` tokens (3 framing + 1 role per message, 3 priming). */
function conversationOf(tokens) {
  const system = 'You are the release coordinator.';
  const content = 'We agreed to ship the billing migration on Thursday after the load test. '.repeat(5);
  const messages = [{ role: 'system', content: system }];
  let total = 3 + 4 + countTokens(system);
  for (let i = 0; total < tokens; i += 1) {
    messages.push({ role: i % 2 === 0 ? 'user' : 'assistant', content });
    total += 4 + countTokens(content);
  }
  return messages;
}

test('budget from an explicit config', () => {
  const guard = new ContextGuard({ model: 'gpt-4o', ...SMALL });
  assert.deepEqual(guard.budget, {
    contextWindow: 1000,
    maxOutputTokens: 200,
    reservedOutputTokens: 100,
    economicBudget: null,
    usableLimit: 900,
    triggerRatio: 0.8,
    targetRatio: 0.5,
    triggerLimit: 720,
    targetLimit: 450,
  });
  guard.free();
});

test('budget defaults come from the model table; an economic budget caps the usable limit', () => {
  const guard = new ContextGuard({ model: 'gpt-4o' });
  assert.equal(guard.budget.contextWindow, 128000);
  assert.equal(guard.model.model, 'gpt-4o');
  assert.equal(guard.model.encoding, 'o200k_base');
  assert.ok(guard.budget.reservedOutputTokens <= guard.budget.maxOutputTokens);
  assert.equal(guard.budget.usableLimit, guard.budget.contextWindow - guard.budget.reservedOutputTokens);
  guard.free();

  const capped = new ContextGuard({ model: 'gpt-4o', economicBudget: 32000 });
  assert.equal(capped.budget.usableLimit, 32000);
  assert.equal(capped.budget.economicBudget, 32000);
  capped.free();
});

test('measure returns a complete, consistent snapshot', () => {
  const guard = new ContextGuard({ model: 'gpt-4o' });
  const m = guard.measure(toolConversation, { tools: [weatherTool] });
  const expected = countMessages(toolConversation, { model: 'gpt-4o', tools: [weatherTool] });

  assert.equal(m.model, 'gpt-4o');
  assert.equal(m.encoding, 'o200k_base');
  assert.equal(m.kind, 'exact');
  assert.equal(m.usedTokens, expected.total, 'measure counts what countMessages counts');
  assert.equal(m.contextWindow, guard.budget.contextWindow);
  assert.equal(m.reservedOutputTokens, guard.budget.reservedOutputTokens);
  assert.equal(m.usableLimit, guard.budget.usableLimit);
  assert.equal(m.triggerLimit, guard.budget.triggerLimit);
  assert.equal(m.targetLimit, guard.budget.targetLimit);
  assert.equal(m.remainingTokens, m.usableLimit - m.usedTokens);
  assert.equal(m.remainingRatio, m.remainingTokens / m.usableLimit);
  assert.equal(m.usedRatio, m.usedTokens / m.usableLimit);
  assert.equal(m.state, 'ok');
  assert.equal(m.messageCount, toolConversation.length);
  assert.equal(m.compacted, false);
  assert.equal(m.lastCompaction, null);

  const b = m.breakdown;
  assert.deepEqual(Object.keys(b).sort(), [
    'assistant', 'attachments', 'framing', 'images', 'summary', 'system', 'toolDefinitions', 'toolOutputs', 'user',
  ]);
  assert.equal(sum(Object.values(b)), m.usedTokens, 'the breakdown adds up to usedTokens');
  assert.equal(b.toolDefinitions, expected.toolDefinitions);
  assert.equal(b.system, countTokens(toolConversation[0].content));
  assert.ok(b.user > 0 && b.assistant > 0 && b.toolOutputs > 0 && b.framing > 0);
  assert.equal(b.attachments, 0);
  assert.equal(b.images, 0);
  assert.equal(b.summary, 0);

  // Plain serializable data: a reload can restore the toolbar from JSON.
  assert.deepEqual(JSON.parse(JSON.stringify(m)), m);
  guard.free();
});

test('state follows the trigger and usable limits', () => {
  const guard = new ContextGuard({ model: 'gpt-4o', ...SMALL });
  const state = (tokens) => guard.measure(conversationOf(tokens));
  const ok = state(100);
  assert.equal(ok.state, 'ok', JSON.stringify(ok));
  const over = state(780);
  assert.ok(over.usedTokens > 720 && over.usedTokens <= 900, `${over.usedTokens}`);
  assert.equal(over.state, 'over_trigger');
  const full = state(1200);
  assert.ok(full.usedTokens > 900);
  assert.equal(full.state, 'over_limit');
  assert.equal(full.remainingTokens, 0);
  assert.ok(full.usedRatio > 1);
  guard.free();
});

test('a second measure of the same messages is served from the cache', () => {
  const guard = new ContextGuard({ model: 'gpt-4o' });
  const first = guard.measure(toolConversation);
  const before = guard.cacheStats;
  const second = guard.measure(toolConversation);
  const after = guard.cacheStats;
  assert.deepEqual(second, first);
  assert.ok(after.hits >= before.hits + toolConversation.length, JSON.stringify({ before, after }));
  assert.equal(after.misses, before.misses);
  // One new message: one more miss.
  guard.measure([...toolConversation, { role: 'assistant', content: 'Marseille: sunny, 22 °C.' }]);
  assert.equal(guard.cacheStats.misses, after.misses + 1);
  guard.free();
});

test('measure never modifies its input', () => {
  const guard = new ContextGuard({ model: 'gpt-4o' });
  withFrozen({ messages: toolConversation, tools: [weatherTool] }, ({ messages, tools }) =>
    guard.measure(messages, { tools }),
  );
  withFrozen(SMALL, (config) => new ContextGuard({ model: 'gpt-4o', ...config }).free());
  guard.free();
});
