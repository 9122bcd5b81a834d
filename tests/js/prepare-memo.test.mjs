// guard.prepare and guard.guardSources send only new or changed messages into wasm, and get
// back, for each output message that is a caller's message unchanged, its index instead of its
// JSON (src/js/memo.js + src/guard/store.rs). Whatever the host does between calls, the result must be
// exactly the plain path's: the same messages (key order included), metrics, traces, checkpoint
// and errors. The reference is a guard whose messages are class instances: JSON reads them the
// same, but the memo leaves them to the plain path.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ContextGuard } from 'ctxguard';
import { deepFreeze } from './helpers.mjs';

class Plain {}
/** The same messages, read by the plain path (top-level objects are class instances). */
const plainOf = (msgs) => msgs.map((m) => (m !== null && typeof m === 'object' && !Array.isArray(m) ? Object.assign(new Plain(), m) : m));

/** JSON text of a result with its timings zeroed (the only field that may differ). */
/**
 * A result without what depends on the guard's earlier calls: durations, and the clearing-step
 * trace (a step is reported against the guard's previous call, so guards with different call
 * histories report it on different calls; what the model receives is the same).
 */
function canonical(r) {
  const traces = r.traces?.filter((t) => t.operation !== 'tool_output_clear');
  return JSON.stringify({ ...r, traces }, (k, v) => (k === 'durationMs' ? 0 : v));
}

const PNG = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

function openaiChat(turns) {
  const m = [{ role: 'system', content: 'You are a build assistant. 你是构建助手。' }];
  for (let i = 0; i < turns; i++) {
    const user = i % 5 === 1
      ? { role: 'user', content: [{ type: 'text', text: `Look at screenshot ${i}, s'il vous plaît.` }, { type: 'image_url', image_url: { url: PNG, detail: 'low' } }] }
      : i % 5 === 2
        ? { role: 'user', content: `Here is the file.\n<attachment id="f${i}" name="notes-${i}.md" type="text/markdown">${'Ligne de notes, заметки, 笔记。\n'.repeat(400)}</attachment>\nWhat changed?` }
        : i % 5 === 3
          ? { role: 'user', content: [{ type: 'text', text: 'The spec:' }, { type: 'file', file: { filename: `spec-${i}.txt` }, text: 'Requirement line.\n'.repeat(300) }], name: 'alice' }
          : { role: 'user', content: `Q${i}: why does module ${i} fail? 为什么失败？` };
    m.push(user);
    m.push({ role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'run_tests', arguments: JSON.stringify({ module: `m${i}` }) } }] });
    m.push({ role: 'tool', tool_call_id: `c${i}`, content: `${`log line ${i} ok\n`.repeat(i % 3 === 0 ? 3000 : 30)}FAILED at step ${i}` });
    m.push({ content: [{ type: 'text', text: `Module ${i} fails at step ${i}.` }], role: 'assistant', extra_field: { kept: true, n: -0 } });
  }
  return m;
}

function anthropicChat(turns) {
  const m = [];
  for (let i = 0; i < turns; i++) {
    m.push({ role: 'user', content: i % 4 === 1 ? [{ type: 'text', text: `Что в файле ${i}?` }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG.split(',')[1] } }] : `Q${i}: what is in file ${i}?` });
    m.push({ role: 'assistant', content: [{ type: 'text', text: 'Reading it.' }, { type: 'tool_use', id: `t${i}`, name: 'read', input: { path: `f${i}` } }] });
    m.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: `line ${i}\n`.repeat(i % 3 === 0 ? 4000 : 30) }, { type: 'text', text: 'and?', cache_control: { type: 'ephemeral' } }] });
    m.push({ role: 'assistant', content: `File ${i} holds lines. ファイル ${i}.` });
  }
  return m;
}

/** The objects (and arrays) reachable from v. */
function objects(v, out = new Set()) {
  if (v !== null && typeof v === 'object' && !out.has(v)) {
    out.add(v);
    for (const k of Object.keys(v)) objects(v[k], out);
  }
  return out;
}

function assertNoSharing(a, b, what) {
  const seen = objects(b);
  for (const o of objects(a)) assert.ok(!seen.has(o), `${what} share an object`);
}

