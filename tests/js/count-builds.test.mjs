// The counting-only builds `ctxguard/o200k/count` and `ctxguard/cl100k/count` (a .wasm without
// the `pipeline` feature): the counting exports only, and for them the same counts, the same
// option handling and the same errors as the full build of the same encoding (`ctxguard/o200k`,
// `ctxguard/cl100k`) and the same counts as `ctxguard`; the encoding left out is
// UNKNOWN_ENCODING; the .wasm is a fraction of the full single-encoding build's.
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import * as both from 'ctxguard';
import * as o200kFull from 'ctxguard/o200k';
import * as cl100kFull from 'ctxguard/cl100k';
import * as o200k from 'ctxguard/o200k/count';
import * as cl100k from 'ctxguard/cl100k/count';

const root = dirname(createRequire(import.meta.url).resolve('ctxguard/package.json'));
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

// Prose, code, CJK, emoji and astral characters, a lone surrogate (read as U+FFFD), a long run
// without spaces, base64, whitespace runs, the empty string.
const texts = [
  '',
  'hello world',
  'Le renard brun saute par-dessus le chien paresseux. 快速的棕色狐狸跳过了懒狗。',
  'fn main() {\n    println!("{}", 1 + 2);\n}\n\n\n    \t',
  '👨‍👩‍👧‍👦 family 🇫🇷 flag 𝕏 astral',
  'lone \uD800 surrogate and \uDFFF another',
  'x'.repeat(5000),
  'abcdefghij'.repeat(700),
  Buffer.from('binary data '.repeat(400)).toString('base64'),
  'Ünïcödé ÀÉÎÕÜ ñ ß ø å æ œ — “quotes” … ‘single’',
  '日本語のテキストと한국어 텍스트와 Русский текст и العربية',
];

for (const [name, mod, full, own, other, ownModel, otherModel] of [
  ['o200k', o200k, o200kFull, 'o200k_base', 'cl100k_base', 'gpt-4o', 'gpt-4'],
  ['cl100k', cl100k, cl100kFull, 'cl100k_base', 'o200k_base', 'gpt-4', 'gpt-4o'],
]) {
  test(`ctxguard/${name}/count: exactly the counting exports`, () => {
    assert.deepEqual(Object.keys(mod).sort(), ['countTokens', 'knownModels', 'loadVocabulary', 'memoryStats', 'modelInfo', 'version']);
    assert.equal(mod.version(), full.version());
    assert.deepEqual(mod.knownModels(), full.knownModels());
    assert.deepEqual(mod.modelInfo(ownModel), full.modelInfo(ownModel));
    assert.deepEqual(mod.modelInfo('claude-sonnet-4-5'), full.modelInfo('claude-sonnet-4-5'));
    assert.ok(mod.memoryStats().wasmBytes > 0);
  });

  test(`ctxguard/${name}/count: the same counts as ctxguard for ${own}, by encoding, by model, by default`, () => {
    for (const text of texts) {
      const want = both.countTokens(text, { encoding: own });
      assert.equal(mod.countTokens(text, { encoding: own }), want, JSON.stringify(text.slice(0, 40)));
      assert.equal(mod.countTokens(text, { model: ownModel }), want);
      assert.equal(mod.countTokens(text), want, 'the build’s own encoding is the default');
      // A model whose tokenizer is not public: the same estimate (o200k-based: UNKNOWN_ENCODING
      // in the cl100k builds).
      const estimate = { model: 'claude-sonnet-4-5' };
      assert.deepEqual(capture(() => mod.countTokens(text, estimate)), renamed(capture(() => full.countTokens(text, estimate)), name));
    }
    assert.equal(mod.countTokens('tiktoken is great!', { encoding: own }), 6);
  });

  test(`ctxguard/${name}/count: the same errors as ctxguard/${name}, and the module keeps working`, () => {
    const throwing = new Proxy({}, { ownKeys() { throw new Error('trap'); } });
    const cases = [
      [42, undefined],
      [undefined, undefined],
      [{ text: 'hi' }, undefined],
      ['hi', 'o200k_base'],
      ['hi', []],
      ['hi', { encoding: 'p50k_base' }],
      ['hi', { encodnig: own }],
      ['hi', { encoding: 5 }],
      ['hi', { encoding: true }],
      ['hi', { encoding: [own] }],
      ['hi', { encoding: { name: own } }],
      ['hi', { encoding: NaN }],
      ['hi', { encoding: Symbol('s') }],
      ['hi', { model: new Date(0) }],
      ['hi', { model: 10n }],
      ['hi', { model: 'my-private-finetune' }],
      ['hi', throwing],
      ['hi', new Date(0)],
      ['hi', { toJSON: () => ({ encoding: own }) }],
      // A callback countTokens does not take is an unknown field, as any other.
      ['hi', { encoding: own, summarize: () => '' }],
    ];
    for (const [text, opts] of cases) {
      const got = capture(() => mod.countTokens(text, opts));
      const want = renamed(capture(() => full.countTokens(text, opts)), name);
      assert.deepEqual(got, want, `countTokens(${String(text)}, ${describe(opts)})`);
    }
    // Accepted by both: nulls, undefined fields, an empty bag.
    for (const opts of [null, {}, { encoding: null, model: undefined }, new Map([['a', 'b']]), Object.create(null)]) {
      assert.equal(mod.countTokens('hello world', opts), full.countTokens('hello world', opts), describe(opts));
    }
    const unknown = (e) => e.name === 'CtxguardError' && e.code === 'UNKNOWN_ENCODING' && e.message.includes(other);
    assert.throws(() => mod.countTokens('hi', { encoding: other }), unknown);
    assert.throws(() => mod.countTokens('hi', { model: otherModel }), unknown);
    assert.equal(mod.countTokens('hello world'), 2);
  });
}

