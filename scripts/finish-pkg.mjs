#!/usr/bin/env node
// Turns wasm-bindgen's web-target output in pkg/ into the npm package `ctxguard`:
//   - entries from src/js/: node.js (sync init from disk) and index.js (top-level `await init()`),
//     both re-exporting api.js (the public names);
//   - the hand-written src/js/index.d.ts (with formats.d.ts) as the package's types (the generated
//     ones have `any`);
//   - the worker helper: `ctxguard/worker` (worker.js, main thread, no wasm) and
//     `ctxguard/worker/serve` (worker-serve.js in browsers, worker-serve-node.js in Node), with
//     their hand-written types;
//   - the single-encoding builds' entries (pkg/o200k/, pkg/cl100k/, and pkg/gemini/ with Gemini's
//     vocabulary) and the counting-only builds' (pkg/<encoding>/count/: count-api.js as their
//     api.js, types in count.d.ts);
//   - package.json with `exports` conditions (types / node / browser / default).
// Run by scripts/build-pkg.sh after the builds.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { VOCABULARIES } from '../src/js/surface.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = join(root, 'pkg');
const js = join(root, 'src', 'js');

function fail(message) {
  console.error(`[finish-pkg] error: ${message}`);
  process.exit(1);
}

for (const generated of ['ctxguard_wasm.js', 'ctxguard_wasm_bg.wasm']) {
  if (!existsSync(join(pkg, generated))) fail(`pkg/${generated} is missing; run scripts/build-pkg.sh`);
}

// The browser entry (index.js) is one module: src/js/web.js with everything it imports (the
// wasm-bindgen glue, api.js and the rest) inlined by rolldown. Native ES modules load a graph
// level by level, and the .wasm fetch can only start once the whole graph has been evaluated;
// as separate files that was three round trips before the fetch (cold start in Chromium: import
// ~150 ms -> ~100 ms, BENCHMARKS.md). The separate files stay for node.js and the worker entries.
// Minified (names kept: exported classes and functions keep their `name`; strings, hence error
// texts, are untouched): 51 -> 28 KB raw, 13.8 -> 8.6 KB gzip for the cl100k build.
// loadVocabulary's modules (src/js/vocab*.js), for the entries in `dir`: the readers find the
// package's vocabulary files (pkg/vocab/) relative to themselves, so a build in a subdirectory
// gets copies that point up to it.
function shipVocabModules(dir) {
  const depth = dir === pkg ? 0 : dir.slice(pkg.length + 1).split('/').length;
  const prefix = depth === 0 ? './vocab/' : `${'../'.repeat(depth)}vocab/`;
  copyFileSync(join(js, 'vocab.js'), join(dir, 'vocab.js'));
  for (const f of ['vocab-node.js', 'vocab-web.js']) {
    const text = readFileSync(join(js, f), 'utf8').replaceAll('./vocab/', prefix);
    writeFileSync(join(dir, f), text);
  }
}