/** Run `prepare` (or guardSources) on both guards and compare; returns the fast result. */
async function same(fast, slow, msgs, opts = {}, method = 'prepare') {
  const before = JSON.stringify(msgs);
  const settle = async (p) => {
    try {
      return { ok: await p };
    } catch (e) {
      return { err: { name: e.name, code: e.code, index: e.index, message: e.message } };
    }
  };
  const a = await settle(method === 'prepare' ? fast.prepare(msgs, opts) : Promise.resolve().then(() => fast.guardSources(msgs, opts)));
  const b = await settle(method === 'prepare' ? slow.prepare(plainOf(msgs), opts) : Promise.resolve().then(() => slow.guardSources(plainOf(msgs), opts)));
  assert.equal(JSON.stringify(msgs), before, 'the input was modified');
  if (b.err) {
    assert.deepEqual(a.err, b.err);
    return undefined;
  }
  assert.ok(a.ok, `fast path failed: ${JSON.stringify(a.err)}`);
  assert.equal(canonical(a.ok), canonical(b.ok));
  assertNoSharing(a.ok, msgs, 'the result and the input');
  return a.ok;
}

for (const [format, model, make] of [
  ['openai', 'gpt-4o', openaiChat],
  ['anthropic', 'claude-sonnet-4-5', anthropicChat],
]) {
  test(`${format}: prepare and guardSources equal the plain path through growth, edits, deletions and reordering`, async () => {
    const cfg = { model, format, contextWindow: 400_000, toolOutputLimit: 2_000 };
    const fast = new ContextGuard(cfg);
    const slow = new ContextGuard(cfg);
    const msgs = make(12);
    const system = format === 'anthropic' ? 'You read files.' : undefined;
    const opts = system ? { system } : {};
    let last = await same(fast, slow, msgs, opts);
    await same(fast, slow, msgs, opts, 'guardSources');
    // grown by a message (the usual turn); consecutive results share nothing
    msgs.push({ role: 'user', content: 'And now? 次は？' });
    const next = await same(fast, slow, msgs, opts);
    assertNoSharing(next, last, 'two results');
    last = next;
    // a result the host mutates (cache_control on the last message) does not leak into the next
    last.messages[last.messages.length - 1].cache_control = { type: 'ephemeral' };
    last.messages[0].role = 'mutated';
    await same(fast, slow, msgs, opts);
    // a streaming reply appended to in place
    const reply = { role: 'assistant', content: '' };
    msgs.push(reply);
    for (const delta of ['Start ', 'with module 0, ', '然后是模块 1。']) {
      reply.content += delta;
      await same(fast, slow, msgs, opts);
    }
    // edits in place deep inside remembered messages, a key added and removed
    if (format === 'openai') {
      msgs[2].tool_calls[0].function.arguments = JSON.stringify({ module: 'm0', verbose: true });
      msgs[4].content[0].text = 'Module 0 fails at step 0, because the cache is stale.';
      msgs[1].name = 'bob';
      delete msgs[4].extra_field;
    } else {
      msgs[1].content[0].text = 'Reading it again.';
      msgs[2].content[1].text = 'and then?';
    }
    await same(fast, slow, msgs, opts);
    await same(fast, slow, msgs, opts, 'guardSources');
    // removed from the middle (whole turns), reordered turns, the same object twice
    msgs.splice(5, 4);
    await same(fast, slow, msgs, opts);
    const reordered = [...msgs.slice(0, 1), ...msgs.slice(9, 13), ...msgs.slice(1, 9), ...msgs.slice(13)];
    await same(fast, slow, reordered, opts);
    const twice = [...msgs, msgs[msgs.length - 1]];
    const r = await same(fast, slow, twice, opts);
    assert.notEqual(r.messages.at(-1), r.messages.at(-2));
    // a tool result without its call (sanitized away), options changing between calls
    await same(fast, slow, [...msgs.slice(0, 3), ...msgs.slice(4)], opts);
    await same(fast, slow, msgs, { ...opts, guidance: 'Continue concisely.' });
    // frozen input
    await same(fast, slow, deepFreeze(structuredClone(msgs)), opts);
  });

  test(`${format}: layer 1 remembered per message (tight shares, previews, the emergency pass) equals the plain path`, async () => {
    // Tool outputs share a tight total and attachments a small budget, so a new output or
    // attachment changes the limits of the remembered ones; edits in place change their content.
    const cfg = { model, format, contextWindow: 300_000, toolOutputLimit: 3_000, toolOutputTotal: 5_000, attachmentBudget: 1_200 };
    const fast = new ContextGuard(cfg);
    const slow = new ContextGuard(cfg);
    const msgs = make(10);
    const system = format === 'anthropic' ? 'You read files.' : undefined;
    const opts = system ? { system } : {};
    await same(fast, slow, msgs, opts);
    await same(fast, slow, msgs, opts);
    for (const extra of make(4).slice(format === 'openai' ? 1 : 0)) {
      msgs.push(extra);
      await same(fast, slow, msgs, opts);
    }
    await same(fast, slow, msgs, opts, 'guardSources');
    await same(fast, slow, msgs, { ...opts, emergency: true }, 'guardSources');
    // a remembered tool output and an attachment edited in place
    const big = msgs.findIndex((m) => JSON.stringify(m).length > 20_000);
    if (format === 'openai') msgs[big].content += '\nmore output';
    else msgs[big].content[0].content += '\nmore output';
    const att = msgs.findIndex((m) => typeof m.content === 'string' && m.content.includes('<attachment'));
    if (att >= 0) msgs[att].content = msgs[att].content.replace('Ligne', 'Line');
    await same(fast, slow, msgs, opts);
    await same(fast, slow, msgs, opts);
    // the same remembered output twice, and one dropped (the shares of the others grow)
    await same(fast, slow, [...msgs, ...msgs.slice(-4)], opts);
    msgs.splice(big - 1, 4);
    await same(fast, slow, msgs, opts);
    await same(fast, slow, msgs, { ...opts, force: true });
    await same(fast, slow, msgs, { ...opts, emergency: true }, 'guardSources');
  });

  test(`${format}: compaction, the emergency layer and errors equal the plain path`, async () => {
    const summarize = async (req) => `Summary of ${req.messages.length} messages.`;
    const cfg = { model, format, contextWindow: 60_000, maxOutputTokens: 4_000, toolOutputLimit: 1_000 };
    const fast = new ContextGuard(cfg);
    const slow = new ContextGuard(cfg);
    const msgs = make(16);
    await same(fast, slow, msgs, { summarize });
    const r = await same(fast, slow, msgs, { summarize, force: true });
    assert.ok(r.compaction && r.checkpoint, 'compacted');
    await same(fast, slow, msgs, { summarize: async () => { throw new Error('down'); }, force: true });
    await same(fast, slow, msgs, {});
    // errors: a bad message among remembered ones, at its index; a message JSON would change
    const bad = [...msgs.slice(0, 5), { role: 'wizard', content: 'x' }, ...msgs.slice(5)];
    assert.equal(await same(fast, slow, bad, {}), undefined);
    const dated = [...msgs, { role: 'user', content: 'when?', at: new Date(0) }];
    assert.equal(await same(fast, slow, dated, {}), undefined);
    const tiny = new ContextGuard({ model, format, contextWindow: 9_000, maxOutputTokens: 1_000 });
    const tinySlow = new ContextGuard({ model, format, contextWindow: 9_000, maxOutputTokens: 1_000 });
    await same(tiny, tinySlow, msgs, {});
    await same(tiny, tinySlow, [...msgs, { role: 'user', content: 'word '.repeat(20_000) }], {});
    // and the guard keeps working
    await same(fast, slow, msgs, {});
  });
}

