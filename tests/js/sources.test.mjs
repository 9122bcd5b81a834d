// Source guards through the JS API: guardSources, compactToolOutput, previewAttachment and the
// read_attachment tool and reader, on real-looking requests.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ContextGuard,
  compactToolOutput,
  countTokens,
  previewAttachment,
  readAttachment,
  readAttachmentTool,
} from 'ctxguard';
import { throwsCtxguard, withFrozen } from './helpers.mjs';

const log = (n) => Array.from({ length: n }, (_, i) => `${String(i).padStart(5, '0')} ERROR worker-${i % 5} timeout after ${i % 300} ms\n`).join('');
const prose = (n, w = 'lorem') => Array.from({ length: n }, (_, i) => `${w}${i % 1000}`).join(' ');
const image = 'data:image/png;base64,' + 'iVBORw0KGgo'.repeat(200_000);

function request() {
  return [
    { role: 'system', content: 'You are a CI assistant.' },
    {
      role: 'user',
      content: [
        { type: 'text', text: `Logs attached <attachment id="ci-log" name="ci.log" type="text/plain">${log(4000)}</attachment>` },
        { type: 'image_url', image_url: { url: image, detail: 'low' } },
      ],
    },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'fetch_json', arguments: '{"url":"/runs"}' } }] },
    { role: 'tool', tool_call_id: 'call_9', content: JSON.stringify({ runs: Array.from({ length: 3000 }, (_, i) => ({ id: i, status: i % 7 ? 'ok' : 'failed', note: 'x'.repeat(40) })) }) },
    { role: 'user', content: 'Summarise the failures, s’il vous plaît.' },
  ];
}

test('guardSources: compacted JSON output, attachment preview, traces, input untouched', () => {
  const guard = new ContextGuard({ model: 'gpt-4.1', toolOutputLimit: 3000, attachmentBudget: 2000 });
  const seen = [];
  const r = withFrozen(request(), (msgs) => guard.guardSources(msgs, { onTrace: (t) => seen.push(t) }));
  assert.equal(r.system, null);
  assert.equal(r.messages.length, 5);
  const tool = JSON.parse(r.messages[3].content); // still valid JSON
  assert.ok(tool._ctxguard.startsWith('[ctxguard:compacted-tool-output]'));
  assert.ok(tool.runs.some((x) => typeof x === 'string' && x.includes('items omitted')));
  assert.ok(countTokens(r.messages[3].content) <= 3000);
  const text = r.messages[1].content[0].text;
  assert.match(text, /\[ctxguard:attachment-preview\] ci\.log \(text\/plain\)/);
  assert.match(text, /read_attachment\(\{"id": "ci-log", "offset": \d+\}\)/);
  assert.equal(r.messages[1].content[1].image_url.url, image, 'images pass through untouched');
  assert.deepEqual(r.messages[4], request()[4]);
  assert.deepEqual(r.traces.map((t) => [t.operation, t.status]), [['tool_output', 'applied'], ['attachment_preview', 'applied']]);
  assert.deepEqual(seen, r.traces);
  for (const t of r.traces) {
    assert.equal(t.tokensSaved, t.beforeTokens - t.afterTokens);
    assert.ok(t.durationMs >= 0);
  }
  assert.equal(r.traces[0].messagesTruncated, 1);
  assert.equal(r.traces[1].attachmentBlocksTruncated, 1);
  assert.ok(r.metrics.compacted);
  assert.ok(r.metrics.usedTokens < guard.measure(request()).usedTokens);
  // Running it on its own output changes nothing and reports no tool-output event.
  const again = guard.guardSources(r.messages);
  assert.deepEqual(again.messages, r.messages);
  assert.deepEqual(again.traces.map((t) => t.status), ['noop']);
});

test('a throwing onTrace does not break the call', () => {
  const guard = new ContextGuard({ model: 'gpt-4o', toolOutputLimit: 500 });
  const r = guard.guardSources(request(), { onTrace: () => { throw new Error('observer bug'); } });
  assert.equal(r.traces.length, 2);
  throwsCtxguard(() => guard.guardSources(request(), { onTrace: 5 }), 'INVALID_OPTIONS');
  throwsCtxguard(() => guard.guardSources(request(), { emergncy: true }), 'INVALID_OPTIONS');
});

test('compactToolOutput is byte-stable, idempotent and names the retrieval tool', () => {
  const text = log(3000);
  const a = compactToolOutput(text, { limit: 800, retrievalTool: 'get_tool_output', callId: 'call_1' });
  const b = compactToolOutput(text, { limit: 800, retrievalTool: 'get_tool_output', callId: 'call_1' });
  assert.equal(a.text, b.text);
  assert.ok(a.compacted && a.tokens <= 800 && a.originalTokens === countTokens(text));
  assert.match(a.text, /get_tool_output/);
  assert.ok(a.text.startsWith('00000 ERROR') && a.text.endsWith('ms\n'));
  const again = compactToolOutput(a.text, { limit: 800 });
  assert.equal(again.compacted, false);
  assert.equal(again.text, a.text);
  assert.equal(compactToolOutput('short', {}).compacted, false);
});

