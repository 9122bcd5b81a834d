// What the binding returns against what index.d.ts declares, field by field: real calls of every
// function and guard method that returns data (a conversation with tool calls, a large tool
// output, an attachment, a summarizer, a checkpoint and its restore, provider usage and an
// overflow error), each result walked against its declared return type with the TypeScript
// checker. A field the Rust side returns that the types do not declare, a required field it does
// not return, or a value of the wrong kind fails here with its path: the result types are written
// by hand (they carry the SDK generics), and this keeps them the Rust types' (src/wasm/, serde).
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import * as ctxguard from 'ctxguard';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dtsPath = join(root, 'src', 'js', 'index.d.ts');
const program = ts.createProgram([dtsPath], { strict: true, noEmit: true, skipLibCheck: true, lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'] });
const checker = program.getTypeChecker();
const source = program.getSourceFile(dtsPath);

/** The declared return type of an exported function, or of a ContextGuard member (a getter or property: its type). */
function declared(name, member) {
  let node;
  ts.forEachChild(source, (n) => {
    if (!member && ts.isFunctionDeclaration(n) && n.name?.text === name) node ??= n;
    if (member && ts.isClassDeclaration(n) && n.name?.text === name) {
      node = n.members.find((m) => m.name?.text === member && !ts.isSetAccessor(m));
    }
  });
  assert.ok(node, `index.d.ts declares ${member ? `${name}.${member}` : name}`);
  if (ts.isPropertyDeclaration(node)) return checker.getTypeAtLocation(node);
  const type = checker.getReturnTypeOfSignature(checker.getSignatureFromDeclaration(node));
  return type.symbol?.name === 'Promise' ? checker.getTypeArguments(type)[0] : type;
}

const nullish = (t) => t.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined | ts.TypeFlags.Void);
const open = (t) => t.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown | ts.TypeFlags.TypeParameter | ts.TypeFlags.Index | ts.TypeFlags.IndexedAccess | ts.TypeFlags.Conditional | ts.TypeFlags.Substitution);

/** The object types results were checked against (their names), over both tests. */
const visited = new Set();

/** Problems of `value` against type `t` at `path` (an empty list: it fits). */
function fit(value, t, path, depth = 0) {
  if (depth > 12 || open(t)) return [];
  if (t.isUnion()) {
    if (value === null || value === undefined) return t.types.some(nullish) ? [] : [`${path}: ${value} where ${checker.typeToString(t)} is declared`];
    let best = null;
    for (const member of t.types.filter((m) => !nullish(m))) {
      const p = fit(value, member, path, depth + 1);
      if (p.length === 0) return [];
      if (best === null || p.length < best.length) best = p;
    }
    return best ?? [];
  }
  if (value === null || value === undefined) return nullish(t) ? [] : [`${path}: ${value} where ${checker.typeToString(t)} is declared`];
  if (t.flags & ts.TypeFlags.StringLike) return typeof value === 'string' && (!t.isStringLiteral() || value === t.value) ? [] : [`${path}: ${JSON.stringify(value)} is not ${checker.typeToString(t)}`];
  if (t.flags & ts.TypeFlags.NumberLike) return typeof value === 'number' && (!t.isNumberLiteral() || value === t.value) ? [] : [`${path}: ${JSON.stringify(value)} is not ${checker.typeToString(t)}`];
  if (t.flags & ts.TypeFlags.BooleanLike) {
    const want = checker.typeToString(t);
    return typeof value === 'boolean' && (want === 'boolean' || want === String(value)) ? [] : [`${path}: ${JSON.stringify(value)} is not ${want}`];
  }
  if (checker.isArrayType(t) || checker.isTupleType(t)) {
    if (!Array.isArray(value)) return [`${path}: not an array`];
    const args = checker.getTypeArguments(t);
    return value.slice(0, 30).flatMap((v, i) => fit(v, checker.isTupleType(t) ? (args[i] ?? args[args.length - 1]) : args[0], `${path}[${i}]`, depth + 1));
  }
  if (t.getCallSignatures().length > 0) return typeof value === 'function' ? [] : [`${path}: not a function`];
  if (!(t.flags & ts.TypeFlags.Object) && !t.isIntersection()) return [];
  if (typeof value !== 'object') return [`${path}: ${typeof value} where ${checker.typeToString(t)} is declared`];
  if (t.symbol?.name === 'Map' || t.symbol?.name === 'Set') return [];
  visited.add(checker.typeToString(t));
  const props = checker.getPropertiesOfType(t);
  const indexed = checker.getIndexInfosOfType(t).length > 0;
  const problems = [];
  for (const key of Object.keys(value)) {
    if (!props.some((p) => p.name === key) && !indexed) problems.push(`${path}.${key}: returned, not declared in ${checker.typeToString(t)}`);
  }
  for (const p of props) {
    const v = value[p.name];
    const optional = (p.flags & ts.SymbolFlags.Optional) !== 0;
    if (v === undefined) {
      if (!optional) problems.push(`${path}.${p.name}: declared (${checker.typeToString(t)}), not returned`);
      continue;
    }
    problems.push(...fit(v, checker.getTypeOfSymbol(p), `${path}.${p.name}`, depth + 1));
  }
  return problems;
}

