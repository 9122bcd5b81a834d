// The JS boundary (docs/design.md, "Bad input"): every export gets every wrong shape JS can send. Each call either
// returns (where the shape is documented as accepted: absent options, classifyProviderError on
// anything) or throws a real Error named CtxguardError with a stable code from the documented
// list — the same code every time — and the module keeps working afterwards (no poisoned
// instance: a normal countTokens and measure succeed after every row).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as cg from 'ctxguard';

const CODES = new Set([
  'INVALID_OPTIONS', 'INVALID_MESSAGES', 'INVALID_MESSAGE', 'INVALID_ROLE', 'INVALID_CONTENT_PART', 'INVALID_TOOL',
  'UNKNOWN_ENCODING', 'UNKNOWN_FORMAT', 'UNKNOWN_MODEL', 'INVALID_BUDGET', 'INVALID_TEXT', 'UNKNOWN_ATTACHMENT',
  'LATEST_MESSAGE_TOO_LARGE', 'INTERNAL',
]);

const cyclic = { role: 'user', content: 'hi' };
cyclic.self = cyclic;
const cyclicArray = [];
cyclicArray.push(cyclicArray);
const trap = () => { throw new Error('proxy trap'); };
const throwingProxy = new Proxy({}, { get: trap, has: trap, ownKeys: trap, getOwnPropertyDescriptor: trap, getPrototypeOf: trap });
const arrayProxy = new Proxy([{ role: 'user', content: 'hi' }], { get: (t, k) => (k === 'length' ? 1e9 : Reflect.get(t, k)) });
const getterThrows = { get role() { throw new Error('getter'); }, content: 'x' };

/** Every wrong shape, by name. */
export const BAD = {
  undefined: undefined,
  null: null,
  number: 42,
  NaN: NaN,
  negative: -1,
  infinity: Infinity,
  boolean: true,
  bigint: 10n,
  symbol: Symbol('s'),
  function: () => 'x',
  string: 'just a string',
  loneSurrogate: 'a\uD800b\uDFFF',
  emptyObject: {},
  cyclic,
  cyclicArray,
  hugeArray: new Array(100_000).fill({ role: 'user', content: 'x' }),
  hugeJunkArray: new Array(100_000).fill(7),
  throwingProxy,
  arrayProxy,
  getterThrows,
  date: new Date(0),
  map: new Map([['a', 'b']]),
  nullProto: Object.create(null),
};

const hi = [{ role: 'user', content: 'hi' }];
const guard = () => new cg.ContextGuard({ model: 'gpt-4o' });
const turns = [{ id: 't0', messages: hi }];
const settleAnswer = async () => ({ session_state: { summary: 's', key_facts: [], decisions: [], plan: null, open_questions: [] }, memory_entries: [], reflections: [], learnings: [] });
const savedCalibration = (() => {
  const g = guard();
  g.observeUsage({ messages: hi, usage: { prompt_tokens: 9 } });
  return g.calibration;
})();

/** Every field of `GuardConfig` in index.d.ts (checked against it below). */
const CONFIG_FIELDS = [
  'model', 'contextWindow', 'maxOutputTokens', 'reservedOutputTokens', 'economicBudget', 'triggerRatio', 'targetRatio',
  'format', 'encoding', 'toolOutputLimit', 'toolOutputLimits', 'toolOutputTotal', 'attachmentBudget', 'retrievalTool',
  'checkpointKey', 'pricing', 'calibration', 'strategy', 'clearToolOutputs', 'ahead', 'aheadRatio', 'recentTailTokens', 'breaker',
  'edits', 'cache',
];

/**
 * Each export and argument position. `kind` says what the wrong shapes must get:
 * text → INVALID_TEXT, options → INVALID_OPTIONS (absent options are fine), messages →
 * INVALID_MESSAGES / INVALID_MESSAGE, any → some documented code or a normal return.
 */
