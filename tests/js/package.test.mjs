// The built package in pkg/: its manifest, its public surface against index.d.ts, and an install
// from the packed tarball into a fresh folder (what `npm install ctxguard` gives a user).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as ctxguard from 'ctxguard';
import { VOCABULARIES } from '../../src/js/surface.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const pkg = join(root, 'pkg');
const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
const cargoVersion = /^version\s*=\s*"([^"]+)"/m.exec(readFileSync(join(root, 'Cargo.toml'), 'utf8'))[1];

/** Runtime exports declared in a .d.ts: name -> 'function' | 'class' | 'const'. */
function declaredExports(dts) {
  const out = new Map();
  for (const m of dts.matchAll(/^export\s+(?:declare\s+)?(function|class|const|let)\s+([A-Za-z_$][\w$]*)/gm)) {
    out.set(m[2], m[1] === 'let' ? 'const' : m[1]);
  }
  return out;
}

test('the runtime exports are exactly the ones index.d.ts declares', () => {
  const declared = declaredExports(readFileSync(join(pkg, 'index.d.ts'), 'utf8'));
  assert.ok(declared.size > 0);
  const missing = [...declared.keys()].filter((name) => ctxguard[name] === undefined);
  assert.deepEqual(missing, [], `declared in index.d.ts but not exported by the binding: ${missing.join(', ')}`);
  assert.deepEqual(Object.keys(ctxguard).sort(), [...declared.keys()].sort(), 'exported but not declared');
  for (const [name, kind] of declared) {
    if (kind === 'function' || kind === 'class') assert.equal(typeof ctxguard[name], 'function', name);
  }
});

test('the package types are the hand-written ones', () => {
  assert.equal(readFileSync(join(pkg, 'index.d.ts'), 'utf8'), readFileSync(join(root, 'src', 'js', 'index.d.ts'), 'utf8'));
  assert.doesNotMatch(readFileSync(join(pkg, 'index.d.ts'), 'utf8'), /:\s*any\b/);
});

