// The session_state strategy through the package: a run starts from the last
// settlement's SessionState, and a mid-run compression folds the run's earlier steps into the
// same schema. And the cache-aware decision as a host sees it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ContextGuard } from 'ctxguard';

const history = [
  { role: 'system', content: 'You are a refactoring assistant.' },
  { role: 'user', content: '帮我重构 UserService' },
  { role: 'assistant', content: '好的，先读代码。' },
  { role: 'user', content: 'Also split the repository layer.' },
  { role: 'assistant', content: 'Done: UserRepository holds the CRUD methods.' },
];

test('a run starts from the settled SessionState: it is the only history', async () => {
  const guard = new ContextGuard({ model: 'gpt-4o', strategy: 'session_state', checkpointKey: 'k' });
  const settlement = await guard.settle(history, {
    summarize: async () => ({
      session_state: { summary: '用户正在重构 UserService；仓储层已拆分。', key_facts: ['UserRepository 持有 CRUD'], decisions: [], plan: null, open_questions: [] },
      memory_entries: [], reflections: [], learnings: [],
    }),
  });
  const input = [...history, { role: 'user', content: '下一步？' }];
  const frozen = structuredClone(input);
  const r = await guard.prepare(input, { sessionState: settlement.sessionState });
  assert.deepEqual(input, frozen, 'the input is not modified');
  assert.equal(r.messages.length, 3, 'system, the SessionState, the new user message');
  assert.deepEqual(r.messages[0], history[0]);
  assert.equal(r.messages[1].role, 'system');
  // The same deterministic rendering as settle; the model sees it closed without its tag.
  assert.equal(r.messages[1].content, settlement.rendered.replace(/\n\[\/ctxguard:summary tag=[0-9a-f]{32}\]$/, '\n[/ctxguard:summary]'));
  assert.match(settlement.rendered, /\n\[\/ctxguard:summary tag=[0-9a-f]{32}\]$/, 'settle returns it sealed');
  assert.deepEqual(r.messages[2], { role: 'user', content: '下一步？' });
  assert.ok(r.metrics.breakdown.summary > 0);
  assert.equal(r.compaction, null);
  // A summary-strategy guard refuses the option instead of ignoring it.
  await assert.rejects(new ContextGuard({ model: 'gpt-4o' }).prepare(input, { sessionState: settlement.sessionState }), { code: 'INVALID_OPTIONS' });
  await assert.rejects(guard.prepare(input, { sessionState: { summary: 3 } }), { code: 'INVALID_OPTIONS' });
  assert.throws(() => new ContextGuard({ model: 'gpt-4o', strategy: 'sessionstate' }), { code: 'INVALID_OPTIONS' });
});

test('a mid-run compression folds the run into a SessionState and keeps the last step', async () => {
  const guard = new ContextGuard({ model: 'gpt-4o', strategy: 'session_state', contextWindow: 128000, economicBudget: 6000, edits: 'trigger' });
  const run = [{ role: 'system', content: 'You are a code search agent.' }, { role: 'user', content: 'Find every caller of parseConfig. '.repeat(20) }];
  for (let s = 0; s < 16; s++) {
    run.push({ role: 'assistant', content: `Searching part ${s}. ${'thinking about the next directory '.repeat(25)}`, tool_calls: [{ id: `g${s}`, type: 'function', function: { name: 'grep', arguments: JSON.stringify({ pattern: 'parseConfig', dir: `src/part${s}` }) } }] });
    run.push({ role: 'tool', tool_call_id: `g${s}`, content: `src/part${s}/a.ts:12: parseConfig(env)\n`.repeat(12) });
  }
  let asked;
  const r = await guard.prepare(run, { summarize: async (req) => { asked = req; return 'Searched parts 0-14; parseConfig is called in every part.'; } });
  assert.equal(r.compaction.status, 'completed');
  assert.ok(asked.messages.some((m) => m.role === 'user'), 'the run\'s question is in the source');
  const calls = r.messages.flatMap((m) => m.tool_calls ?? []).map((c) => c.id);
  assert.deepEqual(calls, ['g15'], 'only the last step stays verbatim');
  assert.equal(r.messages.at(-1).tool_call_id, 'g15');
  assert.match(r.messages[1].content, /^\[ctxguard:summary\][\s\S]*## Summary\nSearched parts 0-14/);
  assert.deepEqual(r.sessionState, { summary: 'Searched parts 0-14; parseConfig is called in every part.', key_facts: [], decisions: [], plan: null, open_questions: [] });
  assert.ok(r.metrics.usedTokens <= r.metrics.targetLimit);
});

function chat(turns) {
  const m = [{ role: 'system', content: 'You are a careful build assistant. '.repeat(40) }];
  for (let i = 0; i < turns; i++) {
    m.push({ role: 'user', content: `Question ${i}: ${'why does the build fail? '.repeat(30)}` });
    m.push({ role: 'assistant', content: `Answer ${i}: ${'because the cache is stale. '.repeat(30)}` });
  }
  return m;
}

test('over the economic budget, a cached prefix defers compaction and the trace says why', async () => {
  const config = { model: 'claude-sonnet-4-5', format: 'openai', contextWindow: 200000, reservedOutputTokens: 1000, economicBudget: 100000, edits: 'trigger' };
  const guard = new ContextGuard(config);
  let n = 1;
  while (guard.measure(chat(n + 1)).usedTokens <= 80000) n++;
  const summarize = async () => 'A long exchange about a stale build cache.';
  const first = await guard.prepare(chat(n), { summarize });
  assert.equal(first.cacheDecision, null);
  const traces = [];
  const r = await guard.prepare(chat(n + 1), { summarize, onTrace: (t) => traces.push(t) });
  assert.equal(r.compaction, null, 'deferred');
  assert.equal(r.cacheDecision.choice, 'continue');
  assert.equal(r.cacheDecision.reason, 'cheaper_to_continue');
  assert.ok(r.cacheDecision.continueUsd < r.cacheDecision.compactUsd);
  const t = traces.find((x) => x.operation === 'summary_compact');
  assert.equal(t.status, 'noop');
  assert.deepEqual(t.cacheDecision, r.cacheDecision);
  assert.ok(r.metrics.cost.cachedInputTokens > 70000);
  // A guard with nothing cached compacts the same request.
  const cold = await new ContextGuard(config).prepare(chat(n + 1), { summarize });
  assert.equal(cold.compaction.status, 'completed');
  assert.equal(cold.cacheDecision.choice, 'compact');
  assert.equal(cold.cacheDecision.reason, 'cheaper_to_compact');
});
