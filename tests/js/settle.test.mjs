// End-of-run settlement through the package: success, every failure to the mechanical fallback,
// and the session_state strategy's next history.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ContextGuard } from 'ctxguard';

const run = [
  { role: 'system', content: 'You are a refactoring assistant.' },
  { role: 'user', content: '帮我重构 UserService' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"src/user_service.ts"}' } }] },
  { role: 'tool', tool_call_id: 'c1', content: 'export class UserService {\n  // 12 public methods\n}\nresult: 12 public methods found' },
  { role: 'assistant', content: '已完成接口分析：12 个公开方法。' },
];

test('settle returns the SessionState and the cognitive products, never as a message', async () => {
  const guard = new ContextGuard({ model: 'gpt-4o' });
  let seen;
  const s = await guard.settle(run, {
    summarize: async (req) => {
      seen = req;
      return JSON.stringify({
        session_state: { summary: '用户正在重构 UserService，已完成接口分析', key_facts: ['UserService 有 12 个公开方法'], decisions: ['使用 Repository 模式'], plan: { status: 'active', steps: [{ description: '拆分逻辑', status: 'in_progress' }] }, open_questions: [] },
        memory_entries: ['用户偏好中文'], reflections: ['先读代码再动手'], learnings: [],
      });
    },
  });
  assert.equal(s.degraded, false);
  assert.equal(s.attempts, 1);
  assert.ok(seen.schema.properties.session_state && seen.schema.properties.memory_entries);
  assert.ok(seen.instructions.includes("user's language"));
  assert.equal(s.sessionState.key_facts[0], 'UserService 有 12 个公开方法');
  assert.deepEqual(s.memoryEntries, ['用户偏好中文']);
  assert.match(s.rendered, /^\[ctxguard:summary\][\s\S]*## Plan \(active\)\n- \[in_progress\] 拆分逻辑/);
  // session_state strategy: the next run's history is the rendered state plus the new question
  const next = await guard.prepare([{ role: 'system', content: s.rendered }, { role: 'user', content: '继续' }]);
  assert.equal(next.messages.length, 2);
  assert.ok(next.metrics.breakdown.summary > 0, 'the rendered state counts as the summary');
  assert.equal(next.compaction, null);
});

for (const [name, summarize, reason] of [
  ['none', undefined, 'no_callback'],
  ['throws', () => { throw new Error('x'); }, 'callback_error'],
  ['garbage', async () => ({ mood: 'great' }), 'invalid_output'],
  ['hangs', () => new Promise(() => {}), 'timeout'],
]) {
  test(`settle with a summarizer that ${name} falls back mechanically`, async () => {
    const s = await new ContextGuard({ model: 'gpt-4o' }).settle(run, { summarize, timeoutMs: 50 });
    assert.equal(s.degraded, true);
    assert.equal(s.degradedReason, reason);
    assert.match(s.sessionState.summary, /^\[ctxguard:evidence\]/);
    assert.match(s.sessionState.summary, /tool read_file\(path=src\/user_service\.ts\) → .*12 public methods found/);
  });
}

test('settle pauses between attempts after an error as prepare does (retryDelayMs), and checks the option', async () => {
  // What is asserted is what the pipeline chose and the order of the callbacks, not a time: the
  // pauses it announces (50-100 % of 100 ms, then of 200 ms), and heartbeats during each pause
  // (tagged with the attempt it waits for) before that attempt's call.
  const events = [];
  const lines = [];
  const s = await new ContextGuard({ model: 'gpt-4o' }).settle(run, {
    summarize: ({ attempt }) => { events.push(`call ${attempt}`); return Promise.reject(new Error('503')); },
    retryDelayMs: 100,
    heartbeatMs: 5,
    onProgress: (e) => events.push(`beat ${e.attempt}`),
    logger: (l) => lines.push(l),
  });
  assert.equal(s.degradedReason, 'callback_error');
  assert.equal(s.attempts, 3);
  const announced = lines.map((l) => /^\[SummaryCompact\] attempt \d failed.*; next attempt in (\d+) ms/.exec(l)?.[1]).filter(Boolean).map(Number);
  assert.equal(announced.length, 2, lines.join('\n'));
  assert.ok(announced[0] >= 50 && announced[0] <= 100 && announced[1] >= 100 && announced[1] <= 200, String(announced));
  assert.deepEqual(events.filter((e) => e.startsWith('call')), ['call 1', 'call 2', 'call 3']);
  const [c1, c2, c3] = ['call 1', 'call 2', 'call 3'].map((c) => events.indexOf(c));
  assert.ok(events.slice(c1, c2).includes('beat 2') && events.slice(c2, c3).includes('beat 3'), events.join(', '));
  assert.ok(events.every((e) => !e.startsWith('beat') || ['beat 2', 'beat 3'].includes(e)), events.join(', '));
  await assert.rejects(new ContextGuard({ model: 'gpt-4o' }).settle(run, { summarize: async () => 'x', retryDelayMs: -5 }), (e) => e.code === 'INVALID_OPTIONS' && /retryDelayMs/.test(e.message));
});
