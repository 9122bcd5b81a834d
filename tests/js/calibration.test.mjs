// Calibration from reported usage, the cost of the next request, economicBudget in USD — through
// the built package.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { ContextGuard, countMessages } from 'ctxguard';
import { createWorkerGuard } from 'ctxguard/worker';

const SYSTEM = 'You are a careful build assistant.';
const bodies = [
  'Why does my release build fail on CI but not locally? It started after the upgrade.',
  'fn main() {\n    let v: Vec<u32> = (0..10).map(|x| x * 2).collect();\n}\n'.repeat(6),
  JSON.stringify({ tests: Array.from({ length: 40 }, (_, i) => ({ name: `test_${i}`, ok: i % 7 !== 0 })) }),
  'Könnten Sie bitte die Änderungen an der Konfiguration erklären? '.repeat(8),
  'error[E0502]: cannot borrow `x` as mutable\n  --> src/lib.rs:42:9\n'.repeat(12),
  'The migration moves the billing tables to the new schema. '.repeat(10),
];
// Claude's reported input / our o200k count: 1.15–1.25 with noise, one outlier (2.6).
const RATIOS = [1.21, 1.17, 1.24, 2.6, 1.19, 1.22];

function o200k(messages) {
  return countMessages(messages, { model: 'claude-sonnet-4-5', encoding: 'o200k_base', system: SYSTEM }).total;
}

test('observeUsage calibrates an estimated model and the state round-trips as JSON', () => {
  const guard = new ContextGuard({ model: 'claude-sonnet-4-5' });
  assert.equal(guard.measure([{ role: 'user', content: 'hi' }]).countSource, 'estimate');
  assert.equal(guard.measure([{ role: 'user', content: 'hi' }]).calibration, null);
  const messages = [];
  let summary;
  bodies.forEach((body, i) => {
    messages.push({ role: 'user', content: body });
    const reported = Math.round(o200k(messages) * RATIOS[i]);
    summary = guard.observeUsage({
      messages, system: SYSTEM,
      usage: { input_tokens: reported - 10, cache_read_input_tokens: 10, cache_creation_input_tokens: 0, output_tokens: 50 },
    });
    messages.push({ role: 'assistant', content: `Answer ${i}.` });
  });
  assert.equal(summary.observations, 5);
  assert.equal(summary.outliers, 1);
  assert.equal(summary.applied, true);
  assert.ok(Math.abs(summary.last.error) < 0.13, JSON.stringify(summary.last));
  assert.equal(summary.last.reportedCached, 10);

  const m = guard.measure(messages, { system: SYSTEM });
  assert.equal(m.countSource, 'calibrated');
  assert.equal(m.kind, 'estimate');
  assert.equal(m.calibration.correction, summary.correction);

  const saved = JSON.parse(JSON.stringify(guard.calibration));
  const restored = new ContextGuard({ model: 'claude-sonnet-4-5', calibration: saved });
  assert.equal(restored.measure(messages, { system: SYSTEM }).usedTokens, m.usedTokens);
  const other = new ContextGuard({ model: 'claude-sonnet-4-5' });
  other.calibration = saved;
  // serde_json's default float parser may change the last bit of a ratio; counts do not change.
  const back = other.calibration.models['claude-sonnet-4-5'];
  assert.equal(back.observations, 5);
  back.ratios.forEach((r, i) => assert.ok(Math.abs(r - saved.models['claude-sonnet-4-5'].ratios[i]) < 1e-12));
  assert.equal(other.measure(messages, { system: SYSTEM }).usedTokens, m.usedTokens);
});

test('a bad calibration state or usage is INVALID_OPTIONS', () => {
  const err = { name: 'CtxguardError', code: 'INVALID_OPTIONS' };
  assert.throws(() => new ContextGuard({ model: 'gpt-4o', calibration: { version: 1, modles: {} } }), err);
  const guard = new ContextGuard({ model: 'gpt-4o' });
  assert.throws(() => { guard.calibration = { version: 1, models: { x: { observations: 1, outliers: 0, ratios: [NaN], pending: [], last: null } } }; }, err);
  assert.throws(() => { guard.calibration = 'garbage'; }, err);
  assert.throws(() => guard.observeUsage({ messages: [], usage: { completion_tokens: 3 } }), err);
  assert.throws(() => guard.observeUsage({ messages: [], usage: { prompt_tokens: 3 }, extra: 1 }), err);
});

