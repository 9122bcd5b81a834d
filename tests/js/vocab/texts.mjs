// Seeded texts for the vocabulary tests (tests/js/vocabularies.test.mjs): prose, code, CJK,
// emoji, RTL, control characters, long digit runs, decomposed accents, special-token strings,
// random code points, and 60 KB slices of a corpus made of this repository's own docs and
// sources. Code points not assigned in Unicode 16 are left out: ctxguard's character classes
// are Unicode 16 (regex-syntax 0.8), Node 20's are Unicode 17, so a character assigned in 17
// would be a letter to the reference and unassigned to ctxguard; the Unicode 16 set is
// tests/js/fixtures/unicode16-assigned.json (written and checked by tests/tokens/vocab_loaded.rs).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const ranges = JSON.parse(readFileSync(join(root, 'tests', 'js', 'fixtures', 'unicode16-assigned.json'), 'utf8'));

/** Whether a code point is assigned in Unicode 16 (and not a surrogate). */
export function assigned16(cp) {
  let lo = 0;
  let hi = ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [a, b] = ranges[mid];
    if (cp < a) hi = mid - 1;
    else if (cp > b) lo = mid + 1;
    else return !(cp >= 0xd800 && cp <= 0xdfff);
  }
  return false;
}

/** `text` without the code points Unicode 16 does not assign. */
export function onlyUnicode16(text) {
  let out = '';
  for (const ch of text) if (assigned16(ch.codePointAt(0))) out += ch;
  return out;
}

/** SplitMix64 over BigInt, as numbers in [0, 1). */
export function rng(seed) {
  let s = BigInt(seed);
  const mask = (1n << 64n) - 1n;
  return () => {
    s = (s + 0x9e3779b97f4a7c15n) & mask;
    let z = s;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & mask;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & mask;
    z ^= z >> 31n;
    return Number(z >> 11n) / 2 ** 53;
  };
}

const pick = (r, list) => list[Math.floor(r() * list.length)];
const int = (r, lo, hi) => lo + Math.floor(r() * (hi - lo + 1));

const WORDS = 'the of and to in is was for on that with as by it at from this be are or an which have not has had one were their all been also more other its new first when after into time two years can some there who only would most many about over such then them these than out may later people used made between up during three world part however under known each well state where both through being well'.split(' ');
const CODE = ['fn main() {', '    let x = vec![1, 2, 3];', '    for i in 0..10 {', 'def f(a, b=None):', '    return a ** 2  # square', 'const y = await fetch(`/api/${id}`);', '}', '  if (x !== null && x.length > 0) { return x[0]; }', 'SELECT * FROM users WHERE id = 42;', '#include <stdio.h>', '\tprintf("%d\\n", n);', "it's don't we'll they've I'M SHE'D"];
const CJK = '的一是不了人我在有他这中大来上个国到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计或司利受光王果亲界及今京务制解各任至清物台象记边共风战干接它许八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管夫连远资队跟带花快条院变联言权往展该领传近留红治决周保达办运武半候七必城父强步完革深区即求品士转量空甚众技轻程告江语英基派满式李息写呢识极令黄德收脸钱党倒未持取设始版双历越史商千片容研像找友孩站广改议形委早房音火际则首单据导影失拿网香似斯专石若兵弟谁校读志飞观争究包组造落视济喜离虽坐集编宝谈府拉黑且随格尽剑讲布杀微怕母调局根曾准团段终乐切级克精哪官示冷域读';
const KANA = 'あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをんアイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワヲン';
const HANGUL = '한국어는대한민국과조선민주주의인민공화국의공용어이다';
const ARABIC = 'اللغة العربية هي أكثر اللغات السامية تحدثا وإحدى أكثر اللغات انتشارا في العالم';
const HEBREW = 'עברית היא שפה שמית ממשפחת השפות האפרו אסייתיות';
const EMOJI = ['😀', '👍🏽', '👨‍👩‍👧‍👦', '🏳️‍🌈', '🇫🇷', '❤️', '🦀', '🎉', '🧑🏿‍💻', '✨', '🫠', '☕'];
const SPECIALS = ['<|begin_of_text|>', '<|eot_id|>', '<|im_start|>', '<|im_end|>', '<think>', '</think>', '<tool_call>', '<｜User｜>', '<｜Assistant｜>', '<｜end▁of▁sentence｜>', '<|endoftext|>', '[INST]', '</s>', '<|start_header_id|>'];
const DECOMPOSED = ['e\u0301', 'a\u0308', 'o\u0302\u0323', 'n\u0303', 'A\u030a', '\u1100\u1161\u11a8', 'c\u0327', 'u\u031b\u0309', 'ﬁ', 'Å', 'Ω', '\u0344', 'q\u0307\u0323'];