const CALLS = [
  ['countTokens(x)', 'text', (x) => cg.countTokens(x)],
  ['countTokens(text, x)', 'options', (x) => cg.countTokens('hi', x)],
  ['countTokens(text, {encoding: x})', 'any', (x) => cg.countTokens('hi', { encoding: x })],
  ['countMessages(x)', 'messages', (x) => cg.countMessages(x)],
  ['countMessages(msgs, x)', 'options', (x) => cg.countMessages(hi, x)],
  ['countMessages([x])', 'any', (x) => cg.countMessages([x])],
  ['countMessages([{content: x}])', 'any', (x) => cg.countMessages([{ role: 'user', content: x }])],
  ['countMessages([{role: x}])', 'any', (x) => cg.countMessages([{ role: x, content: 'hi' }])],
  ['countMessages(msgs, {tools: x})', 'any', (x) => cg.countMessages(hi, { tools: x })],
  ['modelInfo(x)', 'text', (x) => cg.modelInfo(x)],
  ['compactToolOutput(x)', 'text', (x) => cg.compactToolOutput(x)],
  ['compactToolOutput(text, x)', 'options', (x) => cg.compactToolOutput('t', x)],
  ['compactToolOutput(text, {limit: x})', 'any', (x) => cg.compactToolOutput('t', { limit: x })],
  ['previewAttachment(x)', 'text', (x) => cg.previewAttachment(x)],
  ['previewAttachment(text, x)', 'options', (x) => cg.previewAttachment('t', x)],
  ['readAttachmentTool(x)', 'options', (x) => cg.readAttachmentTool(x)],
  ['readAttachment(x, {id})', 'any', (x) => cg.readAttachment(x, { id: 'a' })],
  ['readAttachment(source, x)', 'any', (x) => cg.readAttachment({ a: 'text' }, x)],
  ['readAttachment(source, {id, offset: x})', 'any', (x) => cg.readAttachment({ a: 'text' }, { id: 'a', offset: x })],
  ['readAttachment(source, {id: x})', 'any', (x) => cg.readAttachment({ a: 'text' }, { id: x })],
  ['readAttachment(source, {id, limit: x})', 'any', (x) => cg.readAttachment({ a: 'text' }, { id: 'a', limit: x })],
  ['new ContextGuard(x)', 'any', (x) => new cg.ContextGuard(x)],
  ['new ContextGuard({model: x})', 'any', (x) => new cg.ContextGuard({ model: x })],
  ...CONFIG_FIELDS.filter((f) => f !== 'model').map((f) => [`new ContextGuard({model, ${f}: x})`, 'any', (x) => new cg.ContextGuard({ model: 'gpt-4o', [f]: x })]),
  ['guard.measure(x)', 'messages', (x) => guard().measure(x)],
  ['guard.measure(msgs, x)', 'options', (x) => guard().measure(hi, x)],
  ['guard.guardSources(x)', 'messages', (x) => guard().guardSources(x)],
  ['guard.guardSources(msgs, x)', 'options', (x) => guard().guardSources(hi, x)],
  ['guard.observeUsage(x)', 'required', (x) => guard().observeUsage(x)],
  ['guard.observeUsage({messages: x, usage})', 'any', (x) => guard().observeUsage({ messages: x, usage: { prompt_tokens: 9 } })],
  ['guard.observeUsage({messages, usage: x})', 'any', (x) => guard().observeUsage({ messages: hi, usage: x })],
  ['guard.observeUsage({messages, usage: {prompt_tokens: x}})', 'any', (x) => guard().observeUsage({ messages: hi, usage: { prompt_tokens: x } })],
  ['guard.observeUsage({messages, usage: {input_tokens: x}})', 'any', (x) => guard().observeUsage({ messages: hi, usage: { input_tokens: x } })],
  ['guard.calibration = x', 'required', (x) => { guard().calibration = x; }],
  ['guard.restore(x)', 'any', (x) => guard().restore(x)],
  ['guard.restore({messages: x})', 'any', (x) => guard().restore({ messages: x })],
  ['guard.resetBreaker(x)', 'any', (x) => guard().resetBreaker(x)],
  ['guard.calibration = {...saved, models: x}', 'any', (x) => { guard().calibration = { ...savedCalibration, models: x }; }],
  ['guard.calibration = {...saved, models: {m: x}}', 'any', (x) => { guard().calibration = { ...savedCalibration, models: { 'gpt-4o': x } }; }],
  ['resolveHistory(x)', 'messages', (x) => cg.resolveHistory(x)],
  ['resolveHistory(turns, x)', 'options', (x) => cg.resolveHistory(turns, x)],
  ['resolveHistory([x])', 'any', (x) => cg.resolveHistory([x])],
  ['resolveHistory([{id: x, messages}])', 'any', (x) => cg.resolveHistory([{ id: x, messages: hi }])],
  ['resolveHistory([{id, messages: x}])', 'any', (x) => cg.resolveHistory([{ id: 't0', messages: x }])],
  ['resolveHistory([{id, messages, status: x}])', 'any', (x) => cg.resolveHistory([{ id: 't0', messages: hi, status: x }])],
  ['resolveHistory(turns, {limit: x})', 'any', (x) => cg.resolveHistory(turns, { limit: x })],
  ['resolveHistory(turns, {beforeMessageId: x})', 'any', (x) => cg.resolveHistory(turns, { beforeMessageId: x })],
  ['resolveHistory(turns, {checkpointKey: x})', 'any', (x) => cg.resolveHistory(turns, { checkpointKey: x })],
  ['resolveHistory(turns, {format: x})', 'any', (x) => cg.resolveHistory(turns, { format: x })],
  ['chainPreModelHooks(x)', 'required', (x) => cg.chainPreModelHooks(x)],
  ['chainPreModelHooks([x])', 'any', (x) => cg.chainPreModelHooks([x])],
];