test('exact models: a disagreement is reported, never corrected', () => {
  const guard = new ContextGuard({ model: 'gpt-4o' });
  const messages = [{ role: 'user', content: 'hello there' }];
  const before = guard.measure(messages).usedTokens;
  for (let i = 0; i < 4; i++) {
    guard.observeUsage({ messages, usage: { prompt_tokens: before + 5, prompt_tokens_details: { cached_tokens: 0 } } });
  }
  const m = guard.measure(messages);
  assert.equal(m.usedTokens, before);
  assert.equal(m.countSource, 'exact');
  assert.equal(m.calibration.applied, false);
  assert.equal(m.calibration.last.reported - m.calibration.last.predicted, 5);
});

test('cost of the next request and economicBudget in USD', () => {
  const guard = new ContextGuard({ model: 'gpt-4o', reservedOutputTokens: 1000, economicBudget: { usd: 0.05 } });
  assert.equal(guard.budget.economicBudget, 20000); // $0.05 / $2.50 per million
  const history = [{ role: 'system', content: 'You are a careful build assistant. '.repeat(200) }, { role: 'user', content: 'Go.' }];
  const m = guard.measure(history);
  assert.equal(m.cost.currency, 'USD');
  assert.equal(m.cost.cachedInputTokens, 0);
  assert.ok(Math.abs(m.cost.totalUsd - (m.usedTokens * 2.5e-6 + 1000 * 10e-6)) < 1e-12);
  guard.observeUsage({ messages: history, usage: { prompt_tokens: m.usedTokens } });
  const next = [...history, { role: 'assistant', content: 'Done.' }, { role: 'user', content: 'Thanks.' }];
  const c = guard.measure(next).cost;
  assert.ok(c.cachedInputTokens >= 1024 && c.cachedInputTokens % 128 === 0);
  assert.ok(Math.abs(c.totalUsd - (c.cachedInputTokens * 1.25e-6 + c.uncachedInputTokens * 2.5e-6 + 1000 * 10e-6)) < 1e-12);
  const custom = new ContextGuard({ model: 'local', contextWindow: 8000, pricing: { input: 1, cachedInput: 0.1, output: 2 } });
  assert.equal(custom.measure(history).cost.pricesAsOf, null);
  assert.equal(new ContextGuard({ model: 'local', contextWindow: 8000 }).measure(history).cost, null);
  assert.throws(() => new ContextGuard({ model: 'gpt-4o', economicBudget: { usd: 0.05, eur: 1 } }), { code: 'INVALID_OPTIONS' });
});

/** A long Claude conversation: `turns` exchanges, then a short question. */
function longChat(turns) {
  const messages = [];
  for (let i = 0; i < turns; i++) {
    messages.push({ role: 'user', content: `Step ${i}: please review the migration log. ${'The billing tables moved to the new schema overnight. '.repeat(125)}` });
    messages.push({ role: 'assistant', content: `Review ${i}: ${'Row counts match and the views still resolve to the old names. '.repeat(100)}` });
  }
  messages.push({ role: 'user', content: 'So is it safe to drop the old views now?' });
  return messages;
}
const DB_SYSTEM = 'You are a careful database assistant.';
const rawCount = (messages) => countMessages(messages, { model: 'claude-sonnet-4-5', system: DB_SYSTEM }).total;
const anthropicOverflow = (n) => ({ status: 400, error: { type: 'error', error: { type: 'invalid_request_error', message: `prompt is too long: ${n} tokens > 200000 maximum` } } });