test('the counting-only .wasm files are a fraction of the full single-encoding builds', () => {
  for (const enc of ['o200k', 'cl100k']) {
    const wasm = (p) => readFileSync(join(root, p));
    const count = wasm(`${enc}/count/ctxguard_wasm_bg.wasm`);
    const whole = wasm(`${enc}/ctxguard_wasm_bg.wasm`);
    assert.ok(statSync(join(root, `${enc}/count/ctxguard_wasm_bg.wasm`)).size < 0.8 * whole.length, enc);
    // What a page downloads: the vocabulary plus counting code, not the pipeline.
    assert.ok(gzipSync(count, { level: 9 }).length < 0.8 * gzipSync(whole, { level: 9 }).length, enc);
    assert.deepEqual(manifest.exports[`./${enc}/count`], {
      types: './count.d.ts',
      node: `./${enc}/count/node.js`,
      browser: `./${enc}/count/index.js`,
      default: `./${enc}/count/index.js`,
    });
  }
  assert.ok(manifest.files.includes('count.d.ts'));
});

/** An error of `ctxguard/<name>` as `ctxguard/<name>/count` words it (it names its build). */
function renamed(outcome, name) {
  if (!outcome.message) return outcome;
  const message = outcome.message
    .replace(`(ctxguard/${name})`, `(ctxguard/${name}/count)`)
    .replace("import 'ctxguard'", "import 'ctxguard/o200k/count' and 'ctxguard/cl100k/count' or 'ctxguard'");
  return { ...outcome, message };
}

function capture(f) {
  try {
    return { ok: f() };
  } catch (e) {
    return { name: e.name, code: e.code, message: e.message, isError: e instanceof Error };
  }
}

function describe(v) {
  if (v === undefined || v === null || typeof v !== 'object') return String(typeof v === 'symbol' ? 'symbol' : v);
  try {
    return JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? `${x}n` : typeof x === 'symbol' ? 'symbol' : x));
  } catch {
    return '[object]';
  }
}
