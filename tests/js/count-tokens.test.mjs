// countTokens against figures tiktoken itself gives (cross-checked with tiktoken-rs natively).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { countTokens, modelInfo } from 'ctxguard';

// [text, cl100k_base, o200k_base]
const FIGURES = [
  ['', 0, 0],
  ['hello world', 2, 2],
  ['tiktoken is great!', 6, 6],
  ['Hello, world!', 4, 4],
  ['antidisestablishmentarianism', 6, 6],
  ['こんにちは世界', 4, 2],
  ['🦀🦀🦀 rust crab', 11, 11],
  ['The quick brown fox jumps over the lazy dog.', 10, 10],
  // Special-token text in content is ordinary text, as providers treat it.
  ['<|endoftext|>', 7, 7],
];

test('countTokens equals tiktoken for both encodings', () => {
  for (const [text, cl100k, o200k] of FIGURES) {
    assert.equal(countTokens(text, { encoding: 'cl100k_base' }), cl100k, `cl100k_base ${JSON.stringify(text)}`);
    assert.equal(countTokens(text, { encoding: 'o200k_base' }), o200k, `o200k_base ${JSON.stringify(text)}`);
  }
});

test('countTokens picks the encoding from the model name', () => {
  assert.equal(countTokens('こんにちは世界', { model: 'gpt-4o' }), 2);
  assert.equal(countTokens('こんにちは世界', { model: 'gpt-4' }), 4);
  assert.equal(countTokens('こんにちは世界', { model: 'gpt-3.5-turbo-0125' }), 4);
  assert.equal(countTokens('こんにちは世界', { model: 'openai/gpt-4o-mini' }), 2);
});

test('an estimated model never counts below its base encoding', () => {
  const text = 'Summarize the following meeting notes in three bullet points, keeping names and dates.';
  for (const model of ['claude-sonnet-4-5', 'gemini-2.5-pro', 'llama-3.1-70b', 'some-model-nobody-knows']) {
    const info = modelInfo(model);
    assert.equal(info.kind, 'estimate', model);
    const base = countTokens(text, { encoding: info.encoding });
    const estimate = countTokens(text, { model });
    assert.ok(estimate >= base, `${model}: ${estimate} < ${base}`);
    assert.equal(estimate, Math.ceil(base * info.estimateFactor), model);
  }
});

test('the default encoding is o200k_base', () => {
  assert.equal(countTokens('こんにちは世界'), countTokens('こんにちは世界', { encoding: 'o200k_base' }));
});

test('lone surrogates count as U+FFFD instead of failing', () => {
  assert.equal(countTokens('abc\ud800def'), countTokens('abc\ufffddef'));
  assert.equal(countTokens('\udc00'), countTokens('\ufffd'));
});

test('a long text counts the same in one piece as in the sum of its paragraphs', () => {
  const paragraph = 'The context window is shared by the system prompt, the history and the answer.\n\n';
  const text = paragraph.repeat(2000);
  const one = countTokens(paragraph, { encoding: 'cl100k_base' });
  // Paragraph boundaries are "\n\n" followed by a letter, which always splits pieces.
  assert.equal(countTokens(text, { encoding: 'cl100k_base' }), one * 2000);
});
