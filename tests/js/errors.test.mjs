// Misuse gets a real Error with name 'CtxguardError' and a stable code — never a string, never a
// trap — and the module keeps working afterwards.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ContextGuard, countMessages, countTokens, modelInfo } from 'ctxguard';
import { throwsCtxguard, toolConversation } from './helpers.mjs';

test('countTokens: bad text, encoding and options', () => {
  throwsCtxguard(() => countTokens(42), 'INVALID_TEXT');
  throwsCtxguard(() => countTokens(undefined), 'INVALID_TEXT');
  throwsCtxguard(() => countTokens({ text: 'hi' }), 'INVALID_TEXT');
  throwsCtxguard(() => countTokens('hi', { encoding: 'p50k_base' }), 'UNKNOWN_ENCODING');
  throwsCtxguard(() => countTokens('hi', { encodnig: 'o200k_base' }), 'INVALID_OPTIONS');
  throwsCtxguard(() => countTokens('hi', 'o200k_base'), 'INVALID_OPTIONS');
});

test('countMessages: not a list, bad role, bad message, bad format', () => {
  throwsCtxguard(() => countMessages('hello'), 'INVALID_MESSAGES');
  throwsCtxguard(() => countMessages({ role: 'user', content: 'hi' }), 'INVALID_MESSAGES');
  const badRole = throwsCtxguard(
    () => countMessages([{ role: 'user', content: 'ok' }, { role: 'wizard', content: 'abracadabra' }]),
    'INVALID_ROLE',
  );
  assert.equal(badRole.index, 1, 'the error points at the offending message');
  const badMessage = throwsCtxguard(() => countMessages([{ role: 'user', content: 'ok' }, 'not a message']), [
    'INVALID_MESSAGE',
    'INVALID_MESSAGES',
  ]);
  if (badMessage.code === 'INVALID_MESSAGE') assert.equal(badMessage.index, 1);
  throwsCtxguard(() => countMessages([{ role: 'user', content: 42 }]), ['INVALID_MESSAGE', 'INVALID_CONTENT_PART']);
  throwsCtxguard(() => countMessages(toolConversation, { format: 'cohere' }), ['UNKNOWN_FORMAT', 'INVALID_OPTIONS']);
  throwsCtxguard(() => countMessages(toolConversation, { modle: 'gpt-4o' }), 'INVALID_OPTIONS');
});

test('ContextGuard: impossible budgets, unknown models, typos', () => {
  throwsCtxguard(() => new ContextGuard({ contextWindow: 100, maxOutputTokens: 100, reservedOutputTokens: 100 }), 'INVALID_BUDGET');
  throwsCtxguard(() => new ContextGuard({ contextWindow: 1000, triggerRatio: 0.5, targetRatio: 0.9 }), 'INVALID_BUDGET');
  throwsCtxguard(() => new ContextGuard({ contextWindow: -5 }), 'INVALID_BUDGET');
  throwsCtxguard(() => new ContextGuard({ model: 'my-private-finetune' }), 'UNKNOWN_MODEL');
  throwsCtxguard(() => new ContextGuard({ model: 'gpt-4o', contextWindw: 1000 }), 'INVALID_OPTIONS');
  // An unknown model with explicit limits is fine.
  new ContextGuard({ model: 'my-private-finetune', contextWindow: 32000, maxOutputTokens: 4000 }).free();
});

test('an unknown model is data, not an error', () => {
  const info = modelInfo('my-private-finetune');
  assert.equal(info.known, false);
  assert.equal(info.kind, 'estimate');
  assert.equal(info.contextWindow, null);
});

test('the module keeps working after every error', () => {
  for (let i = 0; i < 20; i += 1) {
    assert.throws(() => countTokens(i));
    assert.throws(() => countMessages([{ role: 'wizard' }]));
  }
  assert.equal(countTokens('hello world'), 2);
  assert.equal(countMessages([{ role: 'user', content: 'hello world' }], { model: 'gpt-4o' }).total, 3 + 1 + 2 + 3);
});

test('a guard used after free() answers GUARD_FREED everywhere; free() twice is harmless', async () => {
  const { ContextGuard } = await import('ctxguard');
  const g = new ContextGuard({ model: 'gpt-4o' });
  const msgs = [{ role: 'user', content: 'hi' }];
  g.measure(msgs);
  g.free();
  g.free();
  const freed = (e) => e.name === 'CtxguardError' && e.code === 'GUARD_FREED';
  for (const [name, call] of [
    ['measure', () => g.measure(msgs)],
    ['guardSources', () => g.guardSources(msgs)],
    ['observeUsage', () => g.observeUsage({ messages: msgs, usage: { prompt_tokens: 8 } })],
    ['budget', () => g.budget],
    ['model', () => g.model],
    ['cacheStats', () => g.cacheStats],
    ['calibration', () => g.calibration],
    ['calibration =', () => { g.calibration = { version: 1, models: {} }; }],
  ]) {
    assert.throws(call, freed, name);
  }
  await assert.rejects(g.prepare(msgs), freed);
  await assert.rejects(g.settle(msgs), freed);
  assert.equal(new ContextGuard({ model: 'gpt-4o' }).measure(msgs).usedTokens, 8);
});