/** Calls that return a Promise: a wrong shape must reject (never throw synchronously). */
const ASYNC_CALLS = [
  ['guard.settle(x)', 'messages', (g, x) => g.settle(x, { summarize: settleAnswer })],
  ['guard.settle(msgs, x)', 'options', (g, x) => g.settle(hi, x)],
  ['guard.settle(msgs, {summarize: x})', 'any', (g, x) => g.settle(hi, { summarize: x, timeoutMs: 200 })],
  ['guard.settle(msgs, {timeoutMs: x})', 'any', (g, x) => g.settle(hi, { summarize: settleAnswer, timeoutMs: x })],
  ['guard.settle(msgs, {system: x})', 'any', (g, x) => g.settle(hi, { summarize: settleAnswer, system: x })],
  ['chainPreModelHooks([() => x])(input)', 'any', (g, x) => cg.chainPreModelHooks([() => x])({ messages: hi })],
  ['chainPreModelHooks([identity])(x)', 'any', (g, x) => cg.chainPreModelHooks([(input) => input])(x)],
  ['chainPreModelHooks([prepare])(x)', 'any', (g, x) => cg.chainPreModelHooks([async (input) => ({ messages: (await g.prepare(input.messages)).messages })])({ messages: x })],
];

const ACCEPTED_OPTIONS = new Set(['undefined', 'null', 'emptyObject', 'map', 'nullProto']);

function outcome(fn) {
  try {
    fn();
    return { ok: true };
  } catch (err) {
    return { ok: false, err };
  }
}

function assertCtxguardError(err, where) {
  assert.ok(err instanceof Error, `${where}: threw a non-Error: ${typeof err} ${String(err)}`);
  assert.equal(err.name, 'CtxguardError', `${where}: ${err.name}: ${err.message}`);
  assert.ok(CODES.has(err.code), `${where}: undocumented code ${err.code}`);
  assert.equal(typeof err.message, 'string');
  assert.ok(err.message.length > 0, `${where}: empty message`);
}

function assertModuleWorks(where) {
  assert.equal(cg.countTokens('hello world'), 2, `${where}: module poisoned`);
  const g = guard();
  assert.equal(g.measure(hi).usedTokens, 3 + 1 + 1 + 3, `${where}: measure poisoned`);
  g.free();
}

let rows = 0;
let typoRows = 0;
/**
 * One row: two calls with the same wrong shape end the same way — a normal result, or a
 * CtxguardError with the same documented code, the one `kind` asks for — and the module still
 * works afterwards.
 */
function checkRow(where, kind, badName, first, second) {
  rows += 1;
  assert.equal(first.ok, second.ok, `${where}: not deterministic`);
  if (!first.ok) {
    assertCtxguardError(first.err, where);
    assert.equal(second.err.code, first.err.code, `${where}: the code is not stable`);
  }
  if (kind === 'text' && badName !== 'loneSurrogate' && badName !== 'string') {
    assert.equal(first.err?.code, 'INVALID_TEXT', where);
  }
  if (kind === 'options' && !ACCEPTED_OPTIONS.has(badName)) {
    assert.equal(first.err?.code, 'INVALID_OPTIONS', where);
  }
  if (kind === 'messages' && !['hugeArray', 'arrayProxy'].includes(badName)) {
    assert.ok(['INVALID_MESSAGES', 'INVALID_MESSAGE'].includes(first.err?.code), `${where}: ${first.err?.code}`);
  }
  if (kind === 'required') assert.ok(!first.ok, `${where}: accepted`);
  assertModuleWorks(where);
}

