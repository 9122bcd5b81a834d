// One loader per tokenizer, the same code in Node and in the browser. Node imports the packages by
// their bare names, as published (resolved from benches/node_modules); the page imports each
// library's bundle instead — one minified ES module per library and encoding, built by
// bundle.mjs — whose exports are the names the Node branch takes from the packages. Only what
// differs between runtimes comes from `env`.
//
// env = {
//   runtime: 'node' | 'browser',
//   ctxguard: { entry, init: 'none' | 'initSync' | 'default', wasm },  // wasm: a file path (Node)
//   bundles: { [lib]: { [encoding]: URL of the bundle } },            // browser only
// }

export const LIBS = ['ctxguard', 'gpt-tokenizer', 'tiktoken', 'js-tiktoken', 'hypertok'];
export const ENCODINGS = ['o200k_base', 'cl100k_base'];

/** What each counter calls: the library's fastest way to get a count (see BENCHMARKS.md notes). */
export const COUNT_API = {
  ctxguard: 'countTokens(text, { encoding })',
  'gpt-tokenizer': 'countTokens(text) from gpt-tokenizer/encoding/<enc>',
  tiktoken: 'new Tiktoken(ranks from encoders/<enc>.json).encode(text).length (tiktoken/lite)',
  'js-tiktoken': 'new Tiktoken(ranks/<enc>).encode(text).length (js-tiktoken/lite)',
  hypertok: 'encodeSync(text, { reserved: { match: [] } }).length on fromBytes(@hypertok/vocab-<enc>, { tier: "single" })',
};

/**
 * hypertok's ordinary encoding: special-token text is plain text, as for every other counter here
 * (its default matches special tokens, like tiktoken's `allowed_special="all"`).
 */
const HYPERTOK_ORDINARY = { reserved: { match: [] } };

/** Loads the ctxguard module and initialises its wasm the way its package entry asks for. */
export async function loadCtxguard(env) {
  const c = env.ctxguard;
  const mod = await import(c.entry);
  if (c.init === 'initSync') {
    const fs = await import('node:fs');
    mod.initSync({ module: fs.readFileSync(c.wasm) });
  } else if (c.init === 'default') {
    await mod.default();
  }
  return mod;
}

/** Returns `{ count(text) -> number, free() }` for one library and encoding. */
export async function loadCounter(lib, encoding, env) {
  switch (lib) {
    case 'ctxguard': {
      const mod = await loadCtxguard(env);
      const opts = { encoding };
      return { count: (t) => mod.countTokens(t, opts), free() {}, mod };
    }
    case 'gpt-tokenizer': {
      let mod;
      if (env.bundles) mod = await import(env.bundles[lib][encoding]);
      else if (encoding === 'o200k_base') mod = await import('gpt-tokenizer/encoding/o200k_base');
      else mod = await import('gpt-tokenizer/encoding/cl100k_base');
      return { count: mod.countTokens, free() {} };
    }
    case 'tiktoken': {
      let Tiktoken;
      let ranks;
      if (env.bundles) {
        const m = await import(env.bundles[lib][encoding]);
        await m.init((imports) => WebAssembly.instantiateStreaming(fetch(m.wasmUrl), imports));
        ({ Tiktoken, ranks } = m);
      } else {
        const m = await import('tiktoken/lite'); // CommonJS entry: reads the wasm file synchronously
        Tiktoken = m.Tiktoken ?? m.default.Tiktoken;
        ranks = encoding === 'o200k_base'
          ? (await import('tiktoken/encoders/o200k_base.json', { with: { type: 'json' } })).default
          : (await import('tiktoken/encoders/cl100k_base.json', { with: { type: 'json' } })).default;
      }
      const enc = new Tiktoken(ranks.bpe_ranks, ranks.special_tokens, ranks.pat_str);
      return { count: (t) => enc.encode(t).length, free: () => enc.free() };
    }
    case 'js-tiktoken': {
      let Tiktoken;
      let ranks;
      if (env.bundles) ({ Tiktoken, ranks } = await import(env.bundles[lib][encoding]));
      else {
        ({ Tiktoken } = await import('js-tiktoken/lite'));
        ranks = encoding === 'o200k_base'
          ? (await import('js-tiktoken/ranks/o200k_base')).default
          : (await import('js-tiktoken/ranks/cl100k_base')).default;
      }
      const enc = new Tiktoken(ranks);
      return { count: (t) => enc.encode(t).length, free() {} };
    }
    case 'hypertok': {
      // Loaded as its README shows: the vocabulary package's bytes into `fromBytes`, the
      // single-thread tier (synchronous `encodeSync`; the other tiers are asynchronous). Node reads
      // the .htk file (Node's fetch cannot read file: URLs); the page fetches the .htk and the
      // .wasm copied next to the bundle and passes the compiled module as `moduleSource`.
      let tok;
      if (env.bundles) {
        const m = await import(env.bundles[lib][encoding]);
        const moduleSource = await WebAssembly.compileStreaming(fetch(m.wasmUrl));
        const bytes = new Uint8Array(await (await fetch(m.vocabUrl)).arrayBuffer());
        tok = await m.fromBytes(bytes, { tier: 'single', moduleSource });
      } else {
        const { readFile } = await import('node:fs/promises');
        const { fromBytes } = await import('hypertok');
        const { vocabulary } = encoding === 'o200k_base' ? await import('@hypertok/vocab-o200k') : await import('@hypertok/vocab-cl100k');
        tok = await fromBytes(await readFile(vocabulary), { tier: 'single' });
      }
      return { count: (t) => tok.encodeSync(t, HYPERTOK_ORDINARY).length, free: () => tok.free() };
    }
    default:
      throw new Error(`unknown library ${lib}`);
  }
}
