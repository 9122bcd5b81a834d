// What a production page ships: every library's browser entry bundled and minified by one bundler
// with one set of settings, ctxguard included — rolldown (the repository's dev dependency, which
// also bundles ctxguard's own browser entry in scripts/finish-pkg.mjs), one ES module per library
// and encoding, minified, no code splitting. Each entry imports only what the benchmark's adapter
// calls (adapters.mjs), so the bundler tree-shakes the rest as it would in an app. A library's
// WebAssembly file stays a separate file next to its bundle (fetched at run time, as the library
// loads it), and JSON imports are inlined as bundlers do. Node is not bundled: Node users load the
// packages as published, and the Node phases do the same.
//
// `bundleAll({ outDir, pkgDir, ctxguardEntry, libs, encodings })` writes
// outDir/<lib>/<enc>/index.js (ctxguard: outDir/ctxguard/index.js, one build for both encodings)
// and returns { [lib]: { [enc]: path relative to outDir } } plus the settings for the notes.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const BENCH_DIR = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const require = createRequire(path.join(BENCH_DIR, 'package.json'));

/** The settings, shown in the report's notes. */
export const BUNDLER = {
  name: 'rolldown',
  options: "format 'esm', platform 'browser', minify: true, one output file per entry",
};

/** Entry source per library and encoding: what an app importing the library for counting writes. */
function entrySource(lib, enc, { pkgDir, ctxguardEntry }) {
  switch (lib) {
    case 'ctxguard': {
      const file = JSON.stringify(path.join(pkgDir, ctxguardEntry));
      // The whole API: the benchmark page also uses countMessages and ContextGuard (index.js is
      // one module already; tree-shaking it to countTokens alone saves a few KB of JS).
      return ctxguardEntry === 'index.js' ? `export * from ${file};\n` : `export * from ${file};\nexport { default } from ${file};\n`;
    }
    case 'gpt-tokenizer':
      return `export { countTokens } from 'gpt-tokenizer/encoding/${enc}';\n`;
    case 'tiktoken':
      return [
        "export { init, Tiktoken } from 'tiktoken/lite/init';",
        `export { default as ranks } from 'tiktoken/encoders/${enc}.json';`,
        // The wasm is fetched by the page (tiktoken's `init(callback)`), a separate file.
        "export const wasmUrl = new URL('./tiktoken_bg.wasm', import.meta.url).href;",
        '',
      ].join('\n');
    case 'js-tiktoken':
      return [
        "export { Tiktoken } from 'js-tiktoken/lite';",
        `export { default as ranks } from 'js-tiktoken/ranks/${enc}';`,
        '',
      ].join('\n');
    case 'hypertok':
      // Its README's bundled-browser recipe: the vocabulary and the single-tier .wasm as URLs of
      // files next to the bundle (a bundler's `?url` imports), the .wasm compiled by the page.
      return [
        "export { fromBytes } from 'hypertok';",
        "export const vocabUrl = new URL('./vocab.htk', import.meta.url).href;",
        "export const wasmUrl = new URL('./hypertok_wasm_core_bg.wasm', import.meta.url).href;",
        '',
      ].join('\n');
    default:
      throw new Error(`unknown library ${lib}`);
  }
}

/** Files a bundle loads at run time, copied next to it: [from, name]. */
function assets(lib, { pkgDir }, enc) {
  if (lib === 'ctxguard') {
    const wasm = fs.readdirSync(pkgDir).find((f) => f.endsWith('_bg.wasm'));
    return wasm ? [[path.join(pkgDir, wasm), wasm]] : [];
  }
  if (lib === 'tiktoken') return [[require.resolve('tiktoken/lite/tiktoken_bg.wasm'), 'tiktoken_bg.wasm']];
  if (lib === 'hypertok') {
    const vocab = `@hypertok/vocab-${enc.replace(/_base$/, '')}/vocab.htk`;
    const wasm = path.join(path.dirname(require.resolve('hypertok')), '..', 'wasm', 'single', 'hypertok_wasm_core_bg.wasm');
    return [[require.resolve(vocab), 'vocab.htk'], [wasm, 'hypertok_wasm_core_bg.wasm']];
  }
  return [];
}

export async function bundleAll({ outDir, pkgDir, ctxguardEntry, libs, encodings }) {
  const { rolldown } = await import('rolldown');
  // Entry sources live under benches/ so that bare names resolve from benches/node_modules.
  const srcDir = path.join(BENCH_DIR, '.bundles-src');
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.rmSync(srcDir, { recursive: true, force: true });
  fs.mkdirSync(srcDir, { recursive: true });
  const out = {};
  const jobs = [];
  for (const lib of libs) {
    for (const enc of lib === 'ctxguard' ? [null] : encodings) {
      const rel = enc ? `${lib}/${enc}` : lib;
      jobs.push({ lib, enc, rel });
    }
  }
  try {
    for (const { lib, enc, rel } of jobs) {
      const src = path.join(srcDir, `${rel.replace(/\//g, '__')}.mjs`);
      fs.writeFileSync(src, entrySource(lib, enc, { pkgDir, ctxguardEntry }));
      const dir = path.join(outDir, rel);
      const build = await rolldown({ input: src, platform: 'browser', logLevel: 'warn', cwd: BENCH_DIR });
      try {
        await build.write({ file: path.join(dir, 'index.js'), format: 'esm', minify: true, codeSplitting: false });
      } finally {
        await build.close();
      }
      for (const [from, name] of assets(lib, { pkgDir }, enc)) fs.copyFileSync(from, path.join(dir, name));
      const file = `${rel}/index.js`;
      if (enc) (out[lib] ??= {})[enc] = file;
      else out[lib] = Object.fromEntries(encodings.map((e) => [e, file]));
    }
  } finally {
    fs.rmSync(srcDir, { recursive: true, force: true });
  }
  return out;
}