for (const [name, kind, call] of CALLS) {
  test(`boundary: ${name}`, () => {
    for (const [badName, value] of Object.entries(BAD)) {
      const where = `${name} with ${badName}`;
      checkRow(where, kind, badName, outcome(() => call(value)), outcome(() => call(value)));
    }
  });
}

for (const [name, kind, call] of ASYNC_CALLS) {
  test(`boundary: ${name}`, async () => {
    for (const [badName, value] of Object.entries(BAD)) {
      const where = `${name} with ${badName}`;
      const g = guard();
      const settled = [];
      for (let i = 0; i < 2; i += 1) {
        let p;
        try {
          p = call(g, value);
        } catch (err) {
          assert.fail(`${where}: threw synchronously instead of rejecting: ${err?.code} ${err?.message}`);
        }
        assert.ok(p instanceof Promise, `${where}: not a Promise`);
        settled.push(await p.then((v) => ({ ok: true, v }), (err) => ({ ok: false, err })));
      }
      g.free();
      checkRow(where, kind, badName, ...settled);
    }
  });
}

test('boundary: the config fields in the table are exactly GuardConfig in index.d.ts', async () => {
  const { readFileSync } = await import('node:fs');
  const dts = readFileSync(new URL('../../src/js/index.d.ts', import.meta.url), 'utf8');
  const body = /export interface GuardConfig \{([\s\S]*?)\n\}/.exec(dts)[1];
  const declared = [...body.matchAll(/^ {2}([A-Za-z]+)\??:/gm)].map((m) => m[1]);
  assert.deepEqual([...declared].sort(), [...CONFIG_FIELDS].sort());
});

test('boundary: classifyProviderError never throws and always answers a known kind', () => {
  for (const [badName, value] of Object.entries(BAD)) {
    const r = cg.classifyProviderError(value);
    assert.ok(['context_overflow', 'payload_too_large', 'rate_limit', 'other'].includes(r.kind), badName);
    assert.equal(typeof r.compactAndRetry, 'boolean');
    for (const wrap of [{ status: value }, { status: 400, message: value }, { status: 400, body: value }, { error: value }]) {
      assert.doesNotThrow(() => cg.classifyProviderError(wrap), badName);
    }
  }
  assertModuleWorks('classifyProviderError');
});

test('boundary: knownModels, version and memoryStats ignore extra arguments', () => {
  for (const value of Object.values(BAD)) {
    assert.ok(cg.knownModels(value).length > 0);
    assert.equal(typeof cg.version(value), 'string');
    assert.ok(cg.memoryStats(value).wasmBytes > 0);
  }
  assertModuleWorks('no-arg exports');
});

test('boundary: config and option typos fail loudly', () => {
  const typo = (fn) => {
    const { ok, err } = outcome(fn);
    assert.ok(!ok, `accepted: ${fn}`);
    assertCtxguardError(err, String(fn));
    return err.code;
  };
  assert.equal(typo(() => new cg.ContextGuard({ modle: 'gpt-4o' })), 'INVALID_OPTIONS');
  assert.equal(typo(() => new cg.ContextGuard({ model: 'gpt-4o', contextWindow: '128000' })), 'INVALID_OPTIONS');
  assert.equal(typo(() => new cg.ContextGuard({ model: 'gpt-4o', triggerRatio: 2 })), 'INVALID_BUDGET');
  assert.equal(typo(() => new cg.ContextGuard({ model: 'gpt-4o', toolOutputLimt: 10 })), 'INVALID_OPTIONS');
  assert.equal(typo(() => guard().guardSources(hi, { emergancy: true })), 'INVALID_OPTIONS');
  assert.equal(typo(() => cg.compactToolOutput('x', { limt: 5 })), 'INVALID_OPTIONS');
  assert.equal(typo(() => cg.readAttachment({ a: 'x' }, { id: 'a', ofset: 1 })), 'INVALID_OPTIONS');
  assertModuleWorks('typos');
});