test('observeOverflow: the provider count makes the next prepare compact, and the result fits', async () => {
  const guard = new ContextGuard({ model: 'claude-sonnet-4-5' });
  const messages = longChat(40);
  const before = guard.measure(messages, { system: DB_SYSTEM });
  assert.ok(before.usedTokens > 130_000 && before.usedTokens < before.triggerLimit, `${before.usedTokens}`);
  const quiet = await guard.prepare(messages, { system: DB_SYSTEM, summarize: async () => assert.fail('nothing to compact yet') });
  assert.equal(quiet.compaction, null);

  // The provider counts 1.5x the table's estimate and says so.
  const truth = (m) => Math.round(rawCount(m) * 1.5);
  const reported = truth(messages);
  assert.ok(reported > 200_000);
  const learned = guard.observeOverflow(anthropicOverflow(reported), messages, { system: DB_SYSTEM });
  assert.equal(learned.outcome, 'learned');
  assert.equal(learned.kind, 'context_overflow');
  assert.equal(learned.compactAndRetry, true);
  assert.equal(learned.promptTokens, reported);
  assert.equal(learned.limit, 200_000);
  assert.equal(learned.predicted, before.usedTokens);
  assert.ok(learned.countError < -0.3, `${learned.countError}`);
  assert.ok(Math.abs(learned.predictedAfter - reported) <= 80, `${learned.predictedAfter} vs ${reported}`);
  assert.equal(learned.limitBelowWindow, false);
  assert.equal(learned.calibration.applied, true);
  assert.ok(learned.calibration.floor > 1.49);

  const m = guard.measure(messages, { system: DB_SYSTEM });
  assert.equal(m.countSource, 'calibrated');
  assert.equal(m.state, 'over_limit');
  assert.equal(m.availableOutputTokens, 0);
  const r = await guard.prepare(messages, { system: DB_SYSTEM, summarize: async () => 'The billing tables were migrated; row counts match; the old views still resolve.' });
  assert.equal(r.compaction.status, 'completed');
  assert.ok(r.metrics.usedTokens <= r.metrics.targetLimit);
  assert.ok(truth(r.messages) + r.metrics.reservedOutputTokens <= 200_000, `${truth(r.messages)}`);
  // The state persists with its floor.
  const restored = new ContextGuard({ model: 'claude-sonnet-4-5', calibration: JSON.parse(JSON.stringify(guard.calibration)) });
  assert.equal(restored.measure(messages, { system: DB_SYSTEM }).usedTokens, m.usedTokens);
});

test('observeOverflow: exact models report, never correct; nothing is learned without a count', () => {
  const gpt = new ContextGuard({ model: 'gpt-4o' });
  const messages = [{ role: 'user', content: 'hello there, how are you today?' }];
  const exact = gpt.measure(messages).usedTokens;
  const body = { error: { message: `This model's maximum context length is 128000 tokens. However, your messages resulted in ${exact + 9} tokens. Please reduce the length of the messages.`, code: 'context_length_exceeded' } };
  const r = gpt.observeOverflow({ status: 400, body }, messages);
  assert.equal(r.outcome, 'exact_model');
  assert.equal(r.predicted, exact);
  assert.equal(r.correction, 1);
  assert.equal(r.predictedAfter, null);
  assert.equal(r.calibration.last.reported, exact + 9);
  assert.equal(gpt.measure(messages).usedTokens, exact);
  assert.equal(gpt.measure(messages).countSource, 'exact');

  const claude = new ContextGuard({ model: 'claude-sonnet-4-5' });
  const cases = [
    [new Error('boom'), 'not_overflow'],
    [{ status: 400 }, 'not_overflow'],
    [undefined, 'not_overflow'],
    [{ status: 429, message: 'Rate limit reached: Limit 30000, Requested 31538' }, 'not_overflow'],
    [new Error('Input is too long for requested model.'), 'no_count'],
    [{ status: 400, message: 'This endpoint\'s maximum context length is 16384 tokens. However, you requested about 94307 tokens (94307 of text input).' }, 'approximate'],
  ];
  for (const [error, outcome] of cases) {
    const r = claude.observeOverflow(error, messages);
    assert.equal(r.outcome, outcome, String(error?.message ?? error?.status));
    assert.equal(r.correction, 1);
    assert.equal(r.calibration, null);
  }
  // The limit stated is below the window: reported, the budget untouched.
  const small = claude.observeOverflow({ message: 'The input token count (25270) exceeds the maximum number of tokens allowed (4000).' }, messages);
  assert.equal(small.limitBelowWindow, true);
  assert.equal(small.contextWindow, 200_000);
  assert.equal(claude.budget.contextWindow, 200_000);
  // Bad messages or options are errors like measure's; the error argument never is.
  assert.throws(() => claude.observeOverflow({ status: 400 }, 'not an array'), { code: 'INVALID_MESSAGES' });
  assert.throws(() => claude.observeOverflow({ status: 400 }, messages, { sytem: 'x' }), { code: 'INVALID_OPTIONS' });
});

