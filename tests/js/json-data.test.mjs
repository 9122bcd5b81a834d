// The one plain-data rule (src/js/json.js) that the stored path and the worker transfer share:
// what is plain data, and what `matches` sees as changed. docs/stored-calls.md.
import assert from 'node:assert/strict';
import { test } from 'node:test';

const { findNonJson, inheritedToJSON, isPlainObject, matches, snapshot } = await import('../../pkg/json.js');

const nested = (depth) => {
  let v = 'leaf';
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { v };
  return v;
};

test('plain data: what snapshot takes, and what it leaves to the slow, faithful way', () => {
  const plain = [
    { role: 'user', content: 'hi', extra: { n: [1, -0, NaN, null, true], gone: undefined } },
    Object.assign(Object.create(null), { role: 'user', content: '' }),
    nested(64),
    '日本語 🎉',
  ];
  for (const v of plain) assert.ok(snapshot(v, []) >= 0, JSON.stringify(v));
  class Note {}
  const notPlain = [
    { content: 'a lone \uD800 surrogate' },
    { ['k\uDC00']: 1 },
    { n: 1n },
    { f: () => 1 },
    { s: Symbol('s') },
    { when: new Date(0) },
    { m: new Map() },
    { own: { toJSON: () => 'x' } },
    [Object.assign(new Note(), { a: 1 })],
    nested(65),
  ];
  for (const v of notPlain) assert.equal(snapshot(v, []), -1);
  assert.equal(snapshot({ ab: 'cde', list: ['fg'] }, []), 2 + 3 + 4 + 2, 'string characters, keys included');
  assert.ok(isPlainObject({}) && isPlainObject(Object.create(null)) && !isPlainObject(new Note()));
  assert.equal(inheritedToJSON(), false);
  // findNonJson takes more: what JSON reads faithfully (a class instance, a URL)
  assert.equal(findNonJson([new Note(), new URL('https://example.com/')]), null);
  assert.deepEqual(findNonJson({ a: [1, { when: new Date(0) }] }), { path: ['a', 1, 'when'], kind: 'a Date (JSON would turn it into a string)' });
});

test('matches: the same objects unchanged, any edit in place at any depth is a change', () => {
  const m = { role: 'assistant', content: [{ type: 'text', text: 'x'.repeat(1000) }], n: NaN };
  const snap = [];
  snapshot(m, snap);
  assert.equal(matches(m, snap, 0), snap.length);
  assert.equal(matches(structuredClone(m), snap, 0), snap.length, 'equal data matches too');
  const edits = [
    (v) => { v.content[0].text += '!'; },
    (v) => { v.content.push({ type: 'text', text: '' }); },
    (v) => { v.name = 'bob'; },
    (v) => { delete v.n; },
    (v) => { v.n = 0; },
    (v) => { v.content = [Object.assign(Object.create({}), v.content[0])]; },
    (v) => { const { role, ...rest } = v; for (const k of Object.keys(v)) delete v[k]; Object.assign(v, rest, { role }); },
  ];
  for (const edit of edits) {
    const v = structuredClone(m);
    edit(v);
    assert.equal(matches(v, snap, 0), -1, edit.toString());
  }
});