/** Anthropic: tool results alone in their user message, two in one, and one beside text. */
function anthropicTools(turns) {
  const m = [];
  for (let i = 0; i < turns; i++) {
    m.push({ role: 'user', content: `Q${i}: read file ${i}.` });
    const two = i % 3 === 1;
    m.push({ role: 'assistant', content: [{ type: 'tool_use', id: `t${i}`, name: 'read', input: { path: `f${i}` } }, ...(two ? [{ type: 'tool_use', id: `u${i}`, name: 'grep', input: { q: `${i}` } }] : [])] });
    const result = (id, n) => ({ type: 'tool_result', tool_use_id: id, content: `row ${i} of ${id}: data\n`.repeat(n) });
    const content = [result(`t${i}`, 900 + 300 * (i % 4))];
    if (two) content.push(result(`u${i}`, 1_200));
    if (i % 4 === 3) content.push({ type: 'text', text: 'and?' });
    m.push({ role: 'user', content });
    m.push({ role: 'assistant', content: `File ${i} read.` });
  }
  return m;
}

/** OpenAI: one tool output per turn, of varying sizes. */
function openaiTools(turns) {
  const m = [{ role: 'system', content: 'You run tools.' }];
  for (let i = 0; i < turns; i++) {
    m.push({ role: 'user', content: `Q${i}: run ${i}.` });
    m.push({ role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'run', arguments: '{}' } }] });
    m.push({ role: 'tool', tool_call_id: `c${i}`, content: `out ${i}: line\n`.repeat(900 + 300 * (i % 4)) });
    m.push({ role: 'assistant', content: `Ran ${i}.` });
  }
  return m;
}