test('metrics.availableOutputTokens: the model cap, the window rest, 0 when over', () => {
  const guard = new ContextGuard({ model: 'local', contextWindow: 1000, maxOutputTokens: 300, reservedOutputTokens: 100 });
  const room = (n) => guard.measure([{ role: 'user', content: 'word '.repeat(n) }]);
  const small = room(10);
  assert.equal(small.availableOutputTokens, 300);
  const mid = room(600);
  assert.ok(mid.usedTokens > 700 && mid.usedTokens < 1000, `${mid.usedTokens}`);
  assert.equal(mid.availableOutputTokens, 1000 - mid.usedTokens);
  const over = room(2000);
  assert.ok(over.usedTokens > 1000);
  assert.equal(over.availableOutputTokens, 0);
  assert.equal(guard.budget.maxOutputTokens, 300);
});

test('observeOverflow through ctxguard/worker: an SDK error class travels as its fields, same result', async () => {
  /** Like the Anthropic SDK's APIError: a class instance, the parsed body as `error`. */
  class SdkError extends Error {
    constructor(status, body) {
      super(`${status} ${JSON.stringify(body)}`);
      this.status = status;
      this.error = body;
    }
  }
  const messages = longChat(6);
  const error = new SdkError(400, { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 40000 tokens > 200000 maximum' } });
  const local = new ContextGuard({ model: 'claude-sonnet-4-5' }).observeOverflow(error, messages, { system: DB_SYSTEM });
  const worker = new Worker(new URL('./fixtures/guard-worker.mjs', import.meta.url));
  try {
    const remote = await createWorkerGuard(worker, { model: 'claude-sonnet-4-5' });
    assert.deepEqual(await remote.observeOverflow(error, messages, { system: DB_SYSTEM }), local);
    assert.equal(local.outcome, 'learned');
    assert.equal(local.promptTokens, 40000);
    assert.equal((await remote.measure(messages, { system: DB_SYSTEM })).usedTokens, local.predictedAfter);
  } finally {
    await worker.terminate();
  }
});

test('observeOverflow on hostile input: the error never throws; messages and options fail like measure; freed guards', () => {
  const hi = [{ role: 'user', content: 'hi' }];
  const cyclic = { status: 400 };
  cyclic.self = cyclic;
  const { proxy: revoked, revoke } = Proxy.revocable({}, {});
  revoke();
  const empty = [];
  const hostile = [undefined, null, 0, NaN, -1, 10n, Symbol('s'), () => 1, '', 'x'.repeat(100_000), empty, {}, new Map(), new Date(0), cyclic, revoked,
    { status: 10n, message: 42, body: () => {} }, { message: 'prompt is too long: 99999999999 tokens > 200000 maximum' }];
  const guard = new ContextGuard({ model: 'claude-sonnet-4-5' });
  for (const x of hostile) {
    const r = guard.observeOverflow(x, hi);
    assert.ok(['not_overflow', 'no_count'].includes(r.outcome), `${typeof x}: ${r.outcome}`);
    assert.deepEqual(JSON.parse(JSON.stringify(r)), r);
  }
  const ctxError = (e) => e instanceof Error && e.name === 'CtxguardError' && typeof e.code === 'string';
  for (const x of hostile) {
    if (x === empty) continue;
    assert.throws(() => guard.observeOverflow({ status: 400 }, x), ctxError, `messages ${typeof x}`);
    if (x === undefined || x === null) continue;
    assert.throws(() => guard.observeOverflow({ status: 400 }, hi, x === '' || typeof x === 'object' ? { bogus: x } : x), ctxError, `options ${typeof x}`);
  }
  assert.equal(guard.calibration.models['claude-sonnet-4-5'], undefined, 'nothing was learned');
  assert.equal(guard.measure(hi).countSource, 'estimate');
  guard.free();
  assert.throws(() => guard.observeOverflow({ status: 400 }, hi), (e) => e.code === 'GUARD_FREED');
});
