// The documentation as a reader meets it. Every ```js block of README.md and of docs/*.md runs
// exactly as a reader runs it: copied alone into a file in a fresh folder where the packed
// package was installed with `npm install`, then `node <file>.mjs` — no prelude, no helpers: a
// block's imports (`node:assert/strict` among them) are part of it. A block fenced ```js no-run
// needs a network or a browser: shown, not run. A block that imports another package as well
// (the AI SDK's `ai` in the useChat pages) runs where the reader installed it too: the
// repository's copy, linked into the folder.
//
// And what npm shows of the package: package.json's `repository`, `homepage` and `bugs`; a
// packed README whose links all work outside the repository (absolute, or into the package);
// the sizes it gives, against the built files; the clone's two commands on its first screen.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const pkg = join(root, 'pkg');

/** [{ line, info, code }] for each fenced block whose language is js/javascript/mjs. */
export function jsBlocks(markdown) {
  const blocks = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const open = /^(\s*)(`{3,}|~{3,})\s*(js|javascript|mjs)\b(.*)$/.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, , info] = open;
    const body = [];
    let j = i + 1;
    while (j < lines.length && !lines[j].trimStart().startsWith(fence)) {
      body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j]);
      j += 1;
    }
    blocks.push({ line: i + 1, info: info.trim(), code: body.join('\n') });
    i = j;
  }
  return blocks;
}

/** README.md and docs/*.md, as paths relative to the repository. */
const documents = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];

// The reader's folder: the tarball `npm pack` makes of pkg/, installed by npm (offline: the
// package has no dependencies), as `npm install ctxguard` would.
let reader;
let packed; // npm pack --json's entry: filename, files
before(() => {
  reader = mkdtempSync(join(tmpdir(), 'ctxguard-reader-'));
  [packed] = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', reader, '--loglevel=error'], { cwd: pkg, encoding: 'utf8' }));
  writeFileSync(join(reader, 'package.json'), '{ "name": "reader", "private": true }\n');
  execFileSync('npm', ['install', `./${packed.filename}`, '--offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: reader, stdio: ['ignore', 'pipe', 'pipe'] });
  assert.ok(existsSync(join(reader, 'node_modules', 'ctxguard', 'package.json')), 'npm installed the package');
});
after(() => reader && rmSync(reader, { recursive: true, force: true }));

/** The packages a block imports besides ctxguard and Node's own modules (`@scope/name` or `name`). */
function otherPackages(code) {
  const specs = [...code.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"./][^'"]*)['"]/g)].map((m) => m[1]);
  const names = specs.filter((x) => !x.startsWith('node:')).map((x) => x.split('/').slice(0, x.startsWith('@') ? 2 : 1).join('/'));
  return [...new Set(names)].filter((n) => n !== 'ctxguard');
}

for (const doc of documents) {
  const blocks = jsBlocks(readFileSync(join(root, doc), 'utf8'));
  test(`${doc}: every \`\`\`js block runs as copied`, { skip: blocks.length === 0 && `${doc} has no \`\`\`js blocks` }, async (t) => {
    for (const block of blocks) {
      const runnable = !/\bno-run\b/.test(block.info);
      await t.test(`${doc} line ${block.line}`, { skip: !runnable && 'marked no-run (needs a network or a browser)' }, () => {
        const file = join(reader, `${doc.replace(/[^A-Za-z0-9]+/g, '-')}-line-${block.line}.mjs`);
        writeFileSync(file, `${block.code}\n`);
        for (const name of otherPackages(block.code)) {
          const target = join(reader, 'node_modules', name);
          if (existsSync(target)) continue;
          assert.ok(existsSync(join(root, 'node_modules', name)), `${doc} line ${block.line} imports ${name}, which the repository does not have`);
          mkdirSync(dirname(target), { recursive: true });
          symlinkSync(join(root, 'node_modules', name), target, 'dir');
        }
        try {
          execFileSync(process.execPath, [file], { cwd: reader, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
        } catch (err) {
          assert.fail(`${doc} block at line ${block.line} failed when run alone:\n${block.code}\n--- stderr ---\n${err.stderr ?? err.message}`);
        }
      });
    }
  });
}

test('the snippet extractor finds blocks and honours no-run', () => {
  const md = [
    'Text', '```js', "console.log('a');", '```', '```js no-run', 'fetch(x)', '```',
    '```sh', 'make test', '```', '  ```javascript', '  const x = 1;', '  ```',
  ].join('\n');
  assert.deepEqual(
    jsBlocks(md).map((b) => [b.line, b.info, b.code]),
    [[2, '', "console.log('a');"], [5, 'no-run', 'fetch(x)'], [11, '', 'const x = 1;']],
  );
});

test('package.json names the repository, the home page and where to report bugs', () => {
  const manifest = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'));
  const repo = /^git\+(https:\/\/github\.com\/[^/]+\/[^/]+)\.git$/.exec(manifest.repository?.url ?? '');
  assert.ok(repo, `repository.url: ${JSON.stringify(manifest.repository)}`);
  assert.equal(manifest.repository.type, 'git');
  assert.equal(manifest.homepage, `${repo[1]}#readme`);
  assert.deepEqual(manifest.bugs, { url: `${repo[1]}/issues` });
});

test('the packed README links only to the web or into the package', () => {
  const readme = readFileSync(join(pkg, 'README.md'), 'utf8');
  assert.equal(readme, readFileSync(join(root, 'README.md'), 'utf8'));
  const shipped = new Set(packed.files.map((f) => f.path));
  const bad = [];
  let links = 0;
  for (const [, link] of readme.matchAll(/\]\(([^)\s]+)\)/g)) {
    links += 1;
    if (/^https:\/\//.test(link) || link.startsWith('#')) continue;
    if (!shipped.has(link.split('#')[0])) bad.push(link);
  }
  assert.ok(links > 20, `${links} links`);
  assert.deepEqual(bad, [], 'relative links to files npm does not ship');
});

test('the clone\'s two commands are on the README\'s first screen', () => {
  const firstScreen = readFileSync(join(root, 'README.md'), 'utf8').split('\n').slice(0, 45).join('\n');
  assert.match(firstScreen, /^make demo\s+#/m);
  assert.match(firstScreen, /^make test\s+#/m);
  assert.match(firstScreen, /npm install ctxguard/);
});

/** gzip -9 bytes of what a page downloads for an entry: its bundled browser module and its .wasm. */
function download(dir) {
  return ['index.js', 'ctxguard_wasm_bg.wasm'].reduce((n, f) => n + gzipSync(readFileSync(join(pkg, dir, f)), { level: 9 }).length, 0);
}

test('the README gives the measured download of each entry (gzip -9, browser module + .wasm)', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  for (const [entry, dir] of [
    ['ctxguard', '.'],
    ['ctxguard/o200k', 'o200k'],
    ['ctxguard/cl100k', 'cl100k'],
    ['ctxguard/o200k/count', 'o200k/count'],
    ['ctxguard/cl100k/count', 'cl100k/count'],
    ['ctxguard/gemini', 'gemini'],
  ]) {
    const row = readme.split('\n').find((l) => l.startsWith(`| \`${entry}\` |`));
    assert.ok(row, `the entries table has a row for ${entry}`);
    const stated = Number(/([\d.]+) MB \|\s*$/.exec(row)?.[1]);
    const measured = download(dir) / 1e6;
    assert.ok(Math.abs(stated - measured) <= 0.02, `${entry}: the README says ${stated} MB, the build is ${measured.toFixed(3)} MB`);
  }
});
