// The measuring side of the benchmark, the same in a Node child process and in a Chromium page.
// `read(file)` returns an input file's text; everything else is shared.

import { loadCounter, loadCtxguard } from './adapters.mjs';
import { createSession, ctxguardChat, now } from './measure.mjs';

export function makeHarness(read) {
  let counters = {};
  let sessions = {};
  return {
    /** Reads the inputs (not timed), then loads each counter (timed, with one short count). */
    async init({ libs, encoding, ids, env, manifest, variants }) {
      const texts = {};
      let chats = null;
      for (const id of ids) {
        const files = manifest.files[id].variants.slice(0, variants).map((v) => v.file);
        const all = [];
        for (const f of files) all.push(await read(f));
        if (id === 'chat') chats = all.map((j) => JSON.parse(j));
        else texts[id] = all;
      }
      const loadMs = {};
      for (const lib of libs) {
        const t0 = now();
        counters[lib] = await loadCounter(lib, encoding, env);
        counters[lib].count('warm up');
        loadMs[lib] = now() - t0;
        sessions[lib] = createSession(counters[lib], { texts, chats });
      }
      return { loadMs };
    },
    run: (lib, id, v) => sessions[lib].run(id, v),
    finish() {
      for (const c of Object.values(counters)) c.free();
      counters = {};
      sessions = {};
      return true;
    },
    /** ctxguard's countMessages / ContextGuard.measure on the chat, in a fresh process or page. */
    async chatExtras({ kind, encoding, env, manifest, runs, budgetMs }) {
      const chat = JSON.parse(await read(manifest.files.chat.variants[0].file));
      const warm = JSON.parse(await read(manifest.files.chat.variants[1].file));
      const v2 = manifest.files.chat.variants[2];
      const unseen = kind === 'guard' && v2 ? JSON.parse(await read(v2.file)) : null;
      const mod = await loadCtxguard(env);
      return ctxguardChat(mod, kind, chat, warm, encoding, { runs, budgetMs, unseen });
    },
  };
}