test('review findings: a routed Claude name speaks OpenAI; a wrong signal or callback type is INVALID_OPTIONS', async () => {
  const { ContextGuard, countMessages } = await import('ctxguard');
  const msgs = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }];
  // Claude through an OpenAI-compatible router: OpenAI shape by default.
  for (const model of ['openrouter/anthropic/claude-sonnet-4.5', 'anthropic/claude-sonnet-4-5']) {
    assert.equal(new ContextGuard({ model }).measure(msgs).kind, 'estimate', model);
    assert.ok(countMessages(msgs, { model }).total > 0, model);
  }
  // Direct Claude: Anthropic shape, and the error says how to switch.
  assert.throws(() => countMessages(msgs, { model: 'claude-sonnet-4-5' }), (e) => e.code === 'INVALID_ROLE' && /format: 'openai'/.test(e.message));
  const g = new ContextGuard({ model: 'gpt-4o' });
  await assert.rejects(g.prepare(msgs, { signal: { aborted: false } }), { code: 'INVALID_OPTIONS', message: /AbortSignal/ });
  // A signal-like object without removeEventListener (the pipeline removes its listener when done).
  await assert.rejects(g.prepare(msgs, { signal: { aborted: false, addEventListener() {} } }), { code: 'INVALID_OPTIONS', message: /AbortSignal/ });
  await assert.rejects(g.prepare(msgs, { signal: 'stop' }), { code: 'INVALID_OPTIONS' });
  await assert.rejects(g.prepare(msgs, { summarize: 'nope' }), { code: 'INVALID_OPTIONS', message: /summarize must be a function/ });
  await assert.rejects(g.settle(msgs, { onProgress: 5 }), { code: 'INVALID_OPTIONS', message: /onProgress must be a function/ });
  const ok = await g.prepare(msgs, { signal: new AbortController().signal });
  assert.equal(ok.messages.length, 2);
  // The AI SDK's usage object is read by observeUsage.
  const s = g.observeUsage({ messages: msgs, usage: { inputTokens: ok.metrics.usedTokens, outputTokens: 3, cachedInputTokens: 0 } });
  assert.equal(s.last.error, 0);
});

