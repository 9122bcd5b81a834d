// The surface table (src/js/surface.js) against everything that lists the same names: the built
// binding (what the Rust side exports), the package entries, the counting-only builds, the
// worker's two sides, the .d.ts files, the Rust core's error codes and provider-error fields, and
// the docs. Adding an export to src/wasm/ without a row in the table, a declaration, a worker
// method or a mention in the docs fails here, with the name.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as ctxguard from 'ctxguard';
import * as o200kCount from 'ctxguard/o200k/count';
import { WorkerConnection, WorkerGuard } from 'ctxguard/worker';

import { ASYNC_METHODS, BINDING_FUNCTIONS, ERROR_CODES, FUNCTIONS, GUARD, PROVIDER_ERROR_FIELDS, WORKER_FUNCTIONS, WORKER_GUARD_CALLS } from '../../src/js/surface.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const read = (path) => readFileSync(join(root, path), 'utf8');
const sorted = (names) => [...new Set(names)].sort();

/** What wasm-bindgen's glue exports besides the binding's own functions and classes. */
const GLUE = ['default', 'initSync', 'start'];
const functions = Object.keys(FUNCTIONS);
const countFunctions = functions.filter((name) => FUNCTIONS[name].count);
const guardNames = [...Object.keys(GUARD.methods), ...Object.keys(GUARD.state), ...GUARD.properties];

/** The members of `class Name` in a .d.ts: name -> its declaration text (comments left out). */
function classMembers(dts, name) {
  const start = dts.search(new RegExp(`^export (?:declare )?class ${name}\\b`, 'm'));
  assert.ok(start >= 0, `no class ${name}`);
  const body = dts.slice(start, dts.indexOf('\n}', start)).split('\n').slice(1);
  const members = new Map();
  let current = null;
  for (const line of body) {
    const m = /^ {2}(?:readonly |get |set |static )?([A-Za-z_$][\w$]*)\s*[(<:?]/.exec(line);
    if (m) {
      current = m[1];
      members.set(current, (members.get(current) ?? '') + line);
    } else if (current && !/^\s*(\/\*\*|\*)/.test(line)) {
      members.set(current, members.get(current) + line);
    }
  }
  return members;
}

/** Names declared as runtime exports in a .d.ts: `export function|class|const X`, `export { X, Y } from`. */
const declared = (dts) => [
  ...[...dts.matchAll(/^export\s+(?:declare\s+)?(?:function|class|const|let)\s+([A-Za-z_$][\w$]*)/gm)].map((m) => m[1]),
  ...[...dts.matchAll(/^export\s+\{([^}]*)\}\s+from/gm)].flatMap((m) => m[1].split(',').map((n) => n.trim()).filter(Boolean)),
];

/** The string members of a union type `export type Name = | 'A' | 'B';` in a .d.ts. */
function unionOf(dts, name) {
  const m = new RegExp(`^export type ${name} =([^;]*);`, 'm').exec(dts);
  assert.ok(m, `no type ${name}`);
  return [...m[1].matchAll(/'([A-Z_]+)'/g)].map((x) => x[1]);
}

test('the binding exports exactly the table: its functions and ContextGuard with its members', async () => {
  const glue = await import('../../pkg/ctxguard_wasm.js');
  assert.deepEqual(sorted(Object.keys(glue).filter((k) => !GLUE.includes(k))), sorted([...BINDING_FUNCTIONS, 'ContextGuard']), 'src/wasm/ exports ≠ BINDING_FUNCTIONS in src/js/surface.js');
  const own = Object.getOwnPropertyNames(glue.ContextGuard.prototype).filter((k) => k !== 'constructor' && k !== 'free' && !k.startsWith('__'));
  assert.deepEqual(sorted(own), sorted([...guardNames, ...GUARD.stored]), 'ContextGuard members ≠ GUARD in src/js/surface.js');
  for (const name of Object.keys(GUARD.state)) {
    const d = Object.getOwnPropertyDescriptor(glue.ContextGuard.prototype, name);
    assert.equal(typeof d.get, 'function', `${name} is an accessor`);
    assert.equal(typeof d.set === 'function', GUARD.state[name].settable, `${name} settable`);
  }
  for (const name of GUARD.properties) assert.equal(typeof Object.getOwnPropertyDescriptor(glue.ContextGuard.prototype, name).get, 'function', `${name} is a getter`);
});

