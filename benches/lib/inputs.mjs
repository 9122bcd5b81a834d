// Deterministic benchmark inputs: seeded PRNG, built-in word lists, no network data.
// `generateInputs()` returns the texts and the chat; `ensureInputs(dir)` writes them once to files
// (with a manifest and sha256 sums) so that every runtime reads the very same bytes.

import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';

import { messageTexts } from './measure.mjs';

/** Bump when the generator changes: cached files with another version are regenerated. */
export const GENERATOR_VERSION = 12;

const MB = 1_000_000;

// ---------------------------------------------------------------- PRNG

/** sfc32: small, fast, good enough for text generation, identical on every platform. */
function makeRng(seed) {
  let a = 0x9e3779b9, b = 0x243f6a88, c = 0xb7e15162, d = seed >>> 0;
  const next = () => {
    a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0;
    const t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    const r = (t + d) | 0;
    c = (c + r) | 0;
    return (r >>> 0) / 4294967296;
  };
  for (let i = 0; i < 16; i++) next();
  const rng = {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)), // inclusive
    pick: (arr) => arr[Math.floor(next() * arr.length)],
    chance: (p) => next() < p,
    /** Zipf-like pick: index ~ 1/(i+1)^s over the array order. */
    zipf: (arr, s = 1.0) => {
      // inverse-CDF approximation of a continuous power law over [1, n+1)
      const n = arr.length;
      const u = next();
      let i;
      if (Math.abs(s - 1) < 1e-9) i = Math.floor(Math.exp(u * Math.log(n + 1))) - 1;
      else {
        const e = 1 - s;
        i = Math.floor(Math.pow(u * (Math.pow(n + 1, e) - 1) + 1, 1 / e)) - 1;
      }
      return arr[Math.min(n - 1, Math.max(0, i))];
    },
    /** Log-uniform integer in [lo, hi]. */
    logInt: (lo, hi) => Math.round(Math.exp(Math.log(lo) + next() * (Math.log(hi) - Math.log(lo)))),
  };
  return rng;
}

// ---------------------------------------------------------------- word lists

const COMMON = `the of and to a in is that for it as was with be by on not he this are or his from at
which but have an they you were her she there one all we their been has would when if so what more
will no can out about up them into some could other time than only then its do any these two may like
also first new after most over such way where my made me our well because should even world many must
year people just work through back used how between life being those under both still state day own
while great same part another before however might few system found much around right small long
since against place without during us each last thought both high general form number house though
end point home case set off began went hand give power nothing light called went today information
school process question often group country problem always important public early water become
working level means result change given order development already several market building value
during report local second support research certain least whole service example course possible
human later major field area reason within social experience almost evidence education clear family
company although child become further policy based story children office sense known history
language energy rather model data simple common design student method future network memory
version message request response budget context window token account summary detail compact
pressure measure signal pattern source record review careful quickly directly slowly entirely
nearly mostly rarely finally recently simply exactly probably usually certainly clearly`.split(/\s+/);

const PREFIXES = ['', '', '', '', '', 're', 'un', 'in', 'pre', 'over', 'under', 'counter', 'de',
  'dis', 'mis', 'non', 'inter', 'sub', 'super', 'trans', 'co', 'out', 'multi', 'semi', 'anti', 'post',
  'micro', 'auto', 'hyper', 'para'];