test('package.json: ESM, conditions in the right order, files, side effects', () => {
  assert.equal(manifest.name, 'ctxguard');
  assert.equal(manifest.version, cargoVersion);
  assert.equal(ctxguard.version(), cargoVersion);
  assert.equal(manifest.type, 'module');
  assert.deepEqual(Object.keys(manifest.exports['.']), ['types', 'node', 'browser', 'default']);
  assert.equal(manifest.exports['.'].types, './index.d.ts');
  assert.equal(manifest.exports['.'].node, './node.js');
  assert.equal(manifest.exports['.'].browser, './index.js');
  assert.equal(manifest.exports['.'].default, './index.js');
  assert.deepEqual(manifest.sideEffects, [
    './index.js',
    './node.js',
    './o200k/index.js',
    './o200k/node.js',
    './cl100k/index.js',
    './cl100k/node.js',
    './gemini/index.js',
    './gemini/node.js',
    './o200k/count/index.js',
    './o200k/count/node.js',
    './cl100k/count/index.js',
    './cl100k/count/node.js',
    './worker-serve.js',
    './worker-serve-node.js',
    './o200k/worker-serve.js',
    './o200k/worker-serve-node.js',
    './cl100k/worker-serve.js',
    './cl100k/worker-serve-node.js',
    './gemini/worker-serve.js',
    './gemini/worker-serve-node.js',
    // loadVocabulary's readers install themselves when imported (docs/vocabularies.md).
    ...['', 'o200k/', 'cl100k/', 'gemini/', 'o200k/count/', 'cl100k/count/'].flatMap((d) => [`./${d}vocab-node.js`, `./${d}vocab-web.js`]),
  ]);
  assert.deepEqual(manifest.exports['./vocab/*'], './vocab/*');
  for (const name of VOCABULARIES) {
    assert.ok(existsSync(join(pkg, 'vocab', `${name}.bin`)), `vocab/${name}.bin`);
    assert.ok(existsSync(join(pkg, 'vocab', `${name}.LICENSE.txt`)), `vocab/${name}.LICENSE.txt`);
  }
  for (const enc of ['o200k', 'cl100k', 'gemini']) {
    assert.deepEqual(manifest.exports[`./${enc}`], { types: './index.d.ts', node: `./${enc}/node.js`, browser: `./${enc}/index.js`, default: `./${enc}/index.js` });
    assert.deepEqual(manifest.exports[`./${enc}/worker/serve`], { types: './worker-serve.d.ts', node: `./${enc}/worker-serve-node.js`, default: `./${enc}/worker-serve.js` });
  }
  assert.deepEqual(manifest.exports['./worker'], { types: './worker.d.ts', default: './worker.js' });
  assert.deepEqual(manifest.exports['./worker/serve'], { types: './worker-serve.d.ts', node: './worker-serve-node.js', default: './worker-serve.js' });
  for (const file of manifest.files) assert.ok(existsSync(join(pkg, file)), `files lists ${file}, which is missing`);
  // Every relative import of every shipped module is shipped too ('dir/' entries ship a folder).
  const shipped = (path) => manifest.files.some((f) => (f.endsWith('/') ? path.startsWith(f) : f === path));
  for (const file of manifest.files.filter((f) => f.endsWith('.js'))) {
    const source = readFileSync(join(pkg, file), 'utf8');
    for (const m of source.matchAll(/(?:from|import)\s*\(?\s*['"](\.\/[^'"]+)['"]/g)) {
      assert.ok(shipped(m[1].slice(2)), `${file} imports ${m[1]}, which is not in files`);
      assert.ok(existsSync(join(pkg, m[1])), `${file} imports ${m[1]}, which is missing`);
    }
    for (const m of source.matchAll(/new URL\(\s*['"](\.\/)?([^'"]+)['"]\s*,\s*import\.meta\.url/g)) {
      assert.ok(shipped(m[2]), `${file} loads ${m[2]}, which is not in files`);
    }
  }
});

test('the packed tarball installs and works in a fresh folder (Node ESM, sync after import; ctxguard/worker in a worker thread)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ctxguard-pack-'));
  try {
    const [{ filename }] = JSON.parse(
      execFileSync('npm', ['pack', '--json', '--pack-destination', dir, '--loglevel=error'], { cwd: pkg, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    const target = join(dir, 'node_modules', 'ctxguard');
    mkdirSync(target, { recursive: true });
    execFileSync('tar', ['-xzf', join(dir, filename), '-C', target, '--strip-components=1']);
    writeFileSync(join(dir, 'package.json'), '{ "type": "module", "private": true }\n');
    writeFileSync(
      join(dir, 'check.mjs'),
      [
        "import { countTokens, countMessages, ContextGuard, version } from 'ctxguard';",
        "const guard = new ContextGuard({ model: 'gpt-4o' });",
        "const m = guard.measure([{ role: 'user', content: 'hello world' }]);",
        "import * as cl100k from 'ctxguard/cl100k';",
        "import { countTokens as countO200k } from 'ctxguard/o200k/count';",
        "import { countTokens as countCl100k } from 'ctxguard/cl100k/count';",
        "console.log(JSON.stringify({ n: countTokens('hello world'), total: countMessages([{ role: 'user', content: 'hello world' }], { model: 'gpt-4o' }).total, used: m.usedTokens, version: version(), cl100k: cl100k.countTokens('tiktoken is great!', { encoding: 'cl100k_base' }), counters: [countO200k('hello world'), countCl100k('tiktoken is great!')] }));",
      ].join('\n'),
    );
    const out = JSON.parse(execFileSync(process.execPath, ['check.mjs'], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
    assert.deepEqual(out, { n: 2, total: 9, used: 9, version: cargoVersion, cl100k: 6, counters: [2, 6] });

    // ctxguard/worker from the tarball: a worker thread serving, the main thread asking.
    writeFileSync(join(dir, 'guard-worker.mjs'), "import 'ctxguard/worker/serve';\n");
    writeFileSync(
      join(dir, 'check-worker.mjs'),
      [
        "import { Worker } from 'node:worker_threads';",
        "import { createWorkerGuard } from 'ctxguard/worker';",
        "const guard = await createWorkerGuard(new Worker(new URL('./guard-worker.mjs', import.meta.url)), { model: 'gpt-4o' });",
        "const m = await guard.measure([{ role: 'user', content: 'hello world' }]);",
        "const n = await guard.worker.countTokens('hello world');",
        "console.log(JSON.stringify({ n, used: m.usedTokens, version: guard.worker.version }));",
        'await guard.terminate();',
      ].join('\n'),
    );
    const viaWorker = JSON.parse(execFileSync(process.execPath, ['check-worker.mjs'], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
    assert.deepEqual(viaWorker, { n: 2, used: 9, version: cargoVersion });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
