// One loader per tokenizer, the same code in Node and in the browser. Packages are imported by
// their bare names: Node resolves them from benches/node_modules, the page through an import map
// (see server.mjs). Only what differs between runtimes comes from `env`.
//
// env = {
//   runtime: 'node' | 'browser',
//   ctxguard: { entry, init: 'none' | 'initSync' | 'default', wasm },  // wasm: a file path (Node)
//   tiktokenWasm: URL of tiktoken's lite wasm (browser only),
// }

export const LIBS = ['ctxguard', 'gpt-tokenizer', 'tiktoken', 'js-tiktoken'];
export const ENCODINGS = ['o200k_base', 'cl100k_base'];

/** What each counter calls: the library's fastest way to get a count (see BENCHMARKS.md notes). */
export const COUNT_API = {
  ctxguard: 'countTokens(text, { encoding })',
  'gpt-tokenizer': 'countTokens(text) from gpt-tokenizer/encoding/<enc>',
  tiktoken: 'new Tiktoken(ranks from encoders/<enc>.json).encode(text).length (tiktoken/lite)',
  'js-tiktoken': 'new Tiktoken(ranks/<enc>).encode(text).length (js-tiktoken/lite)',
};

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
      const mod = encoding === 'o200k_base'
        ? await import('gpt-tokenizer/encoding/o200k_base')
        : await import('gpt-tokenizer/encoding/cl100k_base');
      return { count: mod.countTokens, free() {} };
    }
    case 'tiktoken': {
      let Tiktoken;
      if (env.runtime === 'node') {
        const m = await import('tiktoken/lite'); // CommonJS entry: reads the wasm file synchronously
        Tiktoken = m.Tiktoken ?? m.default.Tiktoken;
      } else {
        const m = await import('tiktoken/lite/init');
        await m.init((imports) => WebAssembly.instantiateStreaming(fetch(env.tiktokenWasm), imports));
        Tiktoken = m.Tiktoken;
      }
      const ranks = encoding === 'o200k_base'
        ? (await import('tiktoken/encoders/o200k_base.json', { with: { type: 'json' } })).default
        : (await import('tiktoken/encoders/cl100k_base.json', { with: { type: 'json' } })).default;
      const enc = new Tiktoken(ranks.bpe_ranks, ranks.special_tokens, ranks.pat_str);
      return { count: (t) => enc.encode(t).length, free: () => enc.free() };
    }
    case 'js-tiktoken': {
      const { Tiktoken } = await import('js-tiktoken/lite');
      const ranks = encoding === 'o200k_base'
        ? (await import('js-tiktoken/ranks/o200k_base')).default
        : (await import('js-tiktoken/ranks/cl100k_base')).default;
      const enc = new Tiktoken(ranks);
      return { count: (t) => enc.encode(t).length, free() {} };
    }
    default:
      throw new Error(`unknown library ${lib}`);
  }
}