const ROOTS = `form struct duct port spect scrib tract mit press fer vert ject pend pos cede
rupt dict graph log phon scope meter cred fid jud leg loc luc mand mov nat pel plic quer sens sol
solv son tang temp ten tort vac val ven vid voc volv act bind build call cast charge claim count
cover craft draw drive fill find fold frame gain grade guard hold judge keep lay lead light limit
link list load lock mark match mind mount move name note pack pass place plan plant play point print
prove pull reach read rest rule run score seal seed serve set shape share shift sign sort sound
spread stand start state step store stress talk test think touch trace track trade train trust turn
vote walk watch wave weigh work wrap write yield grant balance border capital center channel
circle climate colony comfort concept credit crystal culture current cycle debate decade deposit
desert element empire engine estate factor fashion figure finance format fortune fraction garden
harbor harvest heritage horizon income index island journal kernel labor lantern layer legend
margin marine medium metal method mineral mirror moment motive nation needle network object
ocean option orbit origin output parcel pattern period pilot planet poem portion profit quarter
question radius random region ribbon river rocket saddle salary sample season second sector segment
signal silver socket spirit station status symbol talent target temple theory timber tissue
topic tower traffic treaty tunnel union valley vector venture vessel volume wallet weather window
winter wonder`.split(/\s+/);
const SUFFIXES = ['', '', '', '', '', '', 's', 's', 'ed', 'ing', 'er', 'ers', 'ion', 'ions', 'able',
  'ible', 'al', 'ally', 'ive', 'ively', 'ment', 'ments', 'ness', 'ity', 'ous', 'ful', 'less', 'ly',
  'ize', 'ized', 'ization', 'ism', 'ist', 'ure', 'ance', 'ency', 'ative', 'ory'];
const NAMES = `Alice Bob Carol Dmitri Elena Farah Gustav Hiroshi Ingrid Jamal Katarina Luis Mei Nadia
Oskar Priya Quentin Rosa Sven Tamar Uma Viktor Wen Ximena Yusuf Zofia London Paris Nairobi Lima
Osaka Toronto Lagos Berlin Mumbai Sydney Chicago Madrid Seoul Cairo Oslo Denver Kyoto Quito
Monday Tuesday Wednesday Thursday Friday January March April September November Atlantic Pacific
Microsoft Linux Python Rust Kubernetes PostgreSQL Chromium Wikipedia`.split(/\s+/);

function buildVocabulary(rng) {
  const seen = new Set(COMMON);
  const vocab = [];
  while (vocab.length < 16000) {
    const w = rng.pick(PREFIXES) + rng.zipf(ROOTS, 0.6) + rng.pick(SUFFIXES);
    if (w.length < 3 || seen.has(w)) continue;
    seen.add(w);
    vocab.push(w);
  }
  return vocab;
}

// ---------------------------------------------------------------- prose

function makeProse(rng, vocab) {
  const word = () => {
    const r = rng.next();
    if (r < 0.68) return rng.zipf(COMMON, 1.0);
    if (r < 0.97) return rng.zipf(vocab, 1.0);
    if (r < 0.985) return rng.pick(NAMES);
    return String(rng.chance(0.5) ? rng.int(2, 2030) : rng.int(1, 99) + '.' + rng.int(0, 9));
  };
  const sentence = () => {
    const n = rng.int(6, 28);
    const ws = [];
    for (let i = 0; i < n; i++) {
      let w = word();
      if (i > 1 && i < n - 1 && rng.chance(0.07)) w += rng.pick([',', ',', ',', ';', ':']);
      ws.push(w);
    }
    if (rng.chance(0.05)) ws.splice(rng.int(1, ws.length - 1), 0, '(' + word() + ' ' + word() + ')');
    if (rng.chance(0.04)) ws.splice(rng.int(1, ws.length - 1), 0, '"' + word() + ' ' + word() + '"');
    if (rng.chance(0.03)) ws.push("isn't", 'it');
    const s = ws.join(' ');
    return s[0].toUpperCase() + s.slice(1) + rng.pick(['.', '.', '.', '.', '.', '.', '?', '!']);
  };
  const paragraph = () => {
    const n = rng.int(2, 9);
    const ss = [];
    for (let i = 0; i < n; i++) ss.push(sentence());
    return ss.join(' ');
  };
  return { word, sentence, paragraph };
}

// ---------------------------------------------------------------- code

