// The `ctxguard/gemini` build: Gemini's own tokenizer (gemma3) in WebAssembly. Gemini models count
// exact text there, equal to Google's tokenizer on the reference corpus (tests/gemini/); the
// other builds keep today's estimate and answer UNKNOWN_ENCODING for gemma3; the default .wasm
// carries no gemma3 data.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import * as full from 'ctxguard';
import * as o200k from 'ctxguard/o200k';
import * as o200kCount from 'ctxguard/o200k/count';
import * as gemini from 'ctxguard/gemini';

const here = dirname(fileURLToPath(import.meta.url));
const root = dirname(createRequire(import.meta.url).resolve('ctxguard/package.json'));
const corpus = JSON.parse(readFileSync(join(here, '..', 'gemini', 'corpus.json'), 'utf8'));
const reference = JSON.parse(readFileSync(join(here, '..', 'gemini', 'reference.json'), 'utf8'));
const unknown = (e) => e.name === 'CtxguardError' && e.code === 'UNKNOWN_ENCODING';

test('ctxguard/gemini: the same exports as ctxguard', () => {
  assert.deepEqual(Object.keys(gemini).sort(), Object.keys(full).sort());
});

test('ctxguard/gemini: every corpus text counts as Google’s tokenizer counts it', () => {
  assert.equal(corpus.length, reference.corpus.length);
  corpus.forEach((item, i) => {
    const want = reference.corpus[i];
    assert.equal(want.name, item.name);
    assert.equal(gemini.countTokens(item.text, { model: 'gemini-2.5-pro' }), want.count, item.name);
    assert.equal(gemini.countTokens(item.text, { encoding: 'gemma3' }), want.count, item.name);
  });
  // A megabyte without whitespace and 100k spaces, from the generated reference inputs.
  const gen = Object.fromEntries(reference.generated.map((g) => [g.name, g.count]));
  assert.equal(gemini.countTokens('a'.repeat(1_000_000), { model: 'gemini-3-pro-preview' }), gen['repeat-a-1m']);
  assert.equal(gemini.countTokens(' '.repeat(100_000), { model: 'gemini-2.0-flash' }), gen['repeat-space-100k']);
  assert.equal(gemini.countTokens('What is your name?', { model: 'gemini-2.5-flash' }), 5);
});

test('ctxguard/gemini: Gemini models are exact, with Google’s local counting rules', () => {
  const info = gemini.modelInfo('gemini-2.5-pro');
  assert.equal(info.encoding, 'gemma3');
  assert.equal(info.kind, 'exact');
  assert.equal(info.estimateFactor, 1);
  // google-genai's LocalTokenizer.count_tokens gives 8 for this text, 87 for the conversation of
  // tests/gemini/reference.rs: no per-message framing, no reply priming.
  const one = gemini.countMessages([{ role: 'user', content: "What's the weather in Paris?" }], { model: 'gemini-2.5-pro' });
  assert.deepEqual(one, { total: 8, perMessage: [8], toolDefinitions: 0, priming: 0, exact: true, kind: 'exact', encoding: 'gemma3' });
  const args = { city: 'Paris', days: 3, units: ['c', 'f'], opts: { detail: true, lang: 'fr' }, note: null };
  const response = { temp: 21.5, summary: 'Sunny and warm', hourly: [{ t: '09:00', sky: 'clear' }] };
  const call = gemini.countMessages(
    [{ role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: JSON.stringify(args) } }] }],
    { model: 'gemini-2.5-pro' },
  );
  assert.equal(call.total, 14);
  const result = gemini.countMessages([{ role: 'tool', tool_call_id: 'c1', name: 'get_weather', content: JSON.stringify(response) }], { model: 'gemini-2.5-pro' });
  assert.equal(result.total, 17);
  // Media are counted by Google's published rules and make the count an estimate.
  const image = gemini.countMessages(
    [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }],
    { model: 'gemini-3-pro-preview' },
  );
  assert.equal(image.kind, 'estimate');
  assert.equal(image.total, gemini.countTokens('What is this?', { model: 'gemini-3-pro-preview' }) + 1120);
  // The guard counts the same way.
  const g = new gemini.ContextGuard({ model: 'gemini-2.5-pro' });
  const m = g.measure([{ role: 'user', content: "What's the weather in Paris?" }]);
  assert.equal(m.encoding, 'gemma3');
  assert.equal(m.usedTokens, 8);
});

test('ctxguard/gemini: no OpenAI vocabulary; gemma3 is the default', () => {
  assert.throws(() => gemini.countTokens('hello', { encoding: 'o200k_base' }), (e) => unknown(e) && e.message.includes('ctxguard/gemini'));
  assert.throws(() => gemini.countTokens('hello', { model: 'gpt-4o' }), unknown);
  assert.equal(gemini.countTokens('What is your name?'), 5);
  assert.equal(gemini.countMessages([{ role: 'user', content: 'What is your name?' }]).encoding, 'gemma3');
});

test('builds without the gemini feature: gemma3 is UNKNOWN_ENCODING, Gemini stays the estimate', () => {
  for (const [name, mod] of [['ctxguard', full], ['ctxguard/o200k', o200k], ['ctxguard/o200k/count', o200kCount]]) {
    assert.throws(() => mod.countTokens('hello', { encoding: 'gemma3' }), (e) => unknown(e) && e.message.includes("'ctxguard/gemini'"), name);
    const info = mod.modelInfo('gemini-2.5-pro');
    assert.equal(info.kind, 'estimate', name);
    assert.equal(info.encoding, 'o200k_base', name);
    const text = 'Summarize the following meeting notes in three bullet points.';
    assert.equal(mod.countTokens(text, { model: 'gemini-2.5-pro' }), Math.ceil(mod.countTokens(text, { encoding: 'o200k_base' }) * info.estimateFactor), name);
  }
});

test('the gemma3 vocabulary is only in the gemini .wasm', () => {
  const magic = Buffer.from('CTXS');
  const wasm = (p) => readFileSync(join(root, p));
  assert.ok(wasm('gemini/ctxguard_wasm_bg.wasm').includes(magic));
  for (const p of ['ctxguard_wasm_bg.wasm', 'o200k/ctxguard_wasm_bg.wasm', 'cl100k/ctxguard_wasm_bg.wasm', 'o200k/count/ctxguard_wasm_bg.wasm']) {
    assert.ok(!wasm(p).includes(magic), p);
  }
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  assert.equal(manifest.exports['./gemini'].browser, './gemini/index.js');
  assert.equal(manifest.exports['./gemini'].node, './gemini/node.js');
  assert.ok(manifest.files.includes('gemini/'));
});