test('review findings: errors name the field; an unknown beforeMessageId, timeoutMs 0 are INVALID_OPTIONS; broken pairs in the input are repaired', async () => {
  const { ContextGuard, resolveHistory, modelInfo } = await import('ctxguard');
  for (const [cfg, field] of [
    [{ model: 'gpt-4o', economicBudget: 'cheap' }, 'economicBudget'],
    [{ model: 'gpt-4o', contextWindow: '8k' }, 'contextWindow'],
    [{ model: 'gpt-4o', pricing: { input: 1, output: 2 } }, 'pricing'],
  ]) {
    assert.throws(() => new ContextGuard(cfg), (e) => e.code === 'INVALID_OPTIONS' && e.message.startsWith(`config.${field}:`) && !/line \d+ column/.test(e.message), field);
  }
  assert.throws(() => new ContextGuard({ model: 'gpt-4o', economicBudget: 'cheap' }), /a number of tokens or \{ usd: number \}/);
  const turns = [{ id: 't0', messages: [{ id: 'm1', role: 'user', content: 'hi' }, { id: 'm2', role: 'assistant', content: 'hello' }] }];
  assert.equal(resolveHistory(turns, { beforeMessageId: 'm2' }).messages.length, 1);
  assert.throws(() => resolveHistory(turns, { beforeMessageId: 'nope' }), { code: 'INVALID_OPTIONS', message: /beforeMessageId "nope"/ });
  const g = new ContextGuard({ model: 'gpt-4o' });
  await assert.rejects(g.prepare([{ role: 'user', content: 'hi' }], { timeoutMs: 0 }), { code: 'INVALID_OPTIONS' });
  // A result whose call is missing and a call without its result: removed, counted.
  const broken = [
    { role: 'user', content: 'go' },
    { role: 'tool', tool_call_id: 'ghost', content: 'orphan result' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
    { role: 'user', content: 'and?' },
  ];
  const r = await g.prepare(broken);
  assert.deepEqual(r.messages.map((m) => m.role), ['user', 'user']);
  assert.equal(r.droppedMessages, 2);
  // Derived figures read without binary noise.
  assert.equal(modelInfo('gemini-2.5-pro').estimateFactor, 1.155);
});

test('a misspelled option is an unknown field with the one meant, whatever its value', async () => {
  const g = new ContextGuard({ model: 'gpt-4o' });
  const msgs = [{ role: 'user', content: 'hi' }];
  // Functions: JSON drops them, so the check runs before; they were "the wrong type" before.
  await assert.rejects(g.prepare(msgs, { summarise: async () => 'x' }), { code: 'INVALID_OPTIONS', message: 'options: unknown field `summarise`; did you mean `summarize`?' });
  await assert.rejects(g.prepare(msgs, { onprogress() {} }), { code: 'INVALID_OPTIONS', message: /unknown field `onprogress`; did you mean `onProgress`\?/ });
  await assert.rejects(g.settle(msgs, { loger() {} }), { code: 'INVALID_OPTIONS', message: /did you mean `logger`\?/ });
  throwsCtxguard(() => g.guardSources(msgs, { onTrce() {} }), 'INVALID_OPTIONS');
  assert.throws(() => g.guardSources(msgs, { onTrce() {} }), /did you mean `onTrace`\?/);
  // A callback the object does not take says which calls take it.
  assert.throws(() => new ContextGuard({ model: 'gpt-4o', summarize: async () => 'x' }), { code: 'INVALID_OPTIONS', message: /`summarize` is an option of the calls that take it \(prepare and settle/ });
  // Data fields and values.
  assert.throws(() => new ContextGuard({ model: 'gpt-4o', contextWindw: 1000 }), { message: 'config: unknown field `contextWindw`; did you mean `contextWindow`?' });
  assert.throws(() => new ContextGuard({ model: 'gpt-4o', format: 'antropic' }), { message: /config\.format: unknown value `antropic`; did you mean `anthropic`\?/ });
  assert.throws(() => new ContextGuard({ model: 'gpt-4o', clearToolOutputs: { protectTokns: 5 } }), { message: /^config\.clearToolOutputs: unknown field `protectTokns`; did you mean `protectTokens`\?/ });
  assert.throws(() => countTokens('hi', { encodnig: 'o200k_base' }), { code: 'INVALID_OPTIONS', message: /did you mean `encoding`\?/ });
  assert.throws(() => countTokens('hi', { onTrace() {} }), { code: 'INVALID_OPTIONS', message: /unknown field `onTrace`/ });
  // No close match: the known fields are listed instead.
  assert.throws(() => countTokens('hi', { temperature: 1 }), { message: /unknown field `temperature` \(known: `encoding` or `model`\)/ });
});

test('wrong types are named in JS terms; a missing model says what to pass', () => {
  assert.throws(() => new ContextGuard({ model: 'gpt-4o', contextWindow: '128000' }), {
    code: 'INVALID_OPTIONS',
    message: 'config.contextWindow: expected a number, got the string "128000" (write 128000, without quotes)',
  });
  assert.throws(() => new ContextGuard({ model: 'gpt-4o', toolOutputLimit: -1 }), { message: 'config.toolOutputLimit: expected a whole number (0 or more), got the number -1' });
  assert.throws(() => new ContextGuard({ model: 'gpt-4o', ahead: 'yes' }), { message: 'config.ahead: expected true or false, got the string "yes"' });
  // A field inside an object option is named by its whole path.
  assert.throws(() => new ContextGuard({ model: 'gpt-4o', clearToolOutputs: { protectTokens: -5 } }), { message: 'config.clearToolOutputs.protectTokens: expected a whole number (0 or more), got the number -5' });
  assert.throws(() => new ContextGuard({ model: 'gpt-4o', toolOutputLimits: { read_file: 'big' } }), { message: 'config.toolOutputLimits.read_file: expected a whole number (0 or more), got the string "big"' });
  // Options in the wrong place: what came, and the likely mistake.
  assert.throws(() => countTokens('hi', 'gpt-4o'), { code: 'INVALID_OPTIONS', message: 'options must be an object, got the string "gpt-4o"; to name a model, pass { model: "gpt-4o" }' });
  assert.throws(() => countMessages({ model: 'gpt-4o' }, [{ role: 'user', content: 'hi' }]), { code: 'INVALID_OPTIONS', message: /^options must be an object, got an array; the messages come first/ });
  assert.throws(() => new ContextGuard('gpt-4o'), { code: 'INVALID_OPTIONS', message: /got the string "gpt-4o"; to name a model, pass \{ model: "gpt-4o" \}/ });
  // Options without a model are not told to name one.
  assert.throws(() => new ContextGuard({ model: 'gpt-4o' }).measure([{ role: 'user', content: 'hi' }], 'gpt-4o'), { code: 'INVALID_OPTIONS', message: 'options must be an object, got the string "gpt-4o"' });
  assert.throws(() => new ContextGuard({ model: 'gpt-4o', reservedOutputTokens: 200000 }), { code: 'INVALID_BUDGET', message: /^reservedOutputTokens \(200000\) exceeds maxOutputTokens \(16384\), the most this model writes .*: reserve 16384 or less/ });
  // A message JSON cannot read is named and indexed.
  const cyclic = { role: 'user', content: [{ type: 'text', text: 'x' }] };
  cyclic.content[0].self = cyclic;
  const e = throwsCtxguard(() => countMessages([{ role: 'user', content: 'a' }, cyclic], { model: 'gpt-4o' }), 'INVALID_MESSAGES');
  assert.match(e.message, /^messages\[1\] cannot be read as JSON: /);
  assert.equal(e.index, 1);
  assert.throws(() => countTokens('hi', { model: 4 }), { message: 'options.model: expected a string, got a number' });
  for (const make of [() => new ContextGuard(), () => new ContextGuard({}), () => new ContextGuard(null)]) {
    const e = throwsCtxguard(make, 'UNKNOWN_MODEL');
    assert.match(e.message, /^no model: name the model .* new ContextGuard\(\{ model: 'gpt-4o' \}\) \(knownModels\(\) lists/);
    assert.doesNotMatch(e.message, /model ""/);
  }
  assert.throws(() => new ContextGuard({ model: 'gpt4o' }), { code: 'UNKNOWN_MODEL', message: /did you mean "gpt-4o"\?/ });
});

test('LATEST_MESSAGE_TOO_LARGE names the attachment route, and the route goes through', async () => {
  const guard = new ContextGuard({ model: 'gpt-4o', contextWindow: 16000 });
  const log = Array.from({ length: 40000 }, (_, i) => `2026-01-01T00:00:${i % 60} worker ${i % 97} ERROR step ${i} failed`).join('\n');
  await assert.rejects(guard.prepare([{ role: 'user', content: `What failed?\n${log}` }]), (e) => {
    assert.equal(e.code, 'LATEST_MESSAGE_TOO_LARGE');
    assert.match(e.message, /send a long pasted text as an attachment instead — inside <attachment name="paste.txt">…<\/attachment>/);
    assert.match(e.message, /readAttachmentTool/);
    return true;
  });
  // The same text as the error says: a bounded preview the model can read on from.
  const r = await guard.prepare([{ role: 'user', content: `What failed?\n<attachment name="paste.txt">${log}</attachment>` }]);
  assert.ok(r.metrics.usedTokens <= r.metrics.usableLimit);
  assert.deepEqual(r.traces.map((t) => t.operation), ['attachment_preview']);
  assert.match(r.messages[0].content, /^What failed\?\n<attachment name="paste.txt"/);
});

test('cost figures carry no binary noise', () => {
  const guard = new ContextGuard({ model: 'gpt-4o', contextWindow: 128000 });
  let noisy = 0;
  for (let n = 1; n <= 200; n += 1) {
    const cost = guard.measure([{ role: 'user', content: 'word '.repeat(n) }]).cost;
    for (const key of ['cachedInputUsd', 'uncachedInputUsd', 'outputUsd', 'totalUsd']) {
      assert.equal(cost[key], Number(cost[key].toFixed(9)), `${key} ${cost[key]}`);
    }
    // The same product computed in JS shows the noise the rounding removes.
    const raw = cost.uncachedInputTokens * (cost.pricing.input / 1e6);
    if (raw !== Number(raw.toFixed(9))) noisy += 1;
  }
  assert.ok(noisy > 0, 'some raw products are noisy, so the check above means something');
});

test('an entry that cannot load its .wasm rejects the import with WASM_UNAVAILABLE and says what to do', async () => {
  // The browser entry imported in Node (a runner that resolves the `browser` condition there).
  await assert.rejects(import('../../pkg/index.js'), (e) => {
    assert.equal(e.name, 'CtxguardError');
    assert.equal(e.code, 'WASM_UNAVAILABLE');
    assert.ok(e instanceof Error);
    assert.match(e.message, /^ctxguard could not load its WebAssembly module from file:\/\/\/.*\/ctxguard_wasm_bg\.wasm \(fetch failed\): this is ctxguard's browser entry; in Node, `import 'ctxguard'` resolves to the Node entry by the `node` export condition/);
    return true;
  });
  // A page whose server does not serve the file.
  const { wasmUnavailable } = await import('../../pkg/errors.js');
  const e = wasmUnavailable(new URL('https://app.example/assets/ctxguard_wasm_bg.wasm'), new Error('failed to fetch Wasm: 404 Not Found'));
  assert.equal(e.code, 'WASM_UNAVAILABLE');
  assert.match(e.message, /from https:\/\/app\.example\/assets\/ctxguard_wasm_bg\.wasm \(failed to fetch Wasm: 404 Not Found\): serve ctxguard_wasm_bg\.wasm next to the module that imports it, as application\/wasm/);
});
