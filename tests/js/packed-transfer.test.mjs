// The stored path sends its fresh messages into wasm packed (src/js/memo.js `pack`, src/binding/packed.rs):
// a JSON skeleton whose long strings (and strings starting with U+0000) are placeholders, plus
// those strings as UTF-8 bytes. Whatever the data, the results must be exactly those of sending
// the messages as an array (read through JSON.stringify, as before) and of the plain path;
// anything the packer is not sure about (a non-finite number, a Date, a lone surrogate, ...)
// must go as an array, with the same error code, message and index as before.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ContextGuard } from 'ctxguard';
import { deepFreeze } from './helpers.mjs';

const STORED = ['measureStored', 'guardSourcesStored', 'prepareStored'];
const proto = ContextGuard.prototype;
const inner = Object.fromEntries(STORED.map((m) => [m, proto[m]]));

/** Guards whose stored calls get their fresh messages as an array (today's transfer). */
const asArray = new WeakSet();
/** The messages of the call in progress (to rebuild the array form) and what each call sent. */
let current = null;
const log = [];

/** The values a packed transfer stands for, decoded independently of wasm. */
function unpackInJs({ bytes, lens }) {
  const dec = new TextDecoder('utf-8', { fatal: true });
  let at = lens[0];
  let next = 1;
  const values = JSON.parse(dec.decode(bytes.subarray(0, lens[0])), (k, v) => {
    if (v !== '\u0000') return v;
    const s = dec.decode(bytes.subarray(at, at + lens[next]));
    at += lens[next++];
    return s;
  });
  assert.equal(next, lens.length, 'every string has its placeholder');
  assert.equal(at, bytes.length, 'the lengths cover the bytes');
  return values;
}

for (const name of STORED) {
  proto[name] = function (ids, fresh, ...rest) {
    const packed = !Array.isArray(fresh.messages);
    log.push({ name, packed, n: fresh.ids.length });
    if (packed) {
      // What the packer sent is what JSON makes of the fresh messages.
      const msgs = Array.from(fresh.at, (i) => current[i]);
      assert.deepEqual(unpackInJs(fresh.messages), JSON.parse(JSON.stringify(msgs)));
      if (asArray.has(this)) fresh = { ...fresh, messages: msgs };
    }
    return inner[name].call(this, ids, fresh, ...rest);
  };
}

class Plain {}
/** The same messages, read by the plain path (top-level objects are class instances). */
const plainOf = (msgs) => msgs.map((m) => (m !== null && typeof m === 'object' && !Array.isArray(m) ? Object.assign(new Plain(), m) : m));

/** JSON text of a result with its timings zeroed (the only field that may differ). */
const canonical = (r) => JSON.stringify(r, (k, v) => (k === 'durationMs' ? 0 : v));

async function outcome(f) {
  try {
    return { ok: canonical(await f()) };
  } catch (e) {
    return { err: { name: e.name, code: e.code, index: e.index, message: e.message } };
  }
}

/**
 * Run `method` on a packed guard, an array-transfer guard and a plain-path guard (same config);
 * all three must agree. Returns how the packed guard's call sent its messages.
 */
async function agree(config, msgs, method, opts = {}) {
  const packed = new ContextGuard(config);
  const array = new ContextGuard(config);
  asArray.add(array);
  const plain = new ContextGuard(config);
  const before = JSON.stringify(msgs);
  const run = (g, m) => outcome(() => {
    current = m;
    return g[method](m, opts);
  });
  log.length = 0;
  const a = await run(packed, msgs);
  const sent = log.slice();
  const b = await run(array, msgs);
  const c = await run(plain, plainOf(msgs));
  current = null;
  assert.equal(JSON.stringify(msgs), before, 'the input was modified');
  assert.deepEqual(a, b, `${method}: packed and array transfers differ`);
  assert.deepEqual(a, c, `${method}: the packed transfer and the plain path differ`);
  return { sent, result: a };
}

const long = (s, n = 3) => s.repeat(n);

