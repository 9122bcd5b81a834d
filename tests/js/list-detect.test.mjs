// listAttachments and detectFormat through the built package: what the source guards find, with
// the ids and offsets their previews name, the five formats recognized, and hostile input that
// gets an Error with a stable code (never a panic, and the module keeps working).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ContextGuard, countTokens, detectFormat, listAttachments, readAttachment } from 'ctxguard';
import { throwsCtxguard, withFrozen } from './helpers.mjs';

const prose = (n, w = 'lorem') => Array.from({ length: n }, (_, i) => `${w}${i % 1000}`).join(' ');
const b64 = (s) => Buffer.from(s, 'utf8').toString('base64');

function conversation() {
  return [
    { role: 'system', content: 'You review reports.' },
    { role: 'user', content: `The report <attachment name="report.md" type="text/markdown">${prose(3000, 'rep')}</attachment> and <attachment id="n1" name="notes.txt">short notes</attachment>` },
    { role: 'user', content: [{ type: 'text', text: 'and the log' }, { type: 'file', file: { filename: 'ci.log', file_id: 'file-ci' }, text: prose(2500, 'ci') }] },
  ];
}

test('listAttachments: every attachment with its text, id and place; the input untouched', () => {
  const list = withFrozen(conversation(), (msgs) => listAttachments(msgs, { format: 'openai', model: 'gpt-4o' }));
  assert.deepEqual(list.map((a) => [a.name, a.mediaType, a.message, a.part, a.form, a.offset]), [
    ['report.md', 'text/markdown', 1, null, 'attachment block', null],
    ['notes.txt', null, 1, null, 'attachment block', null],
    ['ci.log', null, 2, 1, 'file part', null],
  ]);
  assert.match(list[0].id, /^att_[0-9a-f]{12}$/);
  assert.deepEqual([list[1].id, list[1].text], ['n1', 'short notes']);
  assert.equal(list[2].id, 'file-ci');
  assert.equal(list[0].tokens, countTokens(list[0].text, { model: 'gpt-4o' }));
  assert.equal(list[2].chars, list[2].text.length);
});

test('listAttachments: the previews name listed ids, and their footer offsets are where reading goes on', () => {
  const guard = new ContextGuard({ model: 'gpt-4o', attachmentBudget: 600 });
  const raw = listAttachments(conversation());
  const visible = listAttachments(guard.guardSources(conversation()).messages);
  const source = new Map(raw.map((a) => [a.id, a.text]));
  const previews = visible.filter((a) => a.offset !== null);
  assert.equal(previews.length, 2);
  for (const p of previews) {
    assert.ok(source.has(p.id), `${p.id} is listed in the raw conversation`);
    const page = readAttachment(source, { id: p.id, offset: p.offset });
    assert.equal(page.offset, p.offset);
    assert.ok(source.get(p.id).startsWith(p.text.slice(0, 200)), 'the preview is the head of the text');
  }
  assert.equal(visible.find((a) => a.id === 'n1').offset, null, 'the small one is sent whole');
});

