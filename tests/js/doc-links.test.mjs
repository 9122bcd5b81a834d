// Every relative link of README.md, CONTRIBUTING.md and docs/*.md points at a file of the
// repository, and every #fragment at a heading of the page it names (GitHub's anchor rule), so the
// short README and the docs/ pages cannot drift apart silently. Absolute links into the
// repository on GitHub (the README's, which npm shows without the docs/ folder) are checked the
// same way, against the files here.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading) {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, '').replace(/ /g, '-');
}

/** The anchors of a Markdown page (headings outside fenced blocks; repeats get -1, -2…). */
function anchors(markdown) {
  const out = new Set();
  const seen = new Map();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const m = !fenced && /^#+\s+(.*)$/.exec(line);
    if (!m) continue;
    const s = slug(m[1]);
    const n = seen.get(s) ?? 0;
    seen.set(s, n + 1);
    out.add(n === 0 ? s : `${s}-${n}`);
  }
  return out;
}

// `https://github.com/<owner>/<name>` from Cargo.toml: links under `/blob/main/` or `/tree/main/`
// name a file or folder of this repository.
const repository = /^repository\s*=\s*"([^"]+)"/m.exec(readFileSync(join(root, 'Cargo.toml'), 'utf8'))?.[1];
const inRepo = repository && new RegExp(`^${repository.replace(/[.]/g, '\\.')}/(?:blob|tree)/main/`);

const pages = ['README.md', 'CONTRIBUTING.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

test('relative links of the documentation resolve', () => {
  const broken = [];
  let checked = 0;
  for (const page of pages) {
    const text = readFileSync(join(root, page), 'utf8');
    for (const [, link] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const absolute = inRepo && inRepo.test(link);
      if (/^[a-z]+:/.test(link) && !absolute) continue;
      const [path, fragment] = (absolute ? link.replace(inRepo, '') : link).split('#');
      const target = absolute ? normalize(path) : path ? normalize(join(dirname(page), path)) : page;
      checked++;
      if (!existsSync(join(root, target))) broken.push(`${page}: ${link} (no ${target})`);
      else if (fragment && target.endsWith('.md') && !anchors(readFileSync(join(root, target), 'utf8')).has(fragment)) {
        broken.push(`${page}: ${link} (no heading #${fragment} in ${target})`);
      }
    }
  }
  assert.ok(checked > 50, `${checked} links checked`);
  assert.ok(repository, 'Cargo.toml names the repository');
  assert.deepEqual(broken, []);
});

test('the anchor rule', () => {
  assert.equal(slug('The API at a glance'), 'the-api-at-a-glance');
  assert.equal(slug('`classifyProviderError(error)`'), 'classifyprovidererrorerror');
  assert.equal(slug('Stored chains: `resolveHistory(turns, options)`'), 'stored-chains-resolvehistoryturns-options');
  assert.deepEqual([...anchors('# A\n```\n# not\n```\n## A\n')], ['a', 'a-1']);
});