/** OpenAI-format messages holding every kind of string the packer must get right. */
function openaiOdd() {
  return [
    { role: 'system', content: 'You are terse. ' + long('ASCII only, long enough to go out of line. ') },
    { role: 'user', content: '短い' },
    { role: 'user', content: long('日本語と中文的文本，长长的。') },
    { role: 'user', content: long('emoji 🎉🧪 and astral 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ') + '👩‍👩‍👧' },
    { role: 'user', content: '🎉'.repeat(12) }, // 24 UTF-16 units, 48 bytes: just at the threshold
    { role: 'user', content: 'é'.repeat(23) },
    { role: 'user', content: 'quotes " and \\ backslashes \\" and "\\\\", tabs\tnewlines\n\r and \u0001\u001f\u007f controls, long' },
    { role: 'user', content: 'q"\\\n' },
    { role: 'user', content: '\u0000' },
    { role: 'user', content: '\u0000abc' },
    { role: 'user', content: long('\u0000 a NUL first, then a long text. ') },
    { role: 'user', content: 'NUL \u0000 inside' },
    { role: 'user', content: '' },
    { role: 'user', content: [{ type: 'text', text: '' }, { type: 'text', text: 'x' }, { type: 'text', text: long('a longer part of text ') }] },
    { role: 'user', content: [{ type: 'text', text: '\\u0000' }, { type: 'text', text: '"\\u0000"' }] },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_0', type: 'function', function: { name: 'run', arguments: JSON.stringify({ cmd: 'ls -la', nested: { deep: ['\u0000', '"', '日本', '🎉'] } }) } },
        { id: 'call_1', type: 'function', function: { name: 'read', arguments: '{}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_0', content: long('total 42\ndrwxr-xr-x  2 root root 4096 .\n', 20) },
    { role: 'tool', tool_call_id: 'call_1', content: '' },
    { role: 'user', content: 'keys that look like placeholders', name: 'bob', '\u0000': '\u0000', '"\\u0000"': 'x', '\u0000long key that is long enough': long('value ') },
    { role: 'user', content: 'numbers', extra: { n: [0, -0, 1.5, -2e-7, 1e21, 2 ** 53 - 1, -(2 ** 53 - 1), 123456789012, Number.MAX_VALUE, Number.MIN_VALUE], b: [true, false, null], e: [[], {}, [[]], { a: {} }] } },
    { role: 'user', content: 'undefined fields are dropped', gone: undefined, nested: { gone: undefined, kept: 1 } },
    { role: 'user', content: 'integer-like keys come first', extra: { b: 1, 2: 'two', a: 3, 1: 'one' } },
    { role: 'assistant', content: [{ type: 'text', text: long('reply part ') }], refusal: null },
  ];
}

/** Anthropic-format messages with the same kinds of strings. */
function anthropicOdd() {
  return [
    { role: 'user', content: long('Что в файле? 文件里有什么？🎉 ') },
    { role: 'assistant', content: [{ type: 'text', text: 'Reading "it" \\ now.' }, { type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'f\u0000', list: ['', '\u0000', long('in input ')], n: -0 } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: long('line\twith\ttabs and "quotes"\n', 30) }, { type: 'text', text: '\u0000and?', cache_control: { type: 'ephemeral' } }] },
    { role: 'assistant', content: [{ type: 'text', text: '' }, { type: 'text', text: long('𝔘𝔫𝔦𝔠𝔬𝔡𝔢 answer ') }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'nested text' }, { type: 'text', text: long('nested long ') }] }] },
    { role: 'user', content: 'short', '\u0000': 'placeholder-like key' },
  ];
}

test('measure, guardSources and prepare: packed equals the array transfer and the plain path (OpenAI)', async () => {
  const config = { model: 'gpt-4o' };
  const msgs = deepFreeze(openaiOdd());
  for (const method of ['measure', 'guardSources', 'prepare']) {
    const { sent, result } = await agree(config, msgs, method);
    assert.ok(result.ok, JSON.stringify(result.err));
    assert.deepEqual(sent.map((s) => s.packed), [true], `${method} was not packed`);
  }
});

test('measure, guardSources and prepare: packed equals the array transfer and the plain path (Anthropic)', async () => {
  const config = { model: 'claude-sonnet-4-5' };
  const msgs = deepFreeze(anthropicOdd());
  for (const method of ['measure', 'guardSources', 'prepare']) {
    const { sent, result } = await agree(config, msgs, method, { system: long('A long system prompt. ') });
    assert.ok(result.ok, JSON.stringify(result.err));
    assert.deepEqual(sent.map((s) => s.packed), [true], `${method} was not packed`);
  }
});