function makeCode(rng, vocab) {
  const ident = (style) => {
    const n = rng.int(1, 3);
    const parts = [];
    for (let i = 0; i < n; i++) parts.push(rng.chance(0.6) ? rng.zipf(COMMON, 1.1) : rng.zipf(vocab, 1.0));
    const clean = parts.map((p) => p.replace(/[^a-z]/gi, '').toLowerCase() || 'x');
    if (style === 'snake') return clean.join('_');
    if (style === 'Pascal') return clean.map((p) => p[0].toUpperCase() + p.slice(1)).join('');
    return clean[0] + clean.slice(1).map((p) => p[0].toUpperCase() + p.slice(1)).join('');
  };
  const num = () => (rng.chance(0.2) ? '0x' + rng.int(0, 0xffffff).toString(16) : String(rng.int(0, rng.pick([9, 100, 4096, 65535]))));
  const prose = makeProse(rng, vocab);
  const str = () => JSON.stringify(prose.sentence().slice(0, rng.int(8, 60)));

  const rustFn = () => {
    const name = ident('snake');
    const ty = rng.pick(['u32', 'usize', 'String', '&str', 'Vec<u8>', 'Option<u64>', 'bool', 'f64']);
    const args = Array.from({ length: rng.int(0, 3) }, () => `${ident('snake')}: ${rng.pick(['&str', 'u32', '&[u8]', 'usize', '&mut Vec<String>', 'Option<&Config>'])}`);
    const lines = [`/// ${prose.sentence()}`, `pub fn ${name}(${args.join(', ')}) -> Result<${ty}, Error> {`];
    for (let i = rng.int(2, 9); i > 0; i--) {
      const v = ident('snake');
      lines.push(rng.pick([
        `    let ${v} = ${ident('snake')}.${ident('snake')}(${num()})?;`,
        `    if ${v}.len() > ${num()} {\n        return Err(Error::new(ErrorCode::${ident('Pascal')}, ${str()}));\n    }`,
        `    for ${v} in ${ident('snake')}.iter().filter(|x| x.${ident('snake')} != ${num()}) {\n        ${ident('snake')}.push(${v}.clone());\n    }`,
        `    // ${prose.sentence()}`,
        `    let ${v}: HashMap<String, ${ident('Pascal')}> = HashMap::with_capacity(${num()});`,
        `    match ${v} {\n        Some(x) => x.${ident('snake')}(),\n        None => ${num()},\n    };`,
      ]));
    }
    lines.push(`    Ok(${ident('snake')})`, '}', '');
    return lines.join('\n');
  };
  const jsFn = () => {
    const name = ident('camel');
    const lines = [`/** ${prose.sentence()} */`, `export ${rng.chance(0.3) ? 'async ' : ''}function ${name}(${Array.from({ length: rng.int(0, 3) }, () => ident('camel')).join(', ')}) {`];
    for (let i = rng.int(2, 9); i > 0; i--) {
      const v = ident('camel');
      lines.push(rng.pick([
        `  const ${v} = ${ident('camel')}.${ident('camel')}(${num()});`,
        `  if (${v} === undefined || ${v}.length > ${num()}) throw new TypeError(${str()});`,
        `  for (const ${v} of ${ident('camel')}) {\n    ${ident('camel')}.set(${v}.${ident('camel')}, { ${ident('camel')}: ${num()}, ${ident('camel')}: ${str()} });\n  }`,
        `  // ${prose.sentence()}`,
        `  const ${v} = await fetch(\`/api/${ident('snake')}/\${${ident('camel')}}?limit=${num()}\`).then((r) => r.json());`,
        `  return ${v}.map((x) => x.${ident('camel')} ?? ${num()}).filter(Boolean);`,
      ]));
    }
    lines.push('}', '');
    return lines.join('\n');
  };
  const pyFn = () => {
    const name = ident('snake');
    const lines = [`def ${name}(${['self', ...Array.from({ length: rng.int(0, 3) }, () => ident('snake'))].join(', ')}):`, `    """${prose.sentence()}"""`];
    for (let i = rng.int(2, 9); i > 0; i--) {
      const v = ident('snake');
      lines.push(rng.pick([
        `    ${v} = self.${ident('snake')}.get(${str()}, ${num()})`,
        `    if not ${v} or len(${v}) > ${num()}:\n        raise ValueError(f"${ident('snake')} {${v}!r} is invalid")`,
        `    for ${v} in sorted(${ident('snake')}, key=lambda x: x.${ident('snake')}):\n        ${ident('snake')}.append(${v})`,
        `    # ${prose.sentence()}`,
        `    ${v} = {k: v for k, v in ${ident('snake')}.items() if v is not None}`,
        `    return [${ident('snake')}(x) for x in ${v}[:${num()}]]`,
      ]));
    }
    lines.push('');
    return lines.join('\n');
  };
  const block = () => rng.pick([rustFn, rustFn, jsFn, jsFn, pyFn])();
  return { block, rustFn, jsFn, pyFn, ident };
}