function bundleWebEntry(dir) {
  const entry = join(dir, 'web-entry.js');
  copyFileSync(join(js, 'web.js'), entry);
  const rolldown = join(root, 'node_modules', '.bin', 'rolldown');
  if (!existsSync(rolldown)) fail('node_modules/.bin/rolldown is missing; run scripts/setup.sh (npm ci)');
  try {
    execFileSync(rolldown, [entry, '--format', 'esm', '--file', join(dir, 'index.js'), '--minify', '--keepNames', '--log-level', 'warn'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  } catch (e) {
    fail(`bundling ${entry} failed: ${e.message}`);
  } finally {
    rmSync(entry, { force: true });
  }
  let bundled = readFileSync(join(dir, 'index.js'), 'utf8');
  // The minifier writes the .wasm URLs as template literals; bundlers that copy assets referenced
  // by `new URL('…', import.meta.url)` look for a plain string, so they go back to plain strings.
  bundled = bundled.replace(/new URL\(`([^`$\\"]*)`,import\.meta\.url\)/g, 'new URL("$1",import.meta.url)');
  // `--keepNames` keeps a renamed class's `name` (the exported ContextGuard is the glue's class,
  // renamed ContextGuard$1 by the bundler) with a class static block, ES2022: Safari before 16.4
  // would reject the whole module. The same helper call goes after the module's code instead
  // (it runs once the module is evaluated, before anyone can import the class).
  const names = [];
  bundled = bundled.replace(/\b(var|let|const) ([A-Za-z_$][\w$]*)=class\{static\{__name\(this,`([A-Za-z_$][\w$]*)`\)\}/g, (match, kind, local, name) => {
    names.push(`__name(${local},${JSON.stringify(name)});`);
    return `${kind} ${local}=class{`;
  });
  if (names.length > 0) bundled = `${bundled.trimEnd()}\n${names.join('')}\n`;
  writeFileSync(join(dir, 'index.js'), bundled);
  if (/(^|[;}])\s*(import|export\s*(\*|\{[^}]*\}))\s*[^;]*from\s*["'`]|(^|[;}])\s*import\s*["'`]/m.test(bundled)) fail(`${dir}/index.js still imports other modules after bundling`);
  if (!bundled.includes('new URL("./ctxguard_wasm_bg.wasm",import.meta.url)')) fail(`${dir}/index.js lost the .wasm URL`);
  if (/new URL\(`/.test(bundled)) fail(`${dir}/index.js has a .wasm URL as a template literal`);
  if (/static\s*\{/.test(bundled)) fail(`${dir}/index.js has a class static block (ES2022; Safari < 16.4 rejects the module)`);
  for (const name of VOCABULARIES) {
    if (!/new URL\("(\.\.\/)*(\.\/)?vocab\//.test(bundled) || !bundled.includes(`vocab/${name}.bin",import.meta.url)`)) fail(`${dir}/index.js lost the URL of vocab/${name}.bin`);
  }
}

const metadata = JSON.parse(
  execFileSync('cargo', ['metadata', '--no-deps', '--format-version', '1', '--offline'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 16 << 20,
  }),
);
const crate = metadata.packages.find((p) => p.name === 'ctxguard');
if (!crate) fail('cargo metadata does not list the ctxguard crate');
if (!/^https:\/\/github\.com\/[^/]+\/[^/]+$/.test(crate.repository ?? '')) fail('Cargo.toml needs `repository = "https://github.com/<owner>/<name>"` (package.json and the README link there)');

// Entries and types.
copyFileSync(join(js, 'api.js'), join(pkg, 'api.js'));
copyFileSync(join(js, 'hooks.js'), join(pkg, 'hooks.js'));
copyFileSync(join(js, 'memo.js'), join(pkg, 'memo.js'));
copyFileSync(join(js, 'freed.js'), join(pkg, 'freed.js'));
// Modules the entries, memo.js and the worker side share, in `dir` (pkg/ or a variant's). json.js
// is also the binding's snippet, which wasm-bindgen copied alone under snippets/ when it built
// this .wasm: json.js re-exports that copy, so every module there and a bundle of them hold one.
const shared = ['errors.js', 'json.js', 'sent-messages.js', 'surface.js'];
function shipShared(dir) {
  copyFileSync(join(js, 'errors.js'), join(dir, 'errors.js'));
  copyFileSync(join(js, 'sent-messages.js'), join(dir, 'sent-messages.js'));
  copyFileSync(join(js, 'surface.js'), join(dir, 'surface.js'));
  const snippets = existsSync(join(dir, 'snippets')) ? readdirSync(join(dir, 'snippets')).filter((d) => existsSync(join(dir, 'snippets', d, 'src', 'js', 'json.js'))) : [];
  if (snippets.length !== 1) fail(`${dir}/snippets/ should hold one copy of src/js/json.js, not ${snippets.length}`);
  writeFileSync(join(dir, 'json.js'), `// src/js/json.js, as the binding's snippet (scripts/finish-pkg.mjs).\nexport * from './snippets/${snippets[0]}/src/js/json.js';\n`);
}
shipShared(pkg);
shipVocabModules(pkg);
copyFileSync(join(js, 'node.js'), join(pkg, 'node.js'));
bundleWebEntry(pkg);
// The vocabularies loadVocabulary reads (not in the .wasm), each with the notice of its source
// and licences: converted at build time by scripts/build-pkg.sh into target/vocab/.
const vocabSrc = join(root, 'target', 'vocab');
const vocabFiles = VOCABULARIES.flatMap((n) => [`${n}.bin`, `${n}.LICENSE.txt`]);
mkdirSync(join(pkg, 'vocab'), { recursive: true });
for (const f of vocabFiles) {
  if (!existsSync(join(vocabSrc, f))) fail(`target/vocab/${f} is missing; scripts/build-pkg.sh converts the vocabularies first`);
  copyFileSync(join(vocabSrc, f), join(pkg, 'vocab', f));
}
// The package's types: index.d.ts re-exports the formats' types from formats.d.ts.
const typeFiles = ['index.d.ts', 'formats.d.ts'];
for (const file of typeFiles) copyFileSync(join(js, file), join(pkg, file));
const workerFiles = ['worker.js', 'worker-wire.js', 'worker-host.js', 'worker-serve.js', 'worker-serve-node.js', 'worker.d.ts', 'worker-serve.d.ts'];
for (const file of workerFiles) copyFileSync(join(js, file), join(pkg, file));

const vocabModules = ['vocab.js', 'vocab-node.js', 'vocab-web.js'];
const files = ['index.js', 'node.js', 'api.js', 'hooks.js', 'memo.js', 'freed.js', ...shared, ...vocabModules, ...typeFiles, ...workerFiles, 'ctxguard_wasm.js', 'ctxguard_wasm_bg.wasm', 'vocab/'];

// Single-encoding builds (scripts/build-pkg.sh): the same entries next to their own wasm.
// `gemini` is one of them: the pipeline with the gemma3 vocabulary instead of OpenAI's.
const variants = ['o200k', 'cl100k', 'gemini'].filter((enc) => existsSync(join(pkg, enc, 'ctxguard_wasm.js')));
// Each also serves in a worker (`ctxguard/<encoding>/worker/serve`): the serve modules import
// their api, glue and .wasm relatively, so a copy next to the build serves that build.
const serveFiles = ['worker-serve.js', 'worker-serve-node.js', 'worker-host.js', 'worker-wire.js'];
// One variant build's directory: its own copies of the entries (`[source in src/js, name in
// dir]`), the bundled browser entry, and without a generated manifest or readme (not part of
// the package).
function finishVariant(dir, copies) {
  for (const [from, to] of copies) copyFileSync(join(js, from), join(dir, to));
  if (copies.some(([from]) => from === 'memo.js')) shipShared(dir);
  shipVocabModules(dir);
  if (!copies.some(([from]) => from === 'memo.js')) copyFileSync(join(js, 'errors.js'), join(dir, 'errors.js'));
  bundleWebEntry(dir);
  for (const f of ['package.json', 'README.md', '.gitignore']) rmSync(join(dir, f), { force: true });
}
for (const enc of variants) {
  finishVariant(join(pkg, enc), ['api.js', 'hooks.js', 'memo.js', 'freed.js', 'node.js', ...serveFiles].map((f) => [f, f]));
  files.push(`${enc}/`);
}
// Counting-only builds (no `pipeline` feature): the same two entries over count-api.js.
const counters = variants.filter((enc) => existsSync(join(pkg, enc, 'count', 'ctxguard_wasm.js')));
for (const enc of counters) {
  finishVariant(join(pkg, enc, 'count'), [
    ['count-api.js', 'api.js'],
    ['node.js', 'node.js'],
  ]);
}
if (counters.length) {
  copyFileSync(join(js, 'count.d.ts'), join(pkg, 'count.d.ts'));
  files.push('count.d.ts');
}
// JS snippets the binding imports (#[wasm_bindgen(module = ...)]), e.g. the summarizer runtime.
if (existsSync(join(pkg, 'snippets'))) files.push('snippets/');
for (const doc of ['README.md', 'LICENSE', 'LICENSE-MIT', 'LICENSE.md']) {
  if (existsSync(join(root, doc))) {
    copyFileSync(join(root, doc), join(pkg, doc));
    files.push(doc);
  }
}

const manifest = {
  name: crate.name,
  version: crate.version,
  description: crate.description ?? undefined,
  license: crate.license ?? undefined,
  // Where npm's page links to (the README's links are absolute for the same reason: the docs are
  // not in the package). From Cargo.toml's `repository` and `homepage`; the issues under it.
  repository: { type: 'git', url: `git+${crate.repository}.git` },
  homepage: crate.homepage ?? `${crate.repository}#readme`,
  bugs: { url: `${crate.repository}/issues` },
  type: 'module',
  main: './node.js',
  module: './index.js',
  types: './index.d.ts',
  exports: {
    '.': {
      types: './index.d.ts',
      node: './node.js',
      browser: './index.js',
      default: './index.js',
    },
    ...Object.fromEntries(
      variants.map((enc) => [
        `./${enc}`,
        { types: './index.d.ts', node: `./${enc}/node.js`, browser: `./${enc}/index.js`, default: `./${enc}/index.js` },
      ]),
    ),
    ...Object.fromEntries(
      variants.map((enc) => [
        `./${enc}/worker/serve`,
        { types: './worker-serve.d.ts', node: `./${enc}/worker-serve-node.js`, default: `./${enc}/worker-serve.js` },
      ]),
    ),
    ...Object.fromEntries(
      counters.map((enc) => [
        `./${enc}/count`,
        { types: './count.d.ts', node: `./${enc}/count/node.js`, browser: `./${enc}/count/index.js`, default: `./${enc}/count/index.js` },
      ]),
    ),
    // Main thread: pure JS (the worker loads the wasm).
    './worker': {
      types: './worker.d.ts',
      default: './worker.js',
    },
    // Worker side: serves as soon as it is loaded in a dedicated worker / worker thread.
    './worker/serve': {
      types: './worker-serve.d.ts',
      node: './worker-serve-node.js',
      default: './worker-serve.js',
    },
    './ctxguard_wasm_bg.wasm': './ctxguard_wasm_bg.wasm',
    // The vocabulary files, for hosts that serve or fetch them themselves (loadVocabulary(bytes)).
    './vocab/*': './vocab/*',
    './package.json': './package.json',
  },
  files,
  // Importing an entry instantiates the WebAssembly module: keep them, tree-shake the rest.
  sideEffects: [
    './index.js',
    './node.js',
    ...variants.flatMap((enc) => [`./${enc}/index.js`, `./${enc}/node.js`]),
    ...counters.flatMap((enc) => [`./${enc}/count/index.js`, `./${enc}/count/node.js`]),
    './worker-serve.js',
    './worker-serve-node.js',
    ...variants.flatMap((enc) => [`./${enc}/worker-serve.js`, `./${enc}/worker-serve-node.js`]),
    // They install the entry's vocabulary reader when imported.
    ...['', ...variants.map((enc) => `${enc}/`), ...counters.map((enc) => `${enc}/count/`)].flatMap((d) => [`./${d}vocab-node.js`, `./${d}vocab-web.js`]),
  ],
  engines: { node: '>=20' }, // the versions tested (make test runs Node 20)
  keywords: ['llm', 'tokens', 'tiktoken', 'context-window', 'chat', 'wasm', 'webassembly'],
};
writeFileSync(join(pkg, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);

const wasm = readFileSync(join(pkg, 'ctxguard_wasm_bg.wasm'));
const mb = (n) => `${(n / 1e6).toFixed(2)} MB`;
console.log(
  `[finish-pkg] pkg/ is ctxguard ${crate.version}: ${files.length} files; ` +
    `ctxguard_wasm_bg.wasm ${mb(wasm.length)} raw, ${mb(gzipSync(wasm, { level: 9 }).length)} gzipped; ` +
    `glue ${statSync(join(pkg, 'ctxguard_wasm.js')).size} bytes`,
);
for (const name of [...variants, ...counters.map((enc) => `${enc}/count`)]) {
  const w = readFileSync(join(pkg, name, 'ctxguard_wasm_bg.wasm'));
  console.log(`[finish-pkg] pkg/${name}/ (ctxguard/${name}): ctxguard_wasm_bg.wasm ${mb(w.length)} raw, ${mb(gzipSync(w, { level: 9 }).length)} gzipped`);
}
