// countMessages' `places` through the built package: for each perMessage entry, where that message
// sits in the caller's input (the system option first, tool results split out before the rest of
// their message), in all five formats; hostile options and input get an Error with a stable code.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { countMessages } from 'ctxguard';
import { throwsCtxguard, withFrozen } from './helpers.mjs';

const place = (message, parts, role) => ({ message, parts, role });

const requests = {
  openai: {
    system: 'Be brief.',
    messages: [
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: '18 °C' },
    ],
    places: [place('system', null, 'system'), place(0, null, 'user'), place(1, null, 'assistant'), place(2, null, 'tool')],
  },
  anthropic: {
    system: [{ type: 'text', text: 'Be brief.' }],
    messages: [
      { role: 'user', content: 'Weather in two cities?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'weather', input: {} }, { type: 'tool_use', id: 't2', name: 'weather', input: {} }] },
      { role: 'user', content: [{ type: 'text', text: 'Here:' }, { type: 'tool_result', tool_use_id: 't1', content: '18 °C' }, { type: 'text', text: 'and' }, { type: 'tool_result', tool_use_id: 't2', content: '24 °C' }] },
    ],
    places: [place('system', null, 'system'), place(0, null, 'user'), place(1, null, 'assistant'), place(2, [1], 'tool'), place(2, [3], 'tool'), place(2, [0, 2], 'user')],
  },
  'ai-sdk': {
    system: [{ role: 'system', content: 'Be brief.' }, { role: 'system', content: 'Metric units.' }],
    messages: [
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'weather', input: {} }, { type: 'tool-call', toolCallId: 'c2', toolName: 'weather', input: {} }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'weather', output: { type: 'text', value: '18' } }, { type: 'tool-result', toolCallId: 'c2', toolName: 'weather', output: { type: 'text', value: '24' } }] },
      { role: 'system', content: 'Answer in one line.' },
    ],
    places: [place('system', [0], 'system'), place('system', [1], 'system'), place(0, null, 'user'), place(1, null, 'assistant'), place(2, [0], 'tool'), place(2, [1], 'tool'), place(3, null, 'system')],
  },
  'openai-responses': {
    system: 'Be brief.',
    messages: [
      { role: 'user', content: 'Weather?' },
      { type: 'function_call', call_id: 'c1', name: 'weather', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: '18 °C' },
    ],
    places: [place('system', null, 'system'), place(0, null, 'user'), place(1, null, 'assistant'), place(2, null, 'tool')],
  },
  gemini: {
    system: { parts: [{ text: 'Be brief.' }] },
    messages: [
      { role: 'user', parts: [{ text: 'Weather?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'weather', args: {} } }, { functionCall: { name: 'weather', args: {} } }] },
      { role: 'user', parts: [{ text: 'Here:' }, { functionResponse: { name: 'weather', response: { output: '18' } } }, { functionResponse: { name: 'weather', response: { output: '24' } } }] },
    ],
    places: [place('system', null, 'system'), place(0, null, 'user'), place(1, null, 'assistant'), place(2, [1], 'tool'), place(2, [2], 'tool'), place(2, [0], 'user')],
  },
};

test('places: one per perMessage entry, in its order, in all five formats; the input untouched', () => {
  for (const [format, { system, messages, places }] of Object.entries(requests)) {
    const r = withFrozen({ messages, system }, (req) => countMessages(req.messages, { model: 'gpt-4o', format, system: req.system, places: true }));
    assert.deepEqual(r.places.map(({ callId, ...p }) => p), places, format);
    const calls = r.places.filter((p) => p.role === 'tool').map((p) => p.callId);
    if (format !== 'gemini') assert.deepEqual(calls, format === 'anthropic' ? ['t1', 't2'] : format === 'ai-sdk' ? ['c1', 'c2'] : ['c1'], format);
    assert.ok(r.places.filter((p) => p.role !== 'tool').every((p) => p.callId === null), format);
    assert.equal(r.places.length, r.perMessage.length, format);
    const plain = countMessages(messages, { model: 'gpt-4o', format, system });
    assert.equal('places' in plain, false, `${format}: only when asked`);
    assert.deepEqual(plain.perMessage, r.perMessage, format);
  }
});

test('places: hostile options and input get an Error with a stable code, and the module keeps working', () => {
  const { messages } = requests.openai;
  for (const bad of ['yes', 1, null, {}, []]) {
    throwsCtxguard(() => countMessages(messages, { model: 'gpt-4o', places: bad }), 'INVALID_OPTIONS');
  }
  throwsCtxguard(() => countMessages(requests['ai-sdk'].messages, { format: 'ai-sdk', system: 42, places: true }), 'INVALID_OPTIONS');
  throwsCtxguard(() => countMessages(requests['ai-sdk'].messages, { format: 'ai-sdk', system: [{ role: 'user', content: 'x' }], places: true }), 'INVALID_OPTIONS');
  const cyclic = [{ role: 'user', content: 'x' }];
  cyclic[0].self = cyclic;
  throwsCtxguard(() => countMessages(cyclic, { places: true }), 'INVALID_MESSAGES');
  throwsCtxguard(() => countMessages([1], { places: true }), 'INVALID_MESSAGE');
  throwsCtxguard(() => countMessages([{ role: 'user', content: [{ type: 'tool_result' }] }], { format: 'anthropic', places: true }), ['INVALID_CONTENT_PART', 'INVALID_TOOL', 'INVALID_MESSAGE']);
  throwsCtxguard(() => countMessages([{ role: 'user', parts: [{ functionResponse: 7 }] }], { format: 'gemini', places: true }), ['INVALID_CONTENT_PART', 'INVALID_TOOL', 'INVALID_MESSAGE']);
  assert.deepEqual(countMessages([], { places: true }).places, [], 'still working');
});