// ---------------------------------------------------------------- CJK

// ~500 frequent Chinese characters (simplified), most frequent first.
const HANZI = [...`的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可你年生自会那后能对着事
其里所去行过家十用发天如然作方成者多日都三小军二无同么经法当起与好看学进种将还分此心前面又定见只主没公从知
使点明两位关已现实全把高长但部机意通问本因新理特其情正想开期间被最重业度回向外物代力气次性体利手内正相常数
第加量表化目论合美运提平等结化产者文电动程义世界各直身总务流即反光取少五入报者共四题品件变老口少管工农政
战制及路治任水活由研传计市展资别接结门民原形员较真强快应该并什完样元白打接受际教系党式思海表据条少太建思
果位月书音师口保神线究领再候达改容感深空决米领交格北南东西王青近儿图解指集史术争感金资科语布团写拉众切
候院住花谈设区术城病士安料群类步红权吧石乎城号需风确信象议片照越吗非准布区温议尽程造效改基视府导求据联
速划商规置黑始火早确根增段式亲华值府投众历类持清整客何火带命精读验准采写除查张环较传省济验府爱留达注领
识落细存连证医节试复举具胜觉须参企调价认失算低乐济包示护况装座古林德营钱阿维突言角拿读房官客千单调色刚
则首标习致够律排厂志营织济局围响转究确河讨势费属职够奇村影升待讲则念差罗委血跟技择益助续胡故状刻似钢纪`].filter((c) => c.trim());
// Kanji seen often in Japanese that differ from the simplified list above.
const KANJI = [...`日本語会社時間今年東京大学先生電話自分仕事世界問題時代経済政治関係情報技術開発研究部長気持手紙
言葉駅車道店銀行病院新聞写真映画音楽料理食事天気雨雪春夏秋冬朝昼夜週毎回番号名前住所会議資料結果説明予定`].filter((c) => c.trim());
const HIRAGANA = Array.from({ length: 0x3093 - 0x3041 + 1 }, (_, i) => String.fromCodePoint(0x3041 + i));
const KATAKANA = Array.from({ length: 0x30f3 - 0x30a1 + 1 }, (_, i) => String.fromCodePoint(0x30a1 + i));
const JP_PARTICLES = ['は', 'が', 'を', 'に', 'で', 'と', 'の', 'も', 'へ', 'から', 'まで', 'より'];
const JP_ENDINGS = ['です。', 'ます。', 'でした。', 'ました。', 'ません。', 'でしょう。', 'ですか？', 'だ。', 'している。', 'と思います。'];

function makeCjk(rng) {
  const zhSentence = () => {
    let s = '';
    const n = rng.int(8, 40);
    for (let i = 0; i < n; i++) {
      s += rng.zipf(HANZI, 0.9);
      if (i > 3 && i < n - 2 && rng.chance(0.08)) s += rng.pick(['，', '，', '、', '：']);
    }
    if (rng.chance(0.06)) s += '（' + rng.int(1, 2024) + '）';
    if (rng.chance(0.05)) s += '「' + rng.pick(HANZI) + rng.pick(HANZI) + '」';
    return s + rng.pick(['。', '。', '。', '？', '！']);
  };
  const jpWord = () => {
    const r = rng.next();
    if (r < 0.45) return rng.pick(KANJI) + (rng.chance(0.6) ? rng.pick(KANJI) : '');
    if (r < 0.7) return rng.zipf(HANZI, 0.9) + rng.pick(HIRAGANA);
    let k = '';
    for (let i = rng.int(2, 6); i > 0; i--) k += rng.pick(KATAKANA);
    return rng.chance(0.3) ? k + 'ー' : k;
  };
  const jpSentence = () => {
    let s = '';
    const n = rng.int(3, 10);
    for (let i = 0; i < n; i++) {
      s += jpWord() + rng.pick(JP_PARTICLES);
      if (rng.chance(0.12)) s += '、';
    }
    return s + jpWord() + rng.pick(JP_ENDINGS);
  };
  const paragraph = () => {
    const zh = rng.chance(0.55);
    let p = '';
    for (let i = rng.int(2, 7); i > 0; i--) p += zh ? zhSentence() : jpSentence();
    return p;
  };
  return { paragraph };
}