test('the async methods are the ones that return a Promise', async () => {
  const guard = new ctxguard.ContextGuard({ model: 'gpt-4o' });
  const messages = [{ role: 'user', content: 'hello' }];
  for (const name of Object.keys(GUARD.methods)) {
    if (name !== 'prepare' && name !== 'settle') continue; // the others need arguments of their own; their types are checked below
    const result = guard[name](messages, { summarize: () => 'summary' });
    assert.equal(result instanceof Promise, ASYNC_METHODS.includes(name), name);
    await result.catch(() => {});
  }
  assert.deepEqual(sorted(ASYNC_METHODS), ['prepare', 'settle']);
  guard.free();
  // freed.js reads ASYNC_METHODS: a freed guard's async methods reject, the others throw.
  await assert.rejects(guard.prepare(messages), { code: 'GUARD_FREED' });
  assert.throws(() => guard.measure(messages), { code: 'GUARD_FREED' });
});

test('the entries export the table: ctxguard, and the counting-only builds', () => {
  assert.deepEqual(sorted(Object.keys(ctxguard)), sorted([...functions, 'ContextGuard', 'chainPreModelHooks']), 'src/js/api.js');
  assert.deepEqual(sorted(Object.keys(o200kCount)), sorted(countFunctions), 'src/js/count-api.js');
});

test('the counting-only builds export the functions marked `count`', async () => {
  for (const enc of ['o200k', 'cl100k']) {
    const glue = await import(`../../pkg/${enc}/count/ctxguard_wasm.js`);
    const bound = BINDING_FUNCTIONS.filter((name) => !(name in FUNCTIONS) || FUNCTIONS[name].count);
    assert.deepEqual(sorted(Object.keys(glue).filter((k) => !GLUE.includes(k))), sorted(bound), `pkg/${enc}/count`);
  }
});

test('the types declare every export and member', () => {
  const index = read('src/js/index.d.ts');
  assert.deepEqual(sorted(declared(index)), sorted([...functions, 'ContextGuard', 'chainPreModelHooks']), 'src/js/index.d.ts');
  assert.deepEqual(sorted(declared(read('src/js/count.d.ts'))), sorted(countFunctions), 'src/js/count.d.ts');
  const members = classMembers(index, 'ContextGuard');
  assert.deepEqual(sorted([...members.keys()].filter((k) => k !== 'constructor' && k !== 'free')), sorted(guardNames), 'ContextGuard in src/js/index.d.ts');
  for (const name of Object.keys(GUARD.methods)) {
    assert.equal(/\)\s*:\s*Promise</.test(members.get(name)), ASYNC_METHODS.includes(name), `${name} returns a Promise in index.d.ts`);
  }
});

