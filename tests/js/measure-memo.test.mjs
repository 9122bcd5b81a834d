// guard.measure sends only new or changed messages into wasm (src/js/memo.js + src/guard/store.rs: docs/stored-calls.md).
// Whatever the host does to its message objects between calls, the metrics must be those of
// the conversation as it is now: countMessages (which always reads everything) is the reference.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ContextGuard, countMessages } from 'ctxguard';

function chat(turns) {
  const m = [{ role: 'system', content: 'You are a build assistant.' }];
  for (let i = 0; i < turns; i++) {
    m.push({ role: 'user', content: `Q${i}: why does module ${i} fail? 为什么失败？` });
    m.push({ role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'run_tests', arguments: JSON.stringify({ module: `m${i}` }) } }] });
    m.push({ role: 'tool', tool_call_id: `c${i}`, content: `${'log line\n'.repeat(20)}FAILED at step ${i}` });
    m.push({ role: 'assistant', content: [{ type: 'text', text: `Module ${i} fails at step ${i}.` }] });
  }
  return m;
}

const total = (msgs, opts = {}) => countMessages(msgs, { model: 'gpt-4o', ...opts }).total;

test('growing, streaming, editing and reordering in place: always the current count', () => {
  const guard = new ContextGuard({ model: 'gpt-4o' });
  const msgs = chat(20);
  assert.equal(guard.measure(msgs).usedTokens, total(msgs));
  // grown by one message (the usual turn)
  msgs.push({ role: 'user', content: 'And now?' });
  assert.equal(guard.measure(msgs).usedTokens, total(msgs));
  // a streaming reply: the same object, its content appended to in place
  const reply = { role: 'assistant', content: '' };
  msgs.push(reply);
  for (const delta of ['Start ', 'with ', 'module 0, ', '然后是模块 1。']) {
    reply.content += delta;
    assert.equal(guard.measure(msgs).usedTokens, total(msgs), reply.content);
  }
  // an edit deep inside a remembered message: a tool call's arguments, a text part
  msgs[2].tool_calls[0].function.arguments = JSON.stringify({ module: 'm0', verbose: true, filter: 'x'.repeat(200) });
  msgs[4].content[0].text = 'Module 0 fails at step 0, because the cache is stale.';
  assert.equal(guard.measure(msgs).usedTokens, total(msgs));
  // a key added, a key removed, a part turned into a string
  msgs[1].name = 'alice';
  delete msgs[1].name;
  msgs[8].content = 'plain text now';
  msgs[5].name = 'bob';
  assert.equal(guard.measure(msgs).usedTokens, total(msgs));
  // removed from the middle, reordered, the same object twice
  msgs.splice(10, 4);
  const twice = [...msgs, msgs[1]];
  assert.equal(guard.measure(twice).usedTokens, total(twice));
  assert.equal(guard.measure(msgs).usedTokens, total(msgs));
  // options change between calls
  const tools = [{ type: 'function', function: { name: 'run_tests', description: 'Run tests', parameters: { type: 'object', properties: { module: { type: 'string' } } } } }];
  assert.equal(guard.measure(msgs, { tools }).usedTokens, total(msgs, { tools }));
  assert.equal(guard.measure(msgs, { system: 'Be brief.' }).usedTokens, total(msgs, { system: 'Be brief.' }));
});

test('frozen messages, two guards on the same objects, a fresh guard: the same figures', () => {
  const msgs = chat(10).map((m) => Object.freeze(m));
  const a = new ContextGuard({ model: 'gpt-4o' });
  const b = new ContextGuard({ model: 'gpt-4o', contextWindow: 50000 });
  for (let i = 0; i < 3; i++) {
    assert.equal(a.measure(msgs).usedTokens, total(msgs));
    assert.equal(b.measure(msgs).usedTokens, total(msgs));
  }
  assert.equal(new ContextGuard({ model: 'gpt-4o' }).measure(msgs).usedTokens, total(msgs));
  assert.equal(b.measure(msgs).usableLimit, 50000 - b.budget.reservedOutputTokens);
});