test('previewAttachment and the paged reader, with non-ASCII text', () => {
  const full = prose(20000, '日本語テキスト');
  const p = previewAttachment(full, { limit: 1000, id: 'doc-1', name: 'notes.txt', type: 'text/plain' });
  assert.ok(p.compacted && p.tokens <= 1000);
  assert.match(p.text, /notes\.txt \(text\/plain\): showing the first \d+ of \d+ tokens/);
  const pdf = previewAttachment(full, { limit: 1000, name: 'scan.pdf', type: 'application/pdf' });
  assert.match(pdf.text, /extracted from a binary file/);

  const source = new Map([['doc-1', full]]);
  let offset = 0;
  let joined = '';
  for (;;) {
    const page = readAttachment(source, { id: 'doc-1', offset, limit: 4000 });
    joined += page.text;
    if (page.nextOffset === null) break;
    offset = page.nextOffset;
  }
  assert.equal(joined, full);
  const first = readAttachment({ 'doc-1': full }, { id: 'doc-1' });
  assert.equal(first.offset, 0);
  assert.equal(first.nextOffset, 2000);
  throwsCtxguard(() => readAttachment({}, { id: 'nope' }), 'UNKNOWN_ATTACHMENT');
  // Only the source's own entries: inherited names are not attachments; a Map and an object agree.
  for (const id of ['toString', 'constructor', '__proto__', 'hasOwnProperty']) {
    throwsCtxguard(() => readAttachment({ a: 'x' }, { id }), 'UNKNOWN_ATTACHMENT');
  }
  throwsCtxguard(() => readAttachment(new Map([['a', 5]]), { id: 'a' }), 'INVALID_TEXT');
  throwsCtxguard(() => readAttachment({ a: 5 }, { id: 'a' }), 'INVALID_TEXT');
  assert.equal(readAttachment(new Map([['doc-1', full]]), { id: 'doc-1' }).text, first.text);
  throwsCtxguard(() => readAttachment(full, { id: 'x', offset: 10 ** 9 }), 'INVALID_OPTIONS');
  throwsCtxguard(() => readAttachment(full, { id: 'x', offset: -1 }), 'INVALID_OPTIONS');
  throwsCtxguard(() => readAttachment(full, {}), 'INVALID_OPTIONS');
});

test('readAttachmentTool in both formats', () => {
  const openai = readAttachmentTool();
  assert.equal(openai.type, 'function');
  assert.equal(openai.function.name, 'read_attachment');
  assert.deepEqual(openai.function.parameters.required, ['id']);
  const anthropic = readAttachmentTool({ format: 'anthropic' });
  assert.equal(anthropic.name, 'read_attachment');
  assert.equal(anthropic.input_schema.properties.offset.type, 'integer');
  throwsCtxguard(() => readAttachmentTool({ format: 'cohere' }), 'INVALID_OPTIONS');
});

test('an OpenAI file part with a text data URL is counted as its text and previewed', async () => {
  const { ContextGuard, countMessages, listAttachments } = await import('ctxguard');
  const text = 'The quick brown fox jumps over the lazy dog.\n'.repeat(23000); // ~1 MB
  const dataUrl = `data:text/plain;base64,${Buffer.from(text).toString('base64')}`;
  const asData = [{ role: 'user', content: [{ type: 'text', text: 'Summarize.' }, { type: 'file', file: { filename: 'notes.txt', file_data: dataUrl } }] }];
  const asText = [{ role: 'user', content: [{ type: 'text', text: 'Summarize.' }, { type: 'file', file: { filename: 'notes.txt', text } }] }];
  // The same tokens as the text given as file.text (it was a flat 3,000-token allowance).
  assert.equal(countMessages(asData, { model: 'gpt-4o' }).total, countMessages(asText, { model: 'gpt-4o' }).total);
  assert.ok(countMessages(asData, { model: 'gpt-4o' }).total > 200000);
  assert.equal(listAttachments(asData)[0].text, text);
  const r = await new ContextGuard({ model: 'gpt-4o' }).prepare(asData);
  assert.deepEqual(r.traces.map((t) => t.operation), ['attachment_preview']);
  const sent = r.messages[0].content[1].file.file_data;
  assert.ok(sent.startsWith('data:text/plain;base64,'));
  const preview = Buffer.from(sent.slice(sent.indexOf(',') + 1), 'base64').toString('utf8');
  assert.ok(preview.length < text.length / 10);
  assert.match(preview, /^The quick brown fox/);
  assert.ok(r.metrics.usedTokens <= r.metrics.usableLimit);
  // Unchanged when it fits: the same data URL, byte for byte.
  const small = [{ role: 'user', content: [{ type: 'file', file: { file_data: 'data:text/plain;base64,aGVsbG8K' } }] }];
  assert.deepEqual((await new ContextGuard({ model: 'gpt-4o' }).prepare(small)).messages, small);
});