function prose(r, n) {
  let s = '';
  while (s.length < n) {
    let w = pick(r, WORDS);
    if (r() < 0.1) w = w[0].toUpperCase() + w.slice(1);
    s += w + pick(r, [' ', ' ', ' ', ' ', ', ', '. ', '\n', '  ', '; ', '? ']);
  }
  return s;
}

function piece(r) {
  switch (int(r, 0, 13)) {
    case 0: return prose(r, int(r, 10, 200));
    case 1: return Array.from({ length: int(r, 1, 6) }, () => pick(r, CODE)).join('\n') + '\n';
    case 2: return Array.from({ length: int(r, 1, 30) }, () => pick(r, CJK)).join('');
    case 3: return Array.from({ length: int(r, 1, 20) }, () => pick(r, [...KANA])).join('');
    case 4: return Array.from({ length: int(r, 1, 8) }, () => pick(r, EMOJI)).join(pick(r, ['', ' ', '\u200d']));
    case 5: return pick(r, [ARABIC, HEBREW, HANGUL]).slice(0, int(r, 3, 60));
    case 6: return String.fromCodePoint(...Array.from({ length: int(r, 1, 6) }, () => pick(r, [0, 1, 7, 8, 9, 10, 11, 12, 13, 27, 31, 127, 0x85, 0x9f, 0xa0, 0x2028, 0x200b, 0xfeff])));
    case 7: return Array.from({ length: int(r, 1, 40) }, () => String(int(r, 0, 9))).join('') + pick(r, ['', '.', ',', ' ', '0.5']);
    case 8: return pick(r, SPECIALS);
    case 9: return pick(r, DECOMPOSED) + pick(r, ['', 'x', ' ', '\u0301']);
    case 10: {
      let s = '';
      for (let i = int(r, 1, 12); i > 0; i--) {
        const cp = r() < 0.5 ? int(r, 0x20, 0x2fff) : int(r, 0x3000, 0x1faff);
        if (assigned16(cp)) s += String.fromCodePoint(cp);
      }
      return s;
    }
    case 11: return pick(r, [' ', '  ', '\t', '\n', '\r\n', '\n\n', ' \n ', '\n   ', '\u3000', '\u00a0\n']).repeat(int(r, 1, 3));
    case 12: return pick(r, ["'s", "'T", "'re", "'LL", "'ve", "'m", "'d", "'x"]) + pick(r, WORDS);
    default: return pick(r, ['{"a": 1, "b": [true, null]}', '<div class="x">', '===', '...', '$$', '->', '//', '/* */', '!!!']);
  }
}

/** `count` texts of about `size` characters each, seeded. */
export function mixedTexts(seed, count, size) {
  const r = rng(seed);
  const out = [];
  for (let i = 0; i < count; i++) {
    let s = '';
    const target = int(r, 1, size);
    while (s.length < target) s += piece(r);
    out.push(onlyUnicode16(s));
  }
  return out;
}

/** This repository's docs and sources, concatenated (a corpus nobody tuned ctxguard on). */
export function corpus() {
  const files = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(md|rs|mjs|js|ts)$/.test(name)) files.push(p);
    }
  };
  for (const d of ['docs', 'src', 'benches']) walk(join(root, d));
  files.push(join(root, 'README.md'));
  return onlyUnicode16(files.map((f) => readFileSync(f, 'utf8')).join('\n'));
}

/** `count` slices of `size` characters of the corpus at seeded offsets. */
export function corpusSlices(seed, count, size) {
  const text = corpus();
  const r = rng(seed);
  return Array.from({ length: count }, () => {
    const at = int(r, 0, Math.max(0, text.length - size));
    return text.slice(at, at + size).replace(/^[\udc00-\udfff]|[\ud800-\udbff]$/g, '');
  });
}