function check(results) {
  const problems = results.flatMap(([label, value, type]) => fit(value, type, label));
  assert.deepEqual(problems, [], `results that differ from index.d.ts:\n${problems.join('\n')}`);
}

const bigOutput = Array.from({ length: 3000 }, (_, i) => `line ${i}: ${'x'.repeat(20 + (i % 30))}`).join('\n');
const attachment = Array.from({ length: 2500 }, (_, i) => `row ${i}, value ${i * 7}, note ${'lorem ipsum '.repeat(3)}`).join('\n');

/** A tool loop with a large output, a pasted attachment and enough turns to need a summary. */
function conversation(turns) {
  const messages = [{ role: 'system', content: 'You are a careful assistant.' }];
  for (let t = 0; t < turns; t++) {
    messages.push({ role: 'user', content: `Question ${t}: ${'please look into the logs and explain. '.repeat(20)}` });
    messages.push({ role: 'assistant', content: null, tool_calls: [{ id: `call_${t}`, type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ path: `src/f${t}.rs` }) } }] });
    messages.push({ role: 'tool', tool_call_id: `call_${t}`, content: t % 3 === 0 ? bigOutput : `ok ${t}` });
    messages.push({ role: 'assistant', content: `Answer ${t}: ${'the file does what it says. '.repeat(30)}` });
  }
  messages.push({ role: 'user', content: [{ type: 'text', text: 'And this file?' }, { type: 'text', text: `<attachment name="data.csv">\n${attachment}\n</attachment>` }] });
  return messages;
}

