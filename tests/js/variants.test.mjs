// The single-encoding builds `ctxguard/o200k` and `ctxguard/cl100k`: the same API and the same
// counts as `ctxguard` for their encoding, and a clear UNKNOWN_ENCODING (never a silent byte
// count) for the one they leave out — asked for by name or through a model.
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import * as full from 'ctxguard';
import * as o200k from 'ctxguard/o200k';
import * as cl100k from 'ctxguard/cl100k';

const text = 'Le renard brun saute par-dessus le chien paresseux. 快速的棕色狐狸跳过了懒狗。 fn main() { println!("hi"); }';
const chat = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: text },
  { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'grep', arguments: '{"q":"fox"}' } }] },
  { role: 'tool', tool_call_id: 'c1', content: 'a.txt:1: fox\n'.repeat(30) },
];

for (const [name, mod, own, other, ownModel, otherModel] of [
  ['o200k', o200k, 'o200k_base', 'cl100k_base', 'gpt-4o', 'gpt-4'],
  ['cl100k', cl100k, 'cl100k_base', 'o200k_base', 'gpt-4', 'gpt-4o'],
]) {
  test(`ctxguard/${name}: same exports and counts as ctxguard for ${own}`, () => {
    assert.deepEqual(Object.keys(mod).sort(), Object.keys(full).sort());
    assert.equal(mod.countTokens(text, { encoding: own }), full.countTokens(text, { encoding: own }));
    assert.deepEqual(mod.countMessages(chat, { model: ownModel }), full.countMessages(chat, { model: ownModel }));
    const g = new mod.ContextGuard({ model: ownModel });
    assert.equal(g.measure(chat).usedTokens, new full.ContextGuard({ model: ownModel }).measure(chat).usedTokens);
  });

  test(`ctxguard/${name}: ${other} is UNKNOWN_ENCODING everywhere, and the module keeps working`, () => {
    const unknown = (e) => e.name === 'CtxguardError' && e.code === 'UNKNOWN_ENCODING' && e.message.includes(other);
    assert.throws(() => mod.countTokens(text, { encoding: other }), unknown);
    assert.throws(() => mod.countTokens(text, { model: otherModel }), unknown);
    assert.throws(() => mod.countMessages(chat, { model: otherModel }), unknown);
    assert.throws(() => new mod.ContextGuard({ model: otherModel }), unknown);
    assert.throws(() => new mod.ContextGuard({ model: ownModel, encoding: other }), unknown);
    assert.throws(() => mod.compactToolOutput('x\n'.repeat(100), { limit: 10, encoding: other }), unknown);
    assert.equal(mod.countTokens('hello world', { encoding: own }), 2);
    // With nothing named, the build's own encoding is the default.
    assert.equal(mod.countTokens(text), mod.countTokens(text, { encoding: own }));
    assert.equal(mod.countMessages(chat).encoding, own);
    assert.equal(new mod.ContextGuard({ contextWindow: 100000 }).measure(chat).encoding, own);
  });
}

test('each single-encoding .wasm is smaller than the full one', () => {
  const root = dirname(createRequire(import.meta.url).resolve('ctxguard/package.json'));
  const size = (p) => statSync(join(root, p)).size;
  const both = size('ctxguard_wasm_bg.wasm');
  assert.ok(size('o200k/ctxguard_wasm_bg.wasm') < both);
  assert.ok(size('cl100k/ctxguard_wasm_bg.wasm') < size('o200k/ctxguard_wasm_bg.wasm'));
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  assert.equal(manifest.exports['./o200k'].browser, './o200k/index.js');
  assert.ok(manifest.files.includes('cl100k/'));
});
