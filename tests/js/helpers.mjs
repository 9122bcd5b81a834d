// Shared fixtures and assertions for the JS tests (not a test file: node --test runs *.test.mjs).
import assert from 'node:assert/strict';

/** Freezes a value and everything reachable from it, so that any write by the library throws. */
export function deepFreeze(value) {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Reflect.ownKeys(value)) deepFreeze(value[key]);
  }
  return value;
}

/**
 * Calls fn with a deep-frozen copy of input and checks that the input still equals the original
 * afterwards (the library never mutates what it is given). Returns fn's result.
 */
export function withFrozen(input, fn) {
  const original = structuredClone(input);
  const frozen = deepFreeze(structuredClone(input));
  const result = fn(frozen);
  assert.deepEqual(frozen, original, 'the input was modified');
  return result;
}

/** Asserts that fn throws a ctxguard error with this code; returns the error. */
export function throwsCtxguard(fn, code) {
  let caught;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught !== undefined, `expected a CtxguardError ${code}, nothing was thrown`);
  assert.ok(caught instanceof Error, `expected an Error instance, got ${typeof caught}: ${String(caught)}`);
  assert.equal(caught.name, 'CtxguardError');
  assert.equal(typeof caught.message, 'string');
  assert.ok(caught.message.length > 0, 'the error has no message');
  const codes = Array.isArray(code) ? code : [code];
  assert.ok(codes.includes(caught.code), `expected code ${codes.join(' or ')}, got ${caught.code}: ${caught.message}`);
  return caught;
}

/**
 * The conversation from OpenAI's cookbook "How to count tokens with tiktoken", whose published
 * counts are 129 tokens for gpt-3.5-turbo / gpt-4 (cl100k_base) and 124 for gpt-4o (o200k_base):
 * 3 tokens of framing per message, 1 more per `name`, 3 to prime the reply.
 */
export const cookbookConversation = [
  {
    role: 'system',
    content: 'You are a helpful, pattern-following assistant that translates corporate jargon into plain English.',
  },
  { role: 'system', name: 'example_user', content: 'New synergies will help drive top-line growth.' },
  { role: 'system', name: 'example_assistant', content: 'Things working well together will increase revenue.' },
  {
    role: 'system',
    name: 'example_user',
    content: "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage.",
  },
  {
    role: 'system',
    name: 'example_assistant',
    content: "Let's talk later when we're less busy about how to do better.",
  },
  {
    role: 'user',
    content: "This late pivot means we don't have time to boil the ocean for the client deliverable.",
  },
];

/** Per-message counts of cookbookConversation: 3 framing + role + content (+ name + 1). */
export const cookbookPerMessage = {
  cl100k_base: [22, 17, 16, 25, 23, 23],
  o200k_base: [21, 17, 16, 24, 21, 22],
};

export const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Get the current weather for a city.',
    parameters: {
      type: 'object',
      properties: {
        city: { type: 'string', description: 'City name, e.g. Paris' },
        unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
      },
      required: ['city'],
    },
  },
};

/** An OpenAI Chat Completions conversation with a parallel tool call and its results. */
export const toolConversation = [
  { role: 'system', content: 'You are a concise travel assistant. Use tools for live data.' },
  { role: 'user', content: 'Should I pack an umbrella for Paris and Lyon tomorrow?' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [
      {
        id: 'call_paris_1',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' },
      },
      {
        id: 'call_lyon_2',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Lyon","unit":"celsius"}' },
      },
    ],
  },
  { role: 'tool', tool_call_id: 'call_paris_1', content: '{"city":"Paris","forecast":"rain","high":14,"low":9}' },
  { role: 'tool', tool_call_id: 'call_lyon_2', content: '{"city":"Lyon","forecast":"sunny","high":19,"low":11}' },
  {
    role: 'assistant',
    content: 'Pack an umbrella for Paris (rain, 9–14 °C). Lyon looks sunny (11–19 °C).',
  },
  { role: 'user', content: 'Thanks! And what about Marseille?' },
];

/** An Anthropic Messages conversation with tool_use / tool_result blocks. */
export const anthropicConversation = [
  { role: 'user', content: 'What is 1234 * 5678? Use the calculator.' },
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Let me calculate that.' },
      { type: 'tool_use', id: 'toolu_01', name: 'calculator', input: { expression: '1234 * 5678' } },
    ],
  },
  {
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: '7006652' }],
  },
  { role: 'assistant', content: '1234 × 5678 = 7,006,652.' },
];

export const calculatorTool = {
  name: 'calculator',
  description: 'Evaluates an arithmetic expression.',
  input_schema: {
    type: 'object',
    properties: { expression: { type: 'string' } },
    required: ['expression'],
  },
};

/** Sum of an array of numbers. */
export const sum = (xs) => xs.reduce((a, b) => a + b, 0);

/**
 * A build-assistant conversation of `turns` rounds (question, tool call, tool output, answer) and
 * a last question: long enough to compact in a 10,000-token window at 40 turns.
 */
export function buildConversation(turns = 40) {
  const msgs = [{ role: 'system', content: 'You are a build assistant.' }];
  for (let i = 0; i < turns; i++) {
    msgs.push({ role: 'user', content: `Q${i}: why does module ${i} fail? ${'detail '.repeat(30)}` });
    msgs.push({ role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'run_tests', arguments: `{"module":"m${i}"}` } }] });
    msgs.push({ role: 'tool', tool_call_id: `c${i}`, content: `${'log line\n'.repeat(30)}result: module ${i} FAILED` });
    msgs.push({ role: 'assistant', content: `Module ${i} fails. ${'because '.repeat(30)}` });
  }
  msgs.push({ role: 'user', content: 'Which one do I fix first? 先修哪个？' });
  return msgs;
}