test('free functions return what index.d.ts declares', async () => {
  const chat = conversation(4);
  const listed = ctxguard.listAttachments(chat, { format: 'openai' });
  check([
    ['countMessages', ctxguard.countMessages(chat, { model: 'gpt-4o', format: 'openai', tools: [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }] }), declared('countMessages')],
    ['modelInfo', ctxguard.modelInfo('claude-sonnet-5-5'), declared('modelInfo')],
    ['modelInfo(unknown)', ctxguard.modelInfo('my-local-model'), declared('modelInfo')],
    ['knownModels', ctxguard.knownModels(), declared('knownModels')],
    ['compactToolOutput', ctxguard.compactToolOutput(bigOutput, { limit: 500, retrievalTool: 'read_attachment', callId: 'call_0' }), declared('compactToolOutput')],
    ['previewAttachment', ctxguard.previewAttachment(attachment, { limit: 400, name: 'data.csv', type: 'text/csv' }), declared('previewAttachment')],
    ['listAttachments', listed, declared('listAttachments')],
    ['readAttachment', ctxguard.readAttachment(new Map(listed.map((a) => [a.id, a.text])), { id: listed[0]?.id ?? 'none', limit: 300, offset: 100 }), declared('readAttachment')],
    ['readAttachmentTool', ctxguard.readAttachmentTool({ format: 'anthropic' }), declared('readAttachmentTool')],
    ['classifyProviderError', ctxguard.classifyProviderError({ status: 400, message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 131000 tokens." }), declared('classifyProviderError')],
    ['classifyProviderError(429)', ctxguard.classifyProviderError({ status: 429, message: 'Rate limit reached' }), declared('classifyProviderError')],
    ['resolveHistory', ctxguard.resolveHistory([{ id: 1, messages: chat.slice(0, 5) }, { id: 2, messages: chat.slice(5) }]), declared('resolveHistory')],
    ['memoryStats', ctxguard.memoryStats(), declared('memoryStats')],
    ['loadVocabulary', await ctxguard.loadVocabulary('mistral-spm-v7'), declared('loadVocabulary')],
  ]);
  assert.ok(listed.length > 0, 'the conversation has an attachment');
});

test('a guard returns what index.d.ts declares, through a whole session', async () => {
  const guard = new ctxguard.ContextGuard({ model: 'gpt-4o', contextWindow: 12_000, maxOutputTokens: 1_000 });
  const chat = conversation(12);
  const summarize = async ({ messages }) => `Summary of ${messages.length} messages: the files were read and explained.`;
  const prepared = await guard.prepare(chat, { summarize, force: true });
  assert.ok(prepared.checkpoint, 'the session compacted: its result carries a checkpoint');
  const failing = await new ctxguard.ContextGuard({ model: 'gpt-4o', contextWindow: 12_000, maxOutputTokens: 1_000 }).prepare(chat, {
    force: true,
    summarize: () => {
      throw new Error('summarizer down');
    },
    retryDelayMs: 1,
  });
  assert.equal(failing.degraded, true);
  const fresh = new ctxguard.ContextGuard({ model: 'gpt-4o', contextWindow: 12_000, maxOutputTokens: 1_000 });
  const restored = fresh.restore(JSON.parse(JSON.stringify(prepared.checkpoint)));
  const overflow = guard.observeOverflow({ status: 400, message: "This model's maximum context length is 12000 tokens. However, your messages resulted in 12500 tokens." }, prepared.messages);
  check([
    ['guard.budget', guard.budget, declared('ContextGuard', 'budget')],
    ['guard.model', guard.model, declared('ContextGuard', 'model')],
    ['guard.sourceLimits', guard.sourceLimits, declared('ContextGuard', 'sourceLimits')],
    ['guard.measure', guard.measure(chat), declared('ContextGuard', 'measure')],
    ['guard.guardSources', guard.guardSources(chat), declared('ContextGuard', 'guardSources')],
    ['guard.prepare', prepared, declared('ContextGuard', 'prepare')],
    ['guard.prepare(failing summarizer)', failing, declared('ContextGuard', 'prepare')],
    ['guard.restore', restored, declared('ContextGuard', 'restore')],
    ['fresh.prepare(after restore)', await fresh.prepare(chat, { summarize }), declared('ContextGuard', 'prepare')],
    ['guard.observeUsage', guard.observeUsage({ messages: prepared.messages, usage: { prompt_tokens: 9000, completion_tokens: 200 } }), declared('ContextGuard', 'observeUsage')],
    ['guard.observeOverflow', overflow, declared('ContextGuard', 'observeOverflow')],
    ['guard.calibration', guard.calibration, declared('ContextGuard', 'calibration')],
    ['guard.cacheStats', guard.cacheStats, declared('ContextGuard', 'cacheStats')],
    ['guard.settle', await guard.settle(chat, { summarize: () => ({ session_state: { goal: 'explain the files' }, memory_entries: [], reflections: [], learnings: [] }) }), declared('ContextGuard', 'settle')],
  ]);
});

test('a Claude guard with preserved thinking returns what index.d.ts declares', async () => {
  const guard = new ctxguard.ContextGuard({ model: 'claude-sonnet-5-5', contextWindow: 30_000, maxOutputTokens: 2_000 });
  const messages = [];
  let last;
  for (let t = 0; t < 24; t++) {
    messages.push({ role: 'user', content: t === 0 ? 'Fix the failing test.' : [{ type: 'tool_result', tool_use_id: `toolu_${t - 1}`, content: bigOutput.slice(0, 6000 + t) }] });
    messages.push({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: `Step ${t}: read the next file.`, signature: `sig${t}` },
        { type: 'tool_use', id: `toolu_${t}`, name: 'read_file', input: { path: `src/f${t}.rs` } },
      ],
    });
    last = await guard.prepare(messages.concat([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${t}`, content: 'ok' }] }]), { system: 'You fix tests.' });
  }
  assert.ok(last.metrics.edits.thinking, 'the metrics carry a thinking report');
  check([
    ['claude.prepare', last, declared('ContextGuard', 'prepare')],
    ['claude.measure', guard.measure(messages, { system: 'You fix tests.' }), declared('ContextGuard', 'measure')],
    ['claude.countMessages', ctxguard.countMessages(messages, { model: 'claude-sonnet-5-5', format: 'anthropic', system: 'You fix tests.' }), declared('countMessages')],
  ]);
});

test('the calls above reach the result types', () => {
  // Every object type a result was walked against, by name: the walk is not vacuous.
  console.log(`${visited.size} object types checked: ${[...visited].sort().join(', ')}`);
  assert.ok(visited.size >= 35, `only ${visited.size} result types reached`);
});