test('every message alone, and the conversation growing: the same metrics as the array transfer', () => {
  for (const [config, all] of [[{ model: 'gpt-4o' }, openaiOdd()], [{ model: 'claude-sonnet-4-5' }, anthropicOdd()]]) {
    const packed = new ContextGuard(config);
    const array = new ContextGuard(config);
    asArray.add(array);
    for (let i = 0; i < all.length; i++) {
      for (const msgs of [[all[i]], all.slice(0, i + 1)]) {
        current = msgs;
        log.length = 0;
        const a = canonical(packed.measure(msgs));
        assert.ok(log.every((s) => s.packed || s.n === 0));
        assert.equal(a, canonical(array.measure(msgs)), `message ${i}`);
        assert.equal(a, canonical(new ContextGuard(config).measure(plainOf(msgs))), `message ${i}, plain path`);
      }
    }
    current = null;
  }
});

test('what the packer is not sure about goes as an array, with the same error code, message and index', async () => {
  const base = openaiOdd().slice(0, 4);
  const lone = '\uD800 a lone surrogate in a long enough string';
  const cases = [
    ['NaN', { role: 'user', content: 'x', extra: { n: NaN } }, 'INVALID_MESSAGES'],
    ['Infinity in an array', { role: 'user', content: 'x', extra: [1, -Infinity] }, 'INVALID_MESSAGES'],
    ['undefined in an array', { role: 'user', content: 'x', extra: [1, undefined] }, 'INVALID_MESSAGES'],
    ['a hole in an array', { role: 'user', content: 'x', extra: [1, , 2] }, 'INVALID_MESSAGES'], // eslint-disable-line no-sparse-arrays
    ['a Date', { role: 'user', content: [{ type: 'text', text: 'when?' }], sent: new Date(0) }, 'INVALID_MESSAGES'],
    ['a Map', { role: 'user', content: 'x', extra: new Map() }, 'INVALID_MESSAGES'],
    ['a toJSON method', { role: 'user', content: 'x', extra: { toJSON: () => 'y' } }, 'INVALID_MESSAGES'],
    ['a lone surrogate in a value', { role: 'user', content: lone }, null],
    ['a lone surrogate in a short value', { role: 'user', content: 'a\uDFFF' }, null],
    ['a lone surrogate in a key', { role: 'user', content: 'x', ['k\uDC00']: 1 }, null],
    ['a bad role (read in wasm, after the transfer)', { role: 'robot', content: 'x' }, 'INVALID_ROLE'],
    ['a string message', 'just a string', 'INVALID_MESSAGE'],
  ];
  for (const [what, bad, code] of cases) {
    const msgs = [...base, bad, base[1]];
    for (const method of ['measure', 'guardSources', 'prepare']) {
      const { sent, result } = await agree({ model: 'gpt-4o' }, msgs, method);
      if (code === null) assert.ok(result.ok, `${what}: ${JSON.stringify(result.err)}`);
      else {
        assert.equal(result.err?.code, code, `${what} (${method})`);
        assert.equal(result.err.index, 4, `${what} (${method})`);
      }
      // Errors found in wasm after a packed transfer are fine; the others never pack.
      const packed = sent.some((s) => s.packed);
      if (what.startsWith('a bad role')) assert.ok(packed, what);
      else assert.ok(!packed, `${what} was packed (${method})`);
    }
  }
});

test('an inherited toJSON makes every call send its messages as an array', () => {
  const msgs = openaiOdd();
  const guard = new ContextGuard({ model: 'gpt-4o' });
  Object.defineProperty(Object.prototype, 'toJSON', { value: function () { return this; }, configurable: true, writable: true });
  try {
    current = msgs;
    log.length = 0;
    try {
      guard.measure(msgs);
    } catch {
      // whatever the array transfer makes of it
    }
    assert.ok(log.every((s) => !s.packed));
  } finally {
    delete Object.prototype.toJSON;
    current = null;
  }
});

test('only new or changed messages are packed; an edit in place is sent again', () => {
  const guard = new ContextGuard({ model: 'gpt-4o' });
  const array = new ContextGuard({ model: 'gpt-4o' });
  asArray.add(array);
  const msgs = openaiOdd();
  const step = () => {
    current = msgs;
    log.length = 0;
    const a = canonical(guard.measure(msgs));
    const sent = log.slice();
    assert.equal(a, canonical(array.measure(msgs)));
    current = null;
    return sent.map((s) => [s.packed, s.n]);
  };
  assert.deepEqual(step(), [[true, msgs.length]]);
  msgs.push({ role: 'user', content: long('one more, long 🎉 ') });
  assert.deepEqual(step(), [[true, 1]]);
  msgs[2].content += ' 追加';
  assert.deepEqual(step(), [[true, 1]]);
  assert.deepEqual(step(), [[false, 0]]);
});