/** Plausible misspellings of a field name: snake_case, all lower case, a letter dropped or doubled, a plural. */
function typosOf(field, valid) {
  const out = new Set([
    field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`),
    field.toLowerCase(),
    field.slice(0, -1),
    `${field}s`,
    field.slice(0, 2) + field.slice(3),
    field.slice(0, 3) + field[3] + field.slice(3),
  ]);
  return [...out].filter((t) => t !== field && !valid.includes(t));
}

test('boundary: every config field and option name, misspelt, fails loudly', async () => {
  const bags = {
    'new ContextGuard': [CONFIG_FIELDS, (o) => new cg.ContextGuard({ model: 'gpt-4o', ...o })],
    countTokens: [['encoding', 'model'], (o) => cg.countTokens('hi', o)],
    countMessages: [['model', 'encoding', 'format', 'system', 'tools'], (o) => cg.countMessages(hi, o)],
    'guard.measure': [['system', 'tools'], (o) => guard().measure(hi, o)],
    'guard.guardSources': [['system', 'tools', 'emergency', 'onTrace'], (o) => guard().guardSources(hi, o)],
    'guard.observeUsage': [['messages', 'system', 'tools', 'usage'], (o) => guard().observeUsage({ messages: hi, usage: { prompt_tokens: 9 }, ...o })],
    resolveHistory: [['limit', 'beforeMessageId', 'format', 'checkpointKey'], (o) => cg.resolveHistory(turns, o)],
    readAttachment: [['id', 'offset', 'limit', 'encoding', 'model'], (o) => cg.readAttachment({ a: 'x' }, { id: 'a', ...o })],
    compactToolOutput: [['limit', 'encoding', 'model', 'emergency', 'retrievalTool', 'callId'], (o) => cg.compactToolOutput('x', o)],
    previewAttachment: [['limit', 'encoding', 'model', 'id', 'name', 'type'], (o) => cg.previewAttachment('x', o)],
    readAttachmentTool: [['format'], (o) => cg.readAttachmentTool(o)],
  };
  const asyncBags = {
    'guard.prepare': [['system', 'tools', 'force', 'guidance', 'timeoutMs', 'heartbeatMs', 'summaryMaxTokens', 'retainUserTokens', 'sessionState', 'summarize', 'onProgress', 'onTrace', 'logger', 'signal'], (o) => guard().prepare(hi, o)],
    'guard.settle': [['system', 'tools', 'timeoutMs', 'heartbeatMs', 'summarize', 'onProgress', 'logger', 'signal'], (o) => guard().settle(hi, o)],
  };
  let tried = 0;
  for (const [name, [fields, call]] of Object.entries(bags)) {
    for (const f of fields) {
      for (const t of typosOf(f, fields)) {
        const { ok, err } = outcome(() => call({ [t]: 1 }));
        assert.ok(!ok, `${name}: ${t} (for ${f}) was accepted`);
        assertCtxguardError(err, `${name} ${t}`);
        assert.equal(err.code, 'INVALID_OPTIONS', `${name}: ${t}: ${err.message}`);
        tried += 1;
      }
    }
  }
  for (const [name, [fields, call]] of Object.entries(asyncBags)) {
    for (const f of fields) {
      for (const t of typosOf(f, fields)) {
        await assert.rejects(call({ [t]: 1 }), (e) => e.name === 'CtxguardError' && e.code === 'INVALID_OPTIONS', `${name}: ${t}`);
        tried += 1;
      }
    }
  }
  typoRows = tried;
  rows += tried;
  assertModuleWorks('generated typos');
});

test('boundary: prepare rejects wrong shapes with a CtxguardError and resolves otherwise', async () => {
  const long = [{ role: 'system', content: 's' }];
  for (let i = 0; i < 30; i += 1) long.push({ role: 'user', content: `q${i} ${'x '.repeat(200)}` }, { role: 'assistant', content: 'a' });
  long.push({ role: 'user', content: 'last' });
  const cases = [];
  for (const [badName, value] of Object.entries(BAD)) {
    cases.push([`prepare(${badName})`, (g) => g.prepare(value)]);
    cases.push([`prepare(msgs, ${badName})`, (g) => g.prepare(long, value)]);
    cases.push([`prepare(msgs, {summarize: ${badName}})`, (g) => g.prepare(long, { force: true, summarize: value, timeoutMs: 200 })]);
    cases.push([`prepare(msgs, {timeoutMs: ${badName}})`, (g) => g.prepare(long, { force: true, timeoutMs: value, summarize: async () => 'ok' })]);
  }
  cases.push(['prepare typo', (g) => g.prepare(long, { sumarize: async () => 'x' })]);
  for (const [where, run] of cases) {
    const g = new cg.ContextGuard({ model: 'gpt-4o', contextWindow: 4000, reservedOutputTokens: 500 });
    let settled;
    try {
      const p = run(g);
      assert.ok(p instanceof Promise, `${where}: prepare must return a Promise (no synchronous throw)`);
      settled = { ok: true, value: await p };
    } catch (err) {
      settled = { ok: false, err };
    }
    if (!settled.ok) assertCtxguardError(settled.err, where);
    else assert.ok(Array.isArray(settled.value.messages), where);
    g.free();
    rows += 1;
    assertModuleWorks(where);
  }
});


// Wrong types that JSON would silently drop or change (found by the table above): the options
// check rejects them at the top level of an options bag; inside messages and nested option data
// the data check (src/js/json.js) rejects them.
test('boundary: non-string encoding is rejected', () => {
  for (const v of [NaN, Symbol('s'), () => 'o200k_base']) {
    assert.throws(() => cg.countTokens('hi', { encoding: v }), { name: 'CtxguardError', code: 'INVALID_OPTIONS' });
  }
});
test('boundary: non-string model is rejected', () => {
  for (const v of [NaN, Symbol('s'), () => 'gpt-4o', new Date(0)]) {
    assert.throws(() => new cg.ContextGuard({ model: v }), { name: 'CtxguardError', code: 'INVALID_OPTIONS' });
  }
});

// Values JSON.stringify would silently change (README, API intro): inside a message they are
// INVALID_MESSAGES with the message's index, wherever they sit; inside nested option data,
// INVALID_OPTIONS. Dropped object fields (undefined, functions, symbols) stay accepted.
const LOSSY = {
  date: () => new Date(0),
  map: () => new Map([['a', 1]]),
  set: () => new Set([1]),
  weakMap: () => new WeakMap(),
  uint8Array: () => new Uint8Array([1, 2, 3]),
  float64Array: () => new Float64Array(2),
  arrayBuffer: () => new ArrayBuffer(8),
  dataView: () => new DataView(new ArrayBuffer(8)),
  regExp: () => /x/g,
  error: () => new Error('e'),
  promise: () => Promise.resolve(1),
  boxedString: () => Object('text'),
  withToJSON: () => ({ toJSON: () => 'replaced' }),
  NaN: () => NaN,
  infinity: () => Infinity,
  negativeInfinity: () => -Infinity,
  bigint: () => 10n,
};
const IN_ARRAY_ONLY = { undefined: () => undefined, function: () => () => 1, symbol: () => Symbol('s') };

/** Where a lossy value can sit in an OpenAI message (the second message of the request). */
const POSITIONS = {
  content: (x) => ({ role: 'user', content: x }),
  'content part field': (x) => ({ role: 'user', content: [{ type: 'text', text: 't', extra: x }] }),
  'image_url.url': (x) => ({ role: 'user', content: [{ type: 'image_url', image_url: { url: x } }] }),
  'extra message field': (x) => ({ role: 'user', content: 'hi', meta: { nested: [1, { deep: x }] } }),
  'tool call arguments': (x) => ({ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: x } }] }),
};

test('boundary: values JSON would change inside a message are INVALID_MESSAGES with its index', async () => {
  let tried = 0;
  const g = guard();
  for (const [lossyName, make] of Object.entries({ ...LOSSY, ...IN_ARRAY_ONLY })) {
    const positions = lossyName in IN_ARRAY_ONLY ? { 'content array': (x) => ({ role: 'user', content: [{ type: 'text', text: 't' }, x] }) } : POSITIONS;
    for (const [posName, place] of Object.entries(positions)) {
      const where = `${lossyName} at ${posName}`;
      const msgs = [{ role: 'user', content: 'first' }, place(make())];
      for (const [fn, call] of [
        ['countMessages', () => cg.countMessages(msgs)],
        ['measure', () => g.measure(msgs)],
        ['guardSources', () => g.guardSources(msgs)],
      ]) {
        const { ok, err } = outcome(call);
        assert.ok(!ok, `${fn}: ${where} was accepted`);
        assertCtxguardError(err, `${fn}: ${where}`);
        assert.equal(err.code, 'INVALID_MESSAGES', `${fn}: ${where}: ${err.message}`);
        assert.equal(err.index, 1, `${fn}: ${where}`);
        assert.match(err.message, /^messages\[1\]/, `${fn}: ${where}`);
        tried += 1;
      }
      await assert.rejects(g.prepare(msgs), (e) => e.name === 'CtxguardError' && e.code === 'INVALID_MESSAGES' && e.index === 1, `prepare: ${where}`);
      assert.throws(() => cg.resolveHistory([{ id: 't0', messages: msgs }]), { name: 'CtxguardError', code: 'INVALID_MESSAGES' }, `resolveHistory: ${where}`);
      assert.throws(() => cg.countMessages([{ role: 'user', content: 'x' }], { tools: [{ type: 'function', function: { name: 'f', parameters: { default: place(make()) } } }] }), { name: 'CtxguardError', code: 'INVALID_OPTIONS' }, `tools: ${where}`);
      tried += 3;
    }
  }
  rows += tried;
  assertModuleWorks('lossy values');
});

test('boundary: JSON data that only looks unusual is accepted', async () => {
  const vm = await import('node:vm');
  class Msg {
    constructor(content) {
      this.role = 'user';
      this.content = content;
    }
  }
  const plain = cg.countMessages([{ role: 'user', content: 'hi' }]).total;
  const accepted = {
    'undefined field': { role: 'user', content: 'hi', name: undefined },
    'function field': { role: 'user', content: 'hi', render() {} },
    'symbol field': { role: 'user', content: 'hi', tag: Symbol('t') },
    'symbol key': { role: 'user', content: 'hi', [Symbol('k')]: new Date() },
    'class instance without toJSON': new Msg('hi'),
    'null prototype': Object.assign(Object.create(null), { role: 'user', content: 'hi' }),
    'another realm': vm.runInNewContext('({ role: "user", content: "hi" })'),
    'proxy of a plain object': new Proxy({ role: 'user', content: 'hi' }, {}),
    frozen: Object.freeze({ role: 'user', content: 'hi' }),
  };
  for (const [name, m] of Object.entries(accepted)) {
    assert.equal(cg.countMessages([m]).total, plain, name);
  }
  // A URL object reads as its href (the AI SDK passes images as URLs).
  const href = 'https://example.com/a.png';
  assert.deepEqual(
    cg.countMessages([{ role: 'user', content: [{ type: 'image_url', image_url: { url: new URL(href) } }] }]),
    cg.countMessages([{ role: 'user', content: [{ type: 'image_url', image_url: { url: href } }] }]),
  );
  // The same object twice in one request (shared, not cyclic) is read twice.
  const shared = { type: 'text', text: 'hi' };
  assert.equal(cg.countMessages([{ role: 'user', content: [shared, shared] }]).perMessage.length, 1);
  // Another realm's arrays and numbers are data too.
  assert.equal(cg.countMessages(vm.runInNewContext('[{ role: "user", content: "hi" }]')).total, plain);
});

test('boundary: a turn id is a string or a number (StoredTurn), nothing else', () => {
  for (const id of [true, {}, [1], { a: 1 }]) {
    assert.throws(() => cg.resolveHistory([{ id, messages: hi }]), { name: 'CtxguardError', code: 'INVALID_MESSAGES' }, JSON.stringify(id));
  }
  for (const id of ['t0', 7, null, undefined]) assert.equal(cg.resolveHistory([{ id, messages: hi }]).messages.length, 1);
});

test('boundary: figures', () => {
  // Printed for RELIABILITY.md; runs last (node:test runs the tests of a file in order).
  console.log(`# boundary rows tried: ${rows} (${CALLS.length} sync + ${ASYNC_CALLS.length} async call positions × ${Object.keys(BAD).length} shapes, prepare rows, lossy values, ${typoRows} generated typos)`);
  assert.ok(rows > 1500);
});