test('listAttachments: the system option and the other formats', () => {
  const sys = listAttachments([{ role: 'user', content: 'hi' }], { format: 'anthropic', system: '<attachment name="s.md">rules</attachment>' });
  assert.deepEqual(sys.map((a) => [a.name, a.message, a.text]), [['s.md', null, 'rules']]);
  const gemini = listAttachments([{ role: 'user', parts: [{ text: 'see' }, { inlineData: { mimeType: 'text/csv', data: b64('a,b\n1,2'), displayName: 't.csv' } }] }], { format: 'gemini' });
  assert.deepEqual(gemini.map((a) => [a.name, a.mediaType, a.text, a.part, a.form]), [['t.csv', 'text/csv', 'a,b\n1,2', 1, 'file part']]);
  const ai = listAttachments([{ role: 'user', content: [{ type: 'file', data: b64('echo hi'), mediaType: 'application/x-sh', filename: 'a.sh' }] }], { format: 'ai-sdk' });
  assert.deepEqual(ai.map((a) => a.text), ['echo hi'], 'every textual media type of the core');
  const doc = listAttachments([{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Hallo' }, title: 't.txt' }] }], { format: 'anthropic' });
  assert.deepEqual(doc.map((a) => [a.form, a.part]), [['document block', 0]]);
});

test('detectFormat: the five formats, requests and bare arrays, ambiguous and unknown input', () => {
  assert.equal(detectFormat([{ role: 'user', content: 'hi' }]), 'openai');
  assert.equal(detectFormat([{ role: 'assistant', content: null, tool_calls: [] }]), 'openai');
  assert.equal(detectFormat({ messages: [{ role: 'user', content: 'hi' }], system: 'Be brief.' }), 'anthropic');
  assert.equal(detectFormat([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'x' }] }]), 'anthropic');
  assert.equal(detectFormat({ messages: [], tools: { get: {} } }), 'ai-sdk');
  assert.equal(detectFormat([{ role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c', toolName: 't', input: {} }] }]), 'ai-sdk');
  assert.equal(detectFormat({ input: [{ role: 'user', content: 'hi' }], instructions: 'Be brief.' }), 'openai-responses');
  assert.equal(detectFormat([{ type: 'function_call', call_id: 'c', name: 't', arguments: '{}' }]), 'openai-responses');
  assert.equal(detectFormat({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }), 'gemini');
  assert.equal(detectFormat([{ role: 'model', parts: [{ text: 'hi' }] }]), 'gemini');
  for (const v of [undefined, null, 42, 'hi', {}, [7], { messages: 'x' }]) assert.equal(detectFormat(v), null, String(v));
});

const cyclic = [];
cyclic.push(cyclic);
let deep = [];
for (let i = 0; i < 10_000; i++) deep = [deep];
const deepObject = { messages: [{ role: 'user', content: deep }] };

test('hostile input: an Error with a stable code, and the module keeps working', () => {
  for (const x of [undefined, null, 42, 'just a string', {}, new Date(0), () => 1]) {
    throwsCtxguard(() => listAttachments(x), 'INVALID_MESSAGES');
  }
  throwsCtxguard(() => listAttachments(cyclic), 'INVALID_MESSAGES');
  throwsCtxguard(() => listAttachments([{ role: 'user', content: deep }]), ['INVALID_MESSAGES', 'INVALID_MESSAGE']);
  throwsCtxguard(() => listAttachments([1]), 'INVALID_MESSAGE');
  throwsCtxguard(() => listAttachments([], { format: 'smoke-signals' }), 'INVALID_OPTIONS');
  throwsCtxguard(() => listAttachments([], { tools: [] }), 'INVALID_OPTIONS');
  throwsCtxguard(() => listAttachments([], 'openai'), 'INVALID_OPTIONS');
  throwsCtxguard(() => listAttachments([{ role: 'user', content: [{ type: 'text', text: 1 }] }]), 'INVALID_CONTENT_PART');
  throwsCtxguard(() => detectFormat(cyclic), 'INVALID_MESSAGES');
  throwsCtxguard(() => detectFormat(new Map([['messages', []]])), 'INVALID_MESSAGES');
  throwsCtxguard(() => detectFormat(deepObject), 'INVALID_MESSAGES');
  throwsCtxguard(() => detectFormat({ messages: [{ role: 'user', content: 10n }] }), 'INVALID_MESSAGES');
  // Lone surrogates are read as U+FFFD, as everywhere else.
  const lone = listAttachments([{ role: 'user', content: '<attachment id="a\uD800">x\uDFFF</attachment>' }]);
  assert.deepEqual([lone[0].id, lone[0].text], ['a\uFFFD', 'x\uFFFD']);
  assert.equal(detectFormat([{ role: 'user', content: '\uD800' }]), 'openai');
  assert.equal(listAttachments([{ role: 'user', content: 'fine' }]).length, 0, 'still working');
});