// ---------------------------------------------------------------- tool outputs

function makeTools(rng, vocab) {
  const prose = makeProse(rng, vocab);
  const code = makeCode(rng, vocab);
  const hex = (n) => { let s = ''; for (let i = 0; i < n; i++) s += '0123456789abcdef'[rng.int(0, 15)]; return s; };
  const filePath = () => {
    const dirs = Array.from({ length: rng.int(1, 4) }, () => code.ident('snake').slice(0, 18));
    return (rng.chance(0.5) ? 'src/' : '') + dirs.join('/') + rng.pick(['.rs', '.ts', '.js', '.py', '.json', '.md', '.toml', '.yaml']);
  };
  const isoTime = (base, i) => new Date(base + i * rng.int(1, 4000)).toISOString();
  const logs = (lines) => {
    const base = Date.UTC(2025, rng.int(0, 11), rng.int(1, 28), rng.int(0, 23));
    const out = [];
    for (let i = 0; i < lines; i++) {
      const lvl = rng.zipf(['INFO', 'DEBUG', 'WARN', 'ERROR', 'TRACE'], 1.2);
      const mod = code.ident('snake').slice(0, 20) + '::' + code.ident('snake').slice(0, 16);
      out.push(rng.pick([
        `${isoTime(base, i)} ${lvl.padEnd(5)} ${mod}: ${prose.sentence()}`,
        `${isoTime(base, i)} ${lvl.padEnd(5)} ${mod}: request_id=${hex(16)} status=${rng.pick([200, 200, 200, 201, 204, 304, 400, 404, 429, 500, 503])} latency_ms=${rng.int(1, 2500)} bytes=${rng.int(0, 1 << 20)}`,
        `${isoTime(base, i)} ${lvl.padEnd(5)} ${mod}: retrying ${filePath()} (attempt ${rng.int(1, 5)}/5) after ${rng.int(10, 9000)}ms: ${code.ident('Pascal')}Error`,
        `    at ${code.ident('camel')} (${filePath()}:${rng.int(1, 900)}:${rng.int(1, 80)})`,
      ]));
    }
    return out.join('\n');
  };
  const jsonValue = (depth) => {
    const r = rng.next();
    if (depth > 3 || r < 0.45) {
      return rng.pick([
        () => rng.int(0, 100000), () => prose.sentence().slice(0, rng.int(5, 80)), () => rng.chance(0.5),
        () => null, () => hex(rng.pick([8, 12, 32])), () => isoTime(Date.UTC(2024, 0, 1), rng.int(0, 1e6)), () => rng.int(0, 1e6) / 100,
      ])();
    }
    if (r < 0.7) return Array.from({ length: rng.int(1, 6) }, () => jsonValue(depth + 1));
    const o = {};
    for (let i = rng.int(2, 7); i > 0; i--) o[code.ident(rng.pick(['snake', 'camel']))] = jsonValue(depth + 1);
    return o;
  };
  const json = (items) => JSON.stringify({ ok: true, total: items, items: Array.from({ length: items }, () => jsonValue(1)) }, null, 2);
  const listing = (n) => {
    const out = [`total ${rng.int(8, 9000)}`];
    for (let i = 0; i < n; i++) {
      const dir = rng.chance(0.2);
      out.push(`${dir ? 'd' : '-'}rw${dir ? 'x' : '-'}r-${dir ? 'x' : '-'}r-${dir ? 'x' : '-'} 1 dev dev ${String(rng.int(0, 3e6)).padStart(8)} ${rng.pick(['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'])} ${String(rng.int(1, 28)).padStart(2)} ${String(rng.int(0, 23)).padStart(2, '0')}:${String(rng.int(0, 59)).padStart(2, '0')} ${dir ? code.ident('snake') : filePath()}`);
    }
    return out.join('\n');
  };
  return { logs, json, listing, filePath, hex, prose, code, jsonValue };
}