/** Count, per stored call, the messages wasm wrote, named as the caller's, or named as kept outputs. */
function watchStored(guard) {
  const proto = Object.getPrototypeOf(guard);
  const inner = { prepareStored: proto.prepareStored, guardSourcesStored: proto.guardSourcesStored };
  const calls = [];
  const tally = (r) => {
    const c = { written: 0, same: 0, kept: 0, keep: 0, names: [] };
    let run = 0;
    r.messages.forEach((m, i) => {
      const name = r.keptAs[i] === -2 ? r.keptRuns[run++] : r.keptAs[i] >= 0 ? String(r.keptAs[i]) : null;
      if (r.sameAs[i] >= 0) c.same++;
      else if (m === null) c.kept++;
      else if (typeof name === 'string') c.keep++;
      else c.written++;
      if (typeof name === 'string') c.names.push(name);
    });
    calls.push(c);
    return r;
  };
  proto.prepareStored = function (...args) {
    const p = inner.prepareStored.apply(this, args);
    return p === undefined ? p : p.then(tally);
  };
  proto.guardSourcesStored = function (...args) {
    const r = inner.guardSourcesStored.apply(this, args);
    return r === undefined ? r : tally(r);
  };
  return { calls, restore: () => Object.assign(proto, inner) };
}

for (const [format, model, make] of [
  ['openai', 'gpt-4o', openaiTools],
  ['anthropic', 'claude-sonnet-4-5', anthropicTools],
]) {
  test(`${format}: compacted tool outputs kept from earlier results (stay, change share, disappear, reappear) equal the plain path`, async () => {
    const cfg = { model, format, contextWindow: 400_000, toolOutputLimit: 2_500, toolOutputTotal: 12_000 };
    const fast = new ContextGuard(cfg);
    const slow = new ContextGuard(cfg);
    const watch = watchStored(fast);
    try {
      const msgs = make(12);
      let last = await same(fast, slow, msgs);
      assert.ok(watch.calls[0].keep > 0, 'the first result names outputs to keep');
      // stay: grown by a message, every compacted output comes back by name, none as JSON (but
      // an Anthropic one beside text in its message: that message is written, as before)
      msgs.push({ role: 'user', content: 'next' });
      let r = await same(fast, slow, msgs);
      const mixed = msgs.filter((m) => Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_result') && m.content.some((b) => b.type === 'text')).length;
      assert.ok(watch.calls[1].written <= mixed && watch.calls[1].keep === 0, JSON.stringify(watch.calls[1]));
      assert.equal(watch.calls[1].kept, watch.calls[0].keep);
      assertNoSharing(r, last, 'two results');
      // the host changes a kept output in its result: the next result is not affected
      const k = r.messages.findIndex((m) => JSON.stringify(m).includes('truncated') || JSON.stringify(m).includes('omitted'));
      assert.ok(k >= 0, 'a compacted output in the result');
      r.messages[k].content = format === 'openai' ? 'changed by the host' : [{ type: 'text', text: 'changed by the host' }];
      last = r;
      r = await same(fast, slow, msgs);
      assertNoSharing(r, last, 'two results');
      last = await same(fast, slow, msgs, {}, 'guardSources');
      assertNoSharing(last, r, 'two results');
      // change form: more outputs than the total holds, so a clearing step clears or compacts
      // older ones by age, and the new ones are compacted under their limit
      const grown = [...msgs, ...make(16).slice(format === 'openai' ? 49 : 48)];
      await same(fast, slow, grown);
      assert.ok(watch.calls.at(-1).keep > 0, 'new forms, new outputs to keep');
      await same(fast, slow, grown);
      assert.equal(watch.calls.at(-1).keep, 0);
      // disappear: the outputs dropped, then reappear (the same objects, then equal copies)
      const kept = watch.calls.length;
      const none = msgs.filter((m) => !JSON.stringify(m).includes('tool_result') && m.role !== 'tool' && !m.tool_calls && !(Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_use')));
      await same(fast, slow, none);
      assert.equal(watch.calls.at(-1).kept + watch.calls.at(-1).keep, 0);
      await same(fast, slow, msgs);
      assert.ok(watch.calls.at(-1).keep > 0, 'kept copies were dropped with the outputs');
      await same(fast, slow, structuredClone(msgs));
      await same(fast, slow, msgs, {}, 'guardSources');
      assert.ok(watch.calls.slice(kept).at(-1).kept > 0);
      // the same output twice in one conversation, and the emergency pass (other limits)
      await same(fast, slow, [...msgs, ...msgs.slice(1, 5)]);
      await same(fast, slow, msgs, { emergency: true }, 'guardSources');
      await same(fast, slow, msgs);
      if (format === 'anthropic') assert.ok(watch.calls.flatMap((c) => c.names).some((n) => n.includes(',')), 'two outputs in one message named together');
    } finally {
      watch.restore();
    }
  });

  test(`${format}: kept outputs stay while a prepare is pending, whatever other calls return`, async () => {
    const cfg = { model, format, contextWindow: 60_000, maxOutputTokens: 4_000, toolOutputLimit: 1_500, toolOutputTotal: 8_000 };
    const fast = new ContextGuard(cfg);
    const slow = new ContextGuard(cfg);
    const msgs = make(10);
    await same(fast, slow, msgs, {}, 'guardSources');
    await same(fast, slow, msgs, {}, 'guardSources');
    let release;
    const gate = new Promise((resolve) => { release = resolve; });
    const summarize = async (req) => {
      await gate;
      return `Summary of ${req.messages.length} messages.`;
    };
    const pending = fast.prepare(msgs, { summarize, force: true });
    // meanwhile: results without the outputs (a plain-path call would drop kept copies)
    const none = msgs.slice(0, 2);
    await same(fast, slow, none, {}, 'guardSources');
    await same(fast, slow, msgs.slice(0, 6), {}, 'guardSources');
    release();
    const a = await pending;
    const b = await slow.prepare(plainOf(msgs), { summarize: async (req) => `Summary of ${req.messages.length} messages.`, force: true });
    assert.equal(canonical(a), canonical(b));
    await same(fast, slow, msgs);
    await same(fast, slow, msgs, {}, 'guardSources');
  });
}

for (const [format, model, make, tools] of [
  ['openai', 'gpt-4o', openaiTools, [{ type: 'function', function: { name: 'run', description: 'Run it.', parameters: { type: 'object', properties: {} } } }]],
  ['anthropic', 'claude-sonnet-4-5', anthropicTools, [{ name: 'read', description: 'Read a file.', input_schema: { type: 'object', properties: {} } }]],
]) {
  test(`${format}: calls made while prepare holds the stored messages (before it starts) equal the plain path, and the store recovers`, async () => {
    const cfg = { model, format, contextWindow: 400_000, toolOutputLimit: 2_500, toolOutputTotal: 12_000 };
    const fast = new ContextGuard(cfg);
    const slow = new ContextGuard(cfg);
    const msgs = make(8);
    const system = format === 'anthropic' ? 'You read files.' : undefined;
    const opts = system ? { system, tools } : { tools };
    await same(fast, slow, msgs, opts);
    msgs.push({ role: 'user', content: 'next' });
    // prepare() returns before its pipeline starts: measure, guardSources and another prepare
    // in that window (the same messages twice, too)
    const both = (g, m) => {
      const p = g.prepare(m, opts);
      const twice = [...m, m[1]];
      return { p, measure: g.measure(m, opts), sources: g.guardSources(twice, opts), p2: g.prepare(twice, opts) };
    };
    const a = both(fast, msgs);
    const b = both(slow, plainOf(msgs));
    assert.deepEqual(a.measure, b.measure);
    assert.equal(canonical(a.sources), canonical(b.sources));
    const [ap, ap2, bp, bp2] = await Promise.all([a.p, a.p2, b.p, b.p2]);
    assert.equal(canonical(ap), canonical(bp));
    assert.equal(canonical(ap2), canonical(bp2));
    assertNoSharing(ap, ap2, 'two results');
    // and afterwards only new messages cross again
    await same(fast, slow, msgs, opts);
    const proto = Object.getPrototypeOf(fast);
    const inner = proto.prepareStored;
    const seen = [];
    proto.prepareStored = function (ids, fresh, ...rest) {
      seen.push(fresh.ids.length);
      return inner.call(this, ids, fresh, ...rest);
    };
    try {
      msgs.push({ role: 'user', content: 'and next' });
      await same(fast, slow, msgs, opts);
      await same(fast, slow, [...msgs, msgs[2]], opts);
    } finally {
      proto.prepareStored = inner;
    }
    assert.deepEqual(seen, [1, 0]);
  });
}

test('values the memo does not take (lone surrogates, class instances, undefined fields) read as on the plain path', async () => {
  const fast = new ContextGuard({ model: 'gpt-4o' });
  const slow = new ContextGuard({ model: 'gpt-4o' });
  const msgs = openaiChat(3);
  msgs.push({ role: 'user', content: 'broken \uD800 surrogate', name: undefined });
  await same(fast, slow, msgs);
  msgs.pop();
  msgs.push({ role: 'user', content: 'fine', name: undefined, extra: { a: undefined, b: [1, -0, 'x'] } });
  await same(fast, slow, msgs);
  await same(fast, slow, msgs);
  await same(fast, slow, msgs, {}, 'guardSources');
});

test('AI SDK messages (read in context) take the plain path', async () => {
  const fast = new ContextGuard({ model: 'gpt-4o', format: 'ai-sdk' });
  const slow = new ContextGuard({ model: 'gpt-4o', format: 'ai-sdk' });
  const msgs = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: [{ type: 'text', text: 'Run it.' }] },
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'a', toolName: 'run', input: { x: 1 } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'a', toolName: 'run', output: { type: 'text', value: 'ok\n'.repeat(5000) } }] },
  ];
  await same(fast, slow, msgs);
  await same(fast, slow, msgs);
  await same(fast, slow, msgs, {}, 'guardSources');
});

test('only new or changed messages cross into wasm, and unchanged ones do not come back as JSON', async () => {
  const guard = new ContextGuard({ model: 'gpt-4o' });
  const proto = Object.getPrototypeOf(guard);
  const inner = proto.prepareStored;
  const seen = [];
  const named = [];
  proto.prepareStored = function (ids, fresh, ...rest) {
    seen.push(fresh.ids.length);
    return inner.call(this, ids, fresh, ...rest).then((r) => {
      named.push(r.sameAs.filter((k) => k >= 0).length);
      return r;
    });
  };
  try {
    const msgs = openaiChat(10);
    await guard.prepare(msgs);
    msgs.push({ role: 'user', content: 'next' });
    const r = await guard.prepare(msgs);
    assert.deepEqual(seen, [msgs.length - 1, 1]);
    assert.equal(r.messages.length, msgs.length);
    // every message but the compacted tool outputs comes back as an index
    const compacted = r.traces.find((t) => t.operation === 'tool_output')?.messagesTruncated ?? 0;
    assert.equal(named[1], msgs.length - compacted);
  } finally {
    proto.prepareStored = inner;
  }
});
