// chainPreModelHooks: hooks see the previous hook's model input; guidance stacks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ContextGuard, chainPreModelHooks } from 'ctxguard';

test('hooks run in order, each on the previous model input, and guidance stacks', async () => {
  const guard = new ContextGuard({ model: 'gpt-4o' });
  const seen = [];
  const hook = chainPreModelHooks([
    async (input) => {
      const r = await guard.prepare(input.messages, { guidance: 'User guidance: answer in French.' });
      return { ...input, messages: r.messages };
    },
    (input) => {
      seen.push(input.messages.length);
      return { ...input, messages: [...input.messages, { role: 'system', content: 'Attempt guidance: your last answer was cut off.' }] };
    },
    (input) => {
      seen.push(input.messages.length);
    },
  ]);
  const original = { messages: [{ role: 'user', content: 'Bonjour' }], requestId: 7 };
  const out = await hook(original);
  assert.deepEqual(out.messages.map((m) => m.content), ['Bonjour', 'User guidance: answer in French.', 'Attempt guidance: your last answer was cut off.']);
  assert.equal(out.requestId, 7);
  assert.deepEqual(seen, [2, 3]);
  assert.equal(original.messages.length, 1, 'the input is not modified');
});

test('misuse is a CtxguardError; a hook error reaches the caller', async () => {
  assert.throws(() => chainPreModelHooks([() => {}, 5]), { name: 'CtxguardError', code: 'INVALID_OPTIONS' });
  assert.throws(() => chainPreModelHooks('x'), { code: 'INVALID_OPTIONS' });
  await assert.rejects(chainPreModelHooks([() => 42])({ messages: [] }), { code: 'INVALID_OPTIONS' });
  const boom = new Error('host bug');
  await assert.rejects(chainPreModelHooks([() => { throw boom; }])({ messages: [] }), (e) => e === boom);
});
