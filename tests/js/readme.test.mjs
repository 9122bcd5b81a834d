// Every ```js block of README.md and of docs/*.md runs as its own ES module against the built
// package, so the documentation cannot drift from the API. A block fenced as ```js no-run is
// shown but not run. Blocks may use `assert` (node:assert/strict) to state their results.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
// Inside the repository, so that `import ... from 'ctxguard'` resolves through node_modules/.
const work = join(root, 'target', 'readme-snippets');
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

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
const documents = [
  'README.md',
  ...(existsSync(join(root, 'docs')) ? readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`) : []),
];

for (const doc of documents) {
  const path = join(root, doc);
  const blocks = existsSync(path) ? jsBlocks(readFileSync(path, 'utf8')) : [];
  test(`${doc} \`\`\`js blocks run`, { skip: blocks.length === 0 && `${doc} has no \`\`\`js blocks yet` }, async (t) => {
    for (const block of blocks) {
      const runnable = !/\bno-run\b/.test(block.info);
      await t.test(`${doc} line ${block.line}`, { skip: !runnable && 'marked no-run' }, () => {
        const file = join(work, `${doc.replace(/[^A-Za-z0-9]+/g, '-')}-line-${block.line}.mjs`);
        const prelude = /\bimport\s+assert\b/.test(block.code) ? '' : "import assert from 'node:assert/strict';\n";
        writeFileSync(file, `${prelude}${block.code}\n`);
        try {
          execFileSync(process.execPath, [file], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
        } catch (err) {
          assert.fail(`${doc} block at line ${block.line} failed:\n${block.code}\n--- stderr ---\n${err.stderr ?? err.message}`);
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