// ---------------------------------------------------------------- assembling

function fillToBytes(targetBytes, piece, sep = '\n\n') {
  const parts = [];
  let bytes = 0;
  while (bytes < targetBytes) {
    const p = piece();
    parts.push(p);
    bytes += Buffer.byteLength(p) + Buffer.byteLength(sep);
  }
  return truncateUtf8(parts.join(sep), targetBytes);
}

/** Cut `s` to at most `maxBytes` UTF-8 bytes on a code point boundary. */
function truncateUtf8(s, maxBytes) {
  const buf = Buffer.from(s);
  if (buf.length <= maxBytes) return s;
  let end = maxBytes;
  while (end > 0 && (buf[end] & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString('utf8');
}

function makeChat(rng, vocab, { messages: count, scale }) {
  const t = makeTools(rng, vocab);
  const { prose, code } = t;
  const cjk = makeCjk(rng);
  const paras = (lo, hi) => Array.from({ length: rng.int(lo, hi) }, () => prose.paragraph()).join('\n\n');
  const codeBlock = () => '```' + rng.pick(['rust', 'ts', 'python', 'js']) + '\n' + Array.from({ length: rng.int(1, 3) }, () => code.block()).join('\n') + '```';
  const sz = (n) => Math.max(1, Math.round(n * scale));

  const userContent = () => {
    const r = rng.next();
    if (r < 0.55) return prose.paragraph() + (rng.chance(0.4) ? '\n\n' + prose.paragraph() : '');
    if (r < 0.8) return prose.sentence() + '\n\n' + codeBlock();
    if (r < 0.9) return cjk.paragraph();
    return 'Here is the output:\n\n```\n' + t.logs(sz(rng.int(5, 40))) + '\n```\n\n' + prose.sentence();
  };
  const assistantContent = () => {
    const r = rng.next();
    if (r < 0.5) return paras(1, 4);
    if (r < 0.9) return paras(1, 2) + '\n\n' + codeBlock() + '\n\n' + prose.paragraph();
    return Array.from({ length: rng.int(3, 8) }, (_, i) => `${i + 1}. ${prose.sentence()}`).join('\n');
  };
  const toolCall = (id) => {
    const kind = rng.zipf(['read_file', 'run_command', 'search_code', 'list_dir', 'http_get', 'query_db'], 0.8);
    let args;
    switch (kind) {
      case 'read_file': args = { path: t.filePath(), start_line: rng.int(1, 400), max_lines: rng.pick([200, 400, 1000]) }; break;
      case 'run_command': args = { command: rng.pick(['cargo test', 'npm run build', 'pytest -x', 'git log --oneline -n 50', 'kubectl logs deploy/' + code.ident('snake')]) + (rng.chance(0.4) ? ' -- ' + code.ident('snake') : ''), timeout_ms: rng.int(1000, 120000), cwd: '/repo/' + code.ident('snake') }; break;
      case 'search_code': args = { query: prose.sentence().slice(0, rng.int(10, 60)), path: 'src/', regex: rng.chance(0.3), max_results: rng.int(5, 100) }; break;
      case 'list_dir': args = { path: t.filePath().replace(/\/[^/]*$/, ''), recursive: rng.chance(0.5) }; break;
      case 'http_get': args = { url: `https://api.example.com/v2/${code.ident('snake')}/${t.hex(12)}?page=${rng.int(1, 40)}`, headers: { accept: 'application/json' } }; break;
      default: args = { sql: `SELECT ${code.ident('snake')}, ${code.ident('snake')}, count(*) FROM ${code.ident('snake')} WHERE ${code.ident('snake')} > ${rng.int(0, 1000)} GROUP BY 1, 2 ORDER BY 3 DESC LIMIT ${rng.int(10, 500)}`, params: t.jsonValue(2) };
    }
    return { call: { id, type: 'function', function: { name: kind, arguments: JSON.stringify(args) } }, kind };
  };
  const toolOutput = (kind) => {
    switch (kind) {
      case 'read_file': return Array.from({ length: sz(rng.int(1, 6)) }, () => code.block()).join('\n');
      case 'run_command': return t.logs(sz(rng.logInt(10, 220)));
      case 'list_dir': return t.listing(sz(rng.logInt(10, 220)));
      case 'search_code': return Array.from({ length: sz(rng.int(5, 60)) }, () => `${t.filePath()}:${rng.int(1, 900)}: ${prose.sentence().slice(0, 100)}`).join('\n');
      default: return t.json(sz(rng.logInt(2, 40)));
    }
  };

  const msgs = [{ role: 'system', content: 'You are a coding assistant working in a repository. ' + paras(2, 3) }];
  let callNo = 0;
  while (msgs.length < count) {
    const block = [];
    const u = userContent();
    block.push(rng.chance(0.1) ? { role: 'user', content: [{ type: 'text', text: u }, { type: 'text', text: prose.sentence() }] } : { role: 'user', content: u });
    for (let round = rng.zipf([0, 1, 2, 3, 4, 5], 0.7); round > 0; round--) {
      const calls = Array.from({ length: rng.zipf([1, 2, 3], 1.5) }, () => toolCall(`call_${(++callNo).toString(36).padStart(6, '0')}${t.hex(10)}`));
      block.push({ role: 'assistant', content: rng.chance(0.3) ? prose.sentence() : null, tool_calls: calls.map((c) => c.call) });
      for (const c of calls) block.push({ role: 'tool', tool_call_id: c.call.id, content: toolOutput(c.kind) });
    }
    block.push({ role: 'assistant', content: assistantContent() });
    if (msgs.length + block.length > count) {
      // Fill the remaining slots with plain turns so that no tool call is left without its output.
      while (msgs.length < count) msgs.push(msgs.length % 2 ? { role: 'user', content: userContent() } : { role: 'assistant', content: assistantContent() });
      break;
    }
    msgs.push(...block);
  }
  return msgs;
}

/**
 * One variant of every input: variant 0 is the reference set; variants 1.. are the same kinds of
 * text from other seeds (same vocabulary), so that timed runs count text the tokenizer has not
 * seen yet — a per-piece cache then helps only as much as it would on a new chat message.
 */
export function generateInputs({ quick = false, variant = 0 } = {}) {
  const size = quick ? MB / 8 : MB;
  const rng = makeRng(0x5eed2025);
  const vocab = buildVocabulary(rng);
  const seed = (n) => makeRng(n + variant * 7919);
  const prose = makeProse(seed(1), vocab);
  const code = makeCode(seed(2), vocab);
  const cjk = makeCjk(seed(3));
  const adv = seed(4);
  const tools = makeTools(seed(5), vocab);

  let letters = '';
  {
    const chunk = [];
    for (let i = 0; i < size; i++) chunk.push(97 + Math.floor(adv.next() * 26));
    letters = Buffer.from(chunk).toString('latin1');
  }
  const minjson = fillToBytes(size, () => JSON.stringify(tools.jsonValue(0)), ',');
  const b64bytes = Buffer.alloc(Math.ceil((quick ? 5 * MB / 8 : 5 * MB) * 3 / 4));
  for (let i = 0; i < b64bytes.length; i++) b64bytes[i] = Math.floor(adv.next() * 256);
  const base64 = truncateUtf8('data:image/png;base64,' + b64bytes.toString('base64'), quick ? 5 * MB / 8 : 5 * MB);

  const chat = makeChat(seed(6), vocab, quick ? { messages: 300, scale: 0.4 } : { messages: 2000, scale: 0.77 });
  // The slowest inputs seen from outside: one piece of a megabyte (a run of one character; each
  // variant one character shorter, so that no piece cache has seen it), a run of digits (pieces of
  // three, all the same) and random base64 without a data-URL prefix. Their own seed: the inputs
  // above stay what they were.
  const run = (c) => c.repeat(size - variant);
  const raw = seed(7);
  const rawBytes = Buffer.alloc(Math.ceil((size * 3) / 4));
  for (let i = 0; i < rawBytes.length; i++) rawBytes[i] = Math.floor(raw.next() * 256);
  return {
    texts: {
      prose: fillToBytes(size, prose.paragraph),
      code: fillToBytes(size, code.block, '\n'),
      cjk: fillToBytes(size, cjk.paragraph, '\n'),
      minjson,
      base64,
      letters,
      b64raw: rawBytes.toString('base64').slice(0, size),
      spaces: run(' '),
      aaaa: run('a'),
      digits: run('7'),
      newlines: run('\n'),
    },
    chat,
  };
}

/** Descriptions of the inputs, in the order they are measured (the quadratic suspects last). */
export const INPUTS = [
  { id: 'prose', label: 'English prose' },
  { id: 'code', label: 'source code' },
  { id: 'cjk', label: 'CJK (zh/ja)' },
  { id: 'chat', label: 'chat, per message' },
  { id: 'minjson', label: 'minified JSON, no whitespace' },
  { id: 'base64', label: 'base64 data URL' },
  { id: 'letters', label: 'letters, no whitespace' },
  { id: 'b64raw', label: 'random base64' },
  { id: 'spaces', label: 'run of spaces' },
  { id: 'aaaa', label: "run of 'a'" },
  { id: 'digits', label: "run of '7'" },
  { id: 'newlines', label: 'run of newlines' },
];

/** The adversarial inputs, reported against prose (time per MB ÷ the same library's on prose). */
export const ADVERSARIAL = ['minjson', 'base64', 'letters', 'b64raw', 'spaces', 'aaaa', 'digits', 'newlines'];

/**
 * Writes `variants` variants of the inputs to `dir` unless a manifest of the same version, mode and
 * at least as many variants is there; returns the manifest. `files[id]` describes variant 0 and
 * lists all variants in `files[id].variants`.
 */
export function ensureInputs(dir, { quick = false, variants = 1 } = {}) {
  const manifestPath = path.join(dir, 'manifest.json');
  try {
    const m = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
    if (m.version === GENERATOR_VERSION && m.quick === quick && m.variants >= variants) {
      const ok = Object.values(m.files).every((f) => f.variants.every((v) => fs.existsSync(path.join(dir, v.file))));
      if (ok) return m;
    }
  } catch { /* regenerate */ }
  fs.rmSync(dir, { recursive: true, force: true }); // only ever this generator's own files
  fs.mkdirSync(dir, { recursive: true });
  const t0 = performance.now();
  const files = {};
  const sha = (s) => crypto.createHash('sha256').update(s).digest('hex');
  for (let v = 0; v < variants; v++) {
    const { texts, chat } = generateInputs({ quick, variant: v });
    for (const [id, text] of Object.entries(texts)) {
      const file = `${id}.${v}.txt`;
      fs.writeFileSync(path.join(dir, file), text);
      (files[id] ??= { variants: [] }).variants.push({ file, bytes: Buffer.byteLength(text), chars: text.length, sha256: sha(text) });
    }
    const chatJson = JSON.stringify(chat);
    const file = `chat.${v}.json`;
    fs.writeFileSync(path.join(dir, file), chatJson);
    const chatTexts = chat.flatMap(messageTexts);
    (files.chat ??= { variants: [] }).variants.push({
      file,
      messages: chat.length,
      strings: chatTexts.length,
      bytes: chatTexts.reduce((a, s) => a + Buffer.byteLength(s), 0),
      jsonBytes: Buffer.byteLength(chatJson),
      sha256: sha(chatJson),
    });
  }
  for (const f of Object.values(files)) Object.assign(f, f.variants[0], { variants: f.variants });
  const m = { version: GENERATOR_VERSION, quick, variants, generatedMs: Math.round(performance.now() - t0), files };
  fs.writeFileSync(manifestPath, JSON.stringify(m, null, 2));
  return m;
}