test('the worker serves the table: the host, the client and its types', () => {
  // The host reads WORKER_FUNCTIONS and WORKER_GUARD_CALLS; the client has a method for each.
  assert.deepEqual(sorted(WORKER_FUNCTIONS), sorted(functions.filter((n) => n !== 'memoryStats')));
  const connection = Object.getOwnPropertyNames(WorkerConnection.prototype);
  for (const name of WORKER_FUNCTIONS) {
    if (name === 'version') assert.equal(typeof Object.getOwnPropertyDescriptor(WorkerConnection.prototype, name)?.get, 'function', 'WorkerConnection.version');
    else assert.ok(connection.includes(name), `WorkerConnection.${name}`);
  }
  const guard = Object.getOwnPropertyNames(WorkerGuard.prototype);
  for (const name of WORKER_GUARD_CALLS) assert.ok(guard.includes(name), `WorkerGuard.${name}`);
  // GUARD.properties are a WorkerGuard's own fields, set once from the worker's answer (the types say so below).

  const dts = read('src/js/worker.d.ts');
  const conn = classMembers(dts, 'WorkerConnection');
  for (const name of WORKER_FUNCTIONS) assert.ok(conn.has(name), `WorkerConnection.${name} in src/js/worker.d.ts`);
  const wguard = classMembers(dts, 'WorkerGuard');
  for (const name of [...WORKER_GUARD_CALLS, ...GUARD.properties]) assert.ok(wguard.has(name), `WorkerGuard.${name} in src/js/worker.d.ts`);
  for (const name of WORKER_GUARD_CALLS) assert.match(wguard.get(name), /\)\s*:\s*Promise</, `WorkerGuard.${name} is asynchronous`);
});

test('error codes: the core, the declarations and docs/api.md name the same ones', () => {
  const rust = [...read('src/base/error.rs').matchAll(/ErrorCode::\w+ => "([A-Z_]+)"/g)].map((m) => m[1]);
  const core = Object.keys(ERROR_CODES).filter((c) => ERROR_CODES[c] === 'core');
  assert.deepEqual(sorted(rust), sorted(core), 'ErrorCode in src/base/error.rs');
  assert.deepEqual(sorted(unionOf(read('src/js/index.d.ts'), 'ErrorCode')), sorted(Object.keys(ERROR_CODES).filter((c) => ERROR_CODES[c] !== 'worker')), 'ErrorCode in index.d.ts');
  const workerCodes = unionOf(read('src/js/worker.d.ts'), 'WorkerErrorCode');
  for (const code of Object.keys(ERROR_CODES).filter((c) => ERROR_CODES[c] === 'worker')) assert.ok(workerCodes.includes(code), `${code} in worker.d.ts`);
  const api = read('docs/api.md');
  const table = api.slice(api.indexOf('| `code` | when |'), api.indexOf('\n\n', api.indexOf('| `code` | when |')));
  const documented = [...table.matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]);
  assert.deepEqual(sorted(documented), sorted(Object.keys(ERROR_CODES)), 'the error table of docs/api.md');
  // Every code the JS side makes is in the table.
  const made = readdirSync(join(root, 'src/js')).filter((f) => f.endsWith('.js')).flatMap((f) => [...read(`src/js/${f}`).matchAll(/ctxguardError\('([A-Z_]+)'/g)].map((m) => m[1]));
  for (const code of made) assert.ok(code in ERROR_CODES, `${code} (src/js) in ERROR_CODES`);
});

test('provider-error fields: the table is what the core reads', () => {
  const rust = read('src/provider/overflow.rs');
  const list = (name) => JSON.parse(new RegExp(`pub const ${name}: \\[&str; \\d+\\] = (\\[[^\\]]*\\]);`).exec(rust)[1]);
  assert.deepEqual([...PROVIDER_ERROR_FIELDS], [...list('STATUS_FIELDS'), ...list('TEXT_FIELDS')]);
  assert.doesNotMatch(read('src/wasm/overflow.rs'), /"statusCode"/, 'the binding reads the core\'s lists, not a copy');
});

test('the docs name every export and guard method', () => {
  const docs = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)].map(read).join('\n');
  const missing = [...functions, 'chainPreModelHooks', ...Object.keys(GUARD.methods)].filter((name) => !new RegExp(`\`[^\`\\n]*\\b${name}\\(`).test(docs));
  assert.deepEqual(missing, [], 'not shown as `name(…)` in README.md or docs/');
});

test('pkg/ ships the table as it is in src/js', () => {
  assert.equal(readFileSync(join(root, 'pkg', 'surface.js'), 'utf8'), read('src/js/surface.js'));
});
