// The texts the Claude estimate is measured on, each the size of one chat message, grouped by
// kind of content: real text from this repository (its documents, Rust and JavaScript sources,
// JSON), chat messages in eight languages (texts.mjs), and the benchmark's generated inputs (benches/lib/inputs.mjs:
// prose, code, CJK, minified JSON and a chat with tool calls and outputs). Deterministic: the same
// checkout gives the same corpus.

import fs from 'node:fs';
import path from 'node:path';

import { generateInputs } from '../lib/inputs.mjs';
import { messageTexts } from '../lib/measure.mjs';
import { CHAT_TEXTS } from './texts.mjs';

/** A message-sized piece: at most this many characters, cut at a paragraph or line end. */
const PIECE_CHARS = 3000;
/** At most this many characters of one kind (the reconstruction counts ~20-50 KB/s). */
const KIND_CHARS = 150_000;

const LANGUAGES = { de: 'German', fr: 'French', es: 'Spanish', ru: 'Russian', ja: 'Japanese', zh: 'Chinese', ko: 'Korean', ar: 'Arabic' };

/** `text` cut into pieces of at most `max` characters at `sep` boundaries (a longer part is cut hard). */
export function pieces(text, sep = '\n\n', max = PIECE_CHARS) {
  const out = [];
  let cur = '';
  for (const part of text.split(sep)) {
    if (cur && cur.length + sep.length + part.length > max) {
      out.push(cur);
      cur = '';
    }
    cur = cur ? cur + sep + part : part;
    while (cur.length > max) {
      out.push(cur.slice(0, max));
      cur = cur.slice(max);
    }
  }
  if (cur.trim()) out.push(cur);
  return out.filter((p) => p.trim().length > 0);
}

/** The first pieces of `texts` up to `KIND_CHARS` characters. */
function capped(list) {
  const out = [];
  let chars = 0;
  for (const t of list) {
    if (chars >= KIND_CHARS) break;
    out.push(t);
    chars += t.length;
  }
  return out;
}

function filesUnder(dir, ext) {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p, ext));
    else if (e.name.endsWith(ext)) out.push(p);
  }
  return out;
}

const read = (p) => fs.readFileSync(p, 'utf8');

/**
 * `[{ kind, label, group, texts }]`: `group` is `real`, `chat` (written chat messages) or
 * `generated`. `root` is the repository.
 */
export function buildCorpus(root) {
  const kinds = [];
  const add = (kind, label, group, texts) => {
    const t = capped(texts);
    if (t.length) kinds.push({ kind, label, group, texts: t });
  };
  const docs = ['README.md', 'BENCHMARKS.md', 'docs/reliability.md'].filter((f) => fs.existsSync(path.join(root, f)));
  add('prose-en', 'English prose (README, BENCHMARKS, RELIABILITY)', 'real', docs.flatMap((f) => pieces(read(path.join(root, f)))));
  add('code-rust', 'Rust source (src/**/*.rs)', 'real', filesUnder(path.join(root, 'src'), '.rs').flatMap((f) => pieces(read(f), '\n')));
  add('code-js', 'JavaScript source (src/js/*.js)', 'real', filesUnder(path.join(root, 'src/js'), '.js').flatMap((f) => pieces(read(f), '\n')));
  const json = [path.join(root, 'package-lock.json'), path.join(root, 'benches/results/latest.json')].filter((f) => fs.existsSync(f));
  add('json', 'JSON, pretty-printed (package-lock, benchmark results)', 'real', json.flatMap((f) => pieces(read(f), '\n')));
  for (const [lang, name] of Object.entries(LANGUAGES)) add(`chat-${lang}`, `chat messages, ${name}`, 'chat', CHAT_TEXTS[lang]);

  const gen = generateInputs({ quick: true });
  add('gen-prose', 'generated prose (benches inputs)', 'generated', pieces(gen.texts.prose));
  add('gen-code', 'generated code (benches inputs)', 'generated', pieces(gen.texts.code, '\n'));
  add('gen-cjk', 'generated CJK (benches inputs)', 'generated', pieces(gen.texts.cjk, '\n'));
  add('gen-minjson', 'generated minified JSON (benches inputs)', 'generated', pieces(gen.texts.minjson, ','));
  add('gen-chat', 'generated chat: messages, tool calls and outputs (benches inputs)', 'generated', gen.chat.map((m) => messageTexts(m).join('\n')).filter((t) => t.trim()));
  return kinds;
}