test('a bad message among remembered ones is an error at its index, and the guard keeps working', () => {
  const guard = new ContextGuard({ model: 'gpt-4o' });
  const msgs = chat(5);
  guard.measure(msgs);
  const bad = [...msgs.slice(0, 5), { role: 'wizard', content: 'x' }, ...msgs.slice(5)];
  assert.throws(() => guard.measure(bad), (e) => e.name === 'CtxguardError' && e.code === 'INVALID_ROLE' && e.index === 5);
  // a remembered message made invalid in place
  const saved = msgs[3].content;
  msgs[3].content = 12;
  assert.throws(() => guard.measure(msgs), (e) => e.name === 'CtxguardError' && e.index === 3);
  msgs[3].content = saved;
  assert.equal(guard.measure(msgs).usedTokens, total(msgs));
  // a getter that throws is reported like the plain path does, not as a raw Error
  const trap = { role: 'user', get content() { throw new Error('getter'); } };
  assert.throws(() => guard.measure([...msgs, trap]), (e) => e.name === 'CtxguardError' && typeof e.code === 'string');
  assert.equal(guard.measure(msgs).usedTokens, total(msgs));
});

test('the input is never modified; values JSON would change are errors every time', () => {
  const guard = new ContextGuard({ model: 'gpt-4o' });
  const msgs = chat(3);
  const before = structuredClone(msgs);
  guard.measure(msgs);
  guard.measure(msgs);
  assert.deepEqual(msgs, before);
  // values JSON would change are errors (src/js/json.js), memo or not, and nothing is remembered
  const dynamic = { role: 'user', content: 'x', toJSON() { return { role: 'user', content: 'y' }; } };
  for (let i = 0; i < 2; i++) assert.throws(() => guard.measure([...msgs, dynamic]), { code: 'INVALID_MESSAGES', index: msgs.length });
  const dated = { role: 'user', content: [{ type: 'text', text: 'when?' }], sent: new Date(0) };
  for (let i = 0; i < 2; i++) assert.throws(() => guard.measure([...msgs, dated]), { code: 'INVALID_MESSAGES', index: msgs.length });
  assert.equal(guard.measure(msgs).usedTokens, total(msgs));
});

test('only new or changed messages cross into wasm', () => {
  const proto = ContextGuard.prototype;
  const inner = proto.measureStored;
  const sent = [];
  proto.measureStored = function (ids, fresh, ...rest) {
    sent.push(fresh.ids.length);
    return inner.call(this, ids, fresh, ...rest);
  };
  try {
    const guard = new ContextGuard({ model: 'gpt-4o' });
    const msgs = chat(50);
    guard.measure(msgs);
    msgs.push({ role: 'user', content: 'one more' });
    guard.measure(msgs);
    msgs[7].content = 'edited';
    guard.measure(msgs);
    guard.measure(msgs);
    assert.deepEqual(sent, [msgs.length - 1, 1, 1, 0]);
  } finally {
    proto.measureStored = inner;
  }
});

test('the store decides what it keeps: a conversation unused for two calls is refused once, then sent in full', () => {
  const proto = ContextGuard.prototype;
  const inner = proto.measureStored;
  const calls = [];
  proto.measureStored = function (ids, fresh, ...rest) {
    const r = inner.call(this, ids, fresh, ...rest);
    calls.push([fresh.ids.length, r === undefined ? 'refused' : 'ok']);
    return r;
  };
  try {
    const guard = new ContextGuard({ model: 'gpt-4o' });
    const a = chat(5);
    const b = chat(4);
    guard.measure(a);
    guard.measure(b);
    // unused by one call: still held
    assert.equal(guard.measure(a).usedTokens, total(a));
    guard.measure(b);
    guard.measure(b);
    // unused by two calls: the store dropped it; the call is refused, then sent in full
    assert.equal(guard.measure(a).usedTokens, total(a));
    assert.equal(guard.measure(a).usedTokens, total(a));
    assert.deepEqual(calls, [[a.length, 'ok'], [b.length, 'ok'], [0, 'ok'], [0, 'ok'], [0, 'ok'], [0, 'refused'], [a.length, 'ok'], [0, 'ok']]);
  } finally {
    proto.measureStored = inner;
  }
});

test('AI SDK messages (read in context) take the plain path and stay right', () => {
  const guard = new ContextGuard({ model: 'gpt-4o', format: 'ai-sdk' });
  const msgs = [
    { role: 'user', content: 'Find the bug.' },
    { role: 'assistant', content: [{ type: 'reasoning', text: 'Thinking about the parser. '.repeat(20) }, { type: 'text', text: 'Looking.' }] },
  ];
  const first = guard.measure(msgs).usedTokens;
  assert.equal(first, countMessages(msgs, { model: 'gpt-4o', format: 'ai-sdk' }).total);
  // A new user message: the reasoning before it is no longer counted.
  msgs.push({ role: 'user', content: 'And?' });
  const second = guard.measure(msgs).usedTokens;
  assert.equal(second, countMessages(msgs, { model: 'gpt-4o', format: 'ai-sdk' }).total);
  assert.ok(second < first + 10, `${second} vs ${first}`);
});
