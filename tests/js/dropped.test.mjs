// What prepare leaves out of the input — a tool result without its call, a call without its
// result, a half-streamed empty assistant message — is named by a `message_dropped` trace with
// the message's index in the caller's `messages`, the reason and the call ids.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ContextGuard, countMessages } from 'ctxguard';

const call = (id) => ({ id, type: 'function', function: { name: 'lookup', arguments: '{}' } });
const named = (r) => r.traces.filter((t) => t.operation === 'message_dropped').map((t) => [t.messageIndex, t.reason, t.removed, t.callIds]);

test('each broken pair and empty message of the input gets a trace with its index and reason', async () => {
  const guard = new ContextGuard({ model: 'gpt-4o' });
  const messages = [
    { role: 'user', content: 'hi' },
    { role: 'tool', tool_call_id: 'ghost', content: 'a result whose call is gone' },
    { role: 'assistant', content: 'Looking it up.', tool_calls: [call('c1')] },
    { role: 'assistant', content: undefined },
    { role: 'assistant', content: null, tool_calls: [call('c2')] },
    { role: 'user', content: 'and?' },
  ];
  const seen = [];
  const r = await guard.prepare(messages, { onTrace: (t) => seen.push(t) });
  assert.deepEqual(named(r), [
    [1, 'orphan_tool_result', true, ['ghost']],
    [2, 'unanswered_tool_call', false, ['c1']],
    [3, 'empty_message', true, null],
    [4, 'unanswered_tool_call', true, ['c2']],
  ]);
  assert.deepEqual(r.messages, [messages[0], { role: 'assistant', content: 'Looking it up.' }, messages[5]]);
  assert.equal(r.droppedMessages, 3);
  // Tokens: what the message cost, and what is left of it.
  const [orphan, repaired] = r.traces;
  assert.equal(orphan.beforeTokens, countMessages([messages[1]], { model: 'gpt-4o' }).perMessage[0]);
  assert.equal(orphan.afterTokens, 0);
  assert.equal(repaired.afterTokens, countMessages([{ role: 'assistant', content: 'Looking it up.' }], { model: 'gpt-4o' }).perMessage[0]);
  assert.ok(repaired.beforeTokens > repaired.afterTokens);
  // onTrace receives the same traces; other traces have null in these fields.
  assert.deepEqual(seen.filter((t) => t.operation === 'message_dropped'), r.traces.filter((t) => t.operation === 'message_dropped'));
  // The second call takes the guard's stored path: the same traces.
  assert.deepEqual(named(await guard.prepare(messages)), named(r));
});

test('a whole input has no message_dropped trace, and other traces carry null fields', async () => {
  const guard = new ContextGuard({ model: 'gpt-4o', toolOutputLimit: 200 });
  const r = await guard.prepare([
    { role: 'user', content: 'run it' },
    { role: 'assistant', content: null, tool_calls: [call('c1')] },
    { role: 'tool', tool_call_id: 'c1', content: 'line\n'.repeat(2000) },
  ]);
  assert.deepEqual(named(r), []);
  assert.ok(r.traces.length > 0);
  for (const t of r.traces) assert.deepEqual([t.messageIndex, t.reason, t.removed, t.callIds], [null, null, null, null]);
});

test('indices are the caller\'s: an Anthropic tool_result block names the message holding it; the system option does not shift them', async () => {
  const claude = new ContextGuard({ model: 'claude-sonnet-4-5', format: 'anthropic' });
  const r = await claude.prepare(
    [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_ghost', content: 'x' }, { type: 'text', text: 'and?' }] },
    ],
    { system: 'Be brief.' },
  );
  assert.deepEqual(named(r), [[2, 'orphan_tool_result', true, ['toolu_ghost']]]);
  assert.deepEqual(r.messages.at(-1).content, [{ type: 'text', text: 'and?' }]);

  const ai = new ContextGuard({ model: 'gpt-4o', format: 'ai-sdk' });
  const r2 = await ai.prepare(
    [
      { role: 'user', content: 'hi' },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'ghost', toolName: 'lookup', output: { type: 'text', value: 'x' } }] },
      { role: 'user', content: 'and?' },
    ],
    { system: [{ role: 'system', content: 'Be brief.' }, { role: 'system', content: 'Answer in French.' }] },
  );
  assert.deepEqual(named(r2), [[1, 'orphan_tool_result', true, ['ghost']]]);
});
