//! Shared helpers for the tokens_* tests: a deterministic PRNG, corpus generators and the
//! reference implementations (tiktoken-rs and its regex).
#![allow(dead_code)] // each user takes a part

use ctxguard::tokens::{self, Encoding, Tokenizer};

pub const ENCODINGS: [Encoding; 2] = [Encoding::O200kBase, Encoding::Cl100kBase];

pub fn ours(enc: Encoding) -> &'static Tokenizer {
    tokens::tokenizer(enc).unwrap()
}

pub fn reference(enc: Encoding) -> &'static tiktoken_rs::CoreBPE {
    match enc {
        Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
        Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        other => panic!("{other:?} is not a built-in tiktoken encoding"),
    }
}

pub fn reference_regex(enc: Encoding) -> fancy_regex::Regex {
    let pat = match enc {
        Encoding::O200kBase => tokens::O200K_PATTERN,
        Encoding::Cl100kBase => tokens::CL100K_PATTERN,
        other => panic!("{other:?} has no built-in pattern"),
    };
    fancy_regex::Regex::new(pat).unwrap()
}

/// Pieces of the reference regex as byte ranges.
pub fn reference_pieces(re: &fancy_regex::Regex, text: &str) -> Vec<(usize, usize)> {
    re.find_iter(text).map(|m| m.unwrap()).map(|m| (m.start(), m.end())).collect()
}

/// SplitMix64.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
    /// A random scalar value, biased towards the interesting low planes.
    pub fn any_char(&mut self) -> char {
        loop {
            let cp = match self.below(8) {
                0 => self.below(0x80) as u32,
                1 => self.below(0x800) as u32,
                2..=4 => self.below(0x10000) as u32,
                5 => 0x10000 + self.below(0x10000) as u32,
                6 => 0x1F000 + self.below(0x1000) as u32,
                _ => self.below(0x110000) as u32,
            };
            if let Some(c) = char::from_u32(cp) {
                return c;
            }
        }
    }
}

/// Characters chosen to sit on every class boundary of both patterns.
pub const TRICKY: &[&str] = &[
    "a",
    "z",
    "A",
    "Z",
    "0",
    "9",
    " ",
    "  ",
    "\t",
    "\n",
    "\r",
    "\r\n",
    "\x0B",
    "\x0C",
    "'",
    "/",
    "!",
    ".",
    ",",
    "-",
    "_",
    "\"",
    "(",
    ")",
    "{",
    "}",
    "#",
    "@",
    "\u{0}",
    "\u{1F}",
    "\u{7F}",
    "\u{85}", // NEL (whitespace)
    "\u{A0}", // NBSP (whitespace)
    "\u{1680}",
    "\u{2000}",
    "\u{200A}",
    "\u{2028}",
    "\u{2029}",
    "\u{202F}",
    "\u{205F}",
    "\u{3000}",
    "\u{200B}", // ZWSP: not whitespace
    "\u{200D}", // ZWJ (Cf)
    "\u{FEFF}", // BOM (Cf)
    "\u{301}",
    "\u{300}",
    "\u{20DD}",
    "\u{FE0F}",
    "\u{E0100}", // marks
    "é",
    "É",
    "e\u{301}",
    "ǅ",
    "ᾈ", // Lt
    "ʰ",
    "ー",
    "々", // Lm
    "ª",
    "中",
    "文",
    "日本語",
    "ｱ",
    "한",
    "ก",
    "ا",
    "ب",
    "ع",
    "א", // Lo
    "ß",
    "ſ",
    "K",
    "İ",
    "ı",
    "ς",
    "Σ",
    "ﬀ",
    "ǈ",
    "Ω",
    "µ",
    "٣",
    "४",
    "Ⅻ",
    "½",
    "²",
    "𝟘",
    "〇", // numbers
    "𝐀",
    "𝐚",
    "𐐀",
    "𐐨",
    "𠀀",
    "𪜀", // astral letters
    "😀",
    "👍🏽",
    "👩\u{200D}💻",
    "🏳\u{FE0F}\u{200D}🌈",
    "🇫🇷",
    "❤\u{FE0F}",
    "¿",
    "¡",
    "€",
    "©",
    "™",
    "…",
    "—",
    "«",
    "»",
    "\u{FFFD}",
    "\u{10FFFF}",
    "\u{E0061}",
    "'s",
    "'S",
    "'t",
    "'re",
    "'RE",
    "'ve",
    "'m",
    "'ll",
    "'LL",
    "'d",
    "'ſ",
    "'x",
    "<|endoftext|>",
    "<|fim_prefix|>",
    "<|endofprompt|>",
];

pub const WORDS: &[&str] = &[
    "the",
    "The",
    "THE",
    "don't",
    "DON'T",
    "I'LL",
    "we've",
    "they're",
    "she'd",
    "it's",
    "Ma'am",
    "hello",
    "world",
    "Hello",
    "WORLD",
    "camelCase",
    "snake_case",
    "HTTPServer",
    "iPhone",
    "x86_64",
    "12345",
    "3.14159",
    "1,000,000",
    "0xDEADBEEF",
    "v1.2.3",
    "naïve",
    "café",
    "Ünïcödé",
    "straße",
    "Привет",
    "мир",
    "Ελληνικά",
    "日本語",
    "中文字符",
    "한국어",
    "العربية",
    "עברית",
    "हिन्दी",
    "ไทย",
    "😀",
    "🤖",
    "👨‍👩‍👧‍👦",
    "🇺🇸",
    "fn",
    "main()",
    "{}",
    "[]",
    "=>",
    "->",
    "::",
    "//",
    "/*",
    "*/",
    "\"key\":",
    "null",
    "true",
    "1e-9",
    "data:image/png;base64,",
    "https://example.com/a/b?c=d&e=f",
    "<div>",
    "</div>",
    "&amp;",
    "\\n",
    "\\\"",
    "\t",
    "\n",
    "\r\n",
    "  ",
    "    ",
    "\n\n",
    " \n ",
];

pub const PROSE: &str = "It was the best of times, it was the worst of times, it was the age of wisdom, it \
was the age of foolishness. I'LL be there at 10:30 — don't be late! She said: \"We've done it,\" \
and they're sure it's fine. Numbers like 1234567 and 3.14 appear; so do URLs (https://example.org) \
and e-mail addresses (someone@example.com).\n\nA new paragraph starts here.  Two spaces.   Three.\n";

pub const CODE: &str = "fn main() {\n    let mut v: Vec<u32> = Vec::new();\n    for i in 0..10 {\n        \
v.push(i * 2); // comment\n    }\n    println!(\"{:?}\", v);\n}\n\nclass Foo(object):\n\tdef __init__(self, x=None):\n\t\tself.x = x  \
# trailing\n\n\n/* block */ const a = {b: [1, 2, 3], \"c\": null};\r\n    return a?.b ?? [];\r\n";

pub const JSON: &str = "{\"id\": \"chatcmpl-123\", \"object\": \"chat.completion\", \"created\": 1677652288, \
\"choices\": [{\"index\": 0, \"message\": {\"role\": \"assistant\", \"content\": \"\\n\\nHello there, how may I assist you today?\"}, \
\"finish_reason\": \"stop\"}], \"usage\": {\"prompt_tokens\": 9, \"completion_tokens\": 12, \"total_tokens\": 21}}";

pub const CJK: &str =
    "人工智能是计算机科学的一个分支，它企图了解智能的实质，并生产出一种新的能以人类智能相似的方式做出反应的智能机器。\
日本語の文章には、ひらがな、カタカナ、漢字が混ざっています。한국어 문장도 있습니다。";

pub const ARABIC: &str = "اللغة العربية هي أكثر اللغات السامية تحدثاً، وإحدى أكثر اللغات انتشاراً في العالم. \
يتحدثها أكثر من ٤٦٧ مليون نسمة. हिन्दी भारत की राजभाषा है। ภาษาไทยเป็นภาษาราชการ";

/// A deterministic text of about `len` bytes built from `sample`s and random words.
/// The samples every split is checked on first (each test adds its own after them).
pub const BASIC_SAMPLES: [&str; 9] = ["", "a", "hello world", "Hello, World!", PROSE, CODE, JSON, CJK, ARABIC];

pub fn repeat_to(sample: &str, len: usize) -> String {
    let mut s = String::with_capacity(len + sample.len());
    while s.len() < len {
        s.push_str(sample);
    }
    s
}

pub fn random_letters(rng: &mut Rng, n: usize) -> String {
    (0..n).map(|_| (b'a' + rng.below(26) as u8) as char).collect()
}

pub fn random_base64(rng: &mut Rng, n: usize) -> String {
    const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    (0..n).map(|_| B64[rng.below(64)] as char).collect()
}

pub fn random_cjk(rng: &mut Rng, n: usize) -> String {
    (0..n).map(|_| char::from_u32(0x4E00 + rng.below(0x5000) as u32).unwrap()).collect()
}

/// Mixed realistic text (~len bytes): prose, code, JSON, CJK, Arabic, random words.
pub fn mixed(rng: &mut Rng, len: usize) -> String {
    let mut s = String::new();
    while s.len() < len {
        match rng.below(8) {
            0 => s.push_str(PROSE),
            1 => s.push_str(CODE),
            2 => s.push_str(JSON),
            3 => s.push_str(CJK),
            4 => s.push_str(ARABIC),
            _ => {
                for _ in 0..20 {
                    s.push_str(rng.pick(WORDS));
                    s.push_str(rng.pick(&[" ", " ", " ", "", "\n", ", ", ". "]));
                }
            }
        }
    }
    s
}

/// One random test case; the kinds cycle through the generators.
pub fn case(rng: &mut Rng, i: usize) -> String {
    let mut s = String::new();
    match i % 7 {
        // Random tricky characters.
        0 => {
            for _ in 0..rng.below(24) + 1 {
                s.push_str(rng.pick(TRICKY));
            }
        }
        // Words with tricky separators.
        1 => {
            for _ in 0..rng.below(12) + 1 {
                s.push_str(rng.pick(WORDS));
                s.push_str(rng.pick(TRICKY));
            }
        }
        // Arbitrary code points.
        2 => {
            for _ in 0..rng.below(20) + 1 {
                s.push(rng.any_char());
            }
        }
        // Whitespace runs of every kind between words, and trailing variants.
        3 => {
            let ws = [" ", "\t", "\n", "\r", "\r\n", "\u{A0}", "\u{3000}", "\x0B", "\u{85}"];
            for _ in 0..rng.below(6) + 1 {
                s.push_str(rng.pick(WORDS));
                for _ in 0..rng.below(6) {
                    s.push_str(rng.pick(&ws));
                }
            }
        }
        // Slices of the fixed samples.
        4 => {
            let sample = rng.pick(&[PROSE, CODE, JSON, CJK, ARABIC]);
            let chars: Vec<char> = sample.chars().collect();
            let a = rng.below(chars.len());
            let b = (a + rng.below(80) + 1).min(chars.len());
            s.extend(&chars[a..b]);
        }
        // Long pieces from small alphabets (many equal-rank pairs: exercises the heap merge's
        // tie-breaking) or CJK / base64 runs, 60..1500 bytes.
        5 => {
            let n = 60 + rng.below(1_440);
            match rng.below(4) {
                0 => {
                    let alphabet = &["ab", "aab", "abc", "xyz", "ee", "lo", "AB", "aA"][rng.below(8)];
                    let a: Vec<char> = alphabet.chars().collect();
                    s.extend((0..n).map(|_| a[rng.below(a.len())]));
                }
                1 => s.push_str(&random_cjk(rng, n / 3)),
                2 => s.push_str(&random_base64(rng, n)),
                _ => s.push_str(&random_letters(rng, n)),
            }
        }
        // Mixtures of everything, with runs.
        _ => {
            for _ in 0..rng.below(8) + 1 {
                let piece = match rng.below(4) {
                    0 => rng.pick(TRICKY).to_string(),
                    1 => rng.pick(WORDS).to_string(),
                    2 => rng.any_char().to_string(),
                    _ => rng.pick(TRICKY).repeat(rng.below(5) + 1),
                };
                s.push_str(&piece);
            }
        }
    }
    s
}

/// Asserts that ids, count and pieces agree with the references for one text.
pub fn check(enc: Encoding, re: &fancy_regex::Regex, text: &str) {
    let expected = reference(enc).encode_ordinary(text);
    let got = ours(enc).encode(text);
    if got != expected {
        let ours_pieces: Vec<&str> = ours(enc).pieces(text).iter().map(|&(a, b)| &text[a..b]).collect();
        let ref_pieces: Vec<&str> = reference_pieces(re, text).iter().map(|&(a, b)| &text[a..b]).collect();
        panic!(
            "{}: ids differ for {text:?}\n ours pieces {ours_pieces:?}\n  ref pieces {ref_pieces:?}\n ours ids {got:?}\n  ref ids {expected:?}",
            enc.as_str()
        );
    }
    assert_eq!(ours(enc).count(text), expected.len(), "{}: count for {text:?}", enc.as_str());
    assert_eq!(tokens::count(enc, text), expected.len());
}

/// Asserts that our pieces equal the regex's pieces.
pub fn check_pieces(enc: Encoding, re: &fancy_regex::Regex, text: &str) {
    let got = ours(enc).pieces(text);
    let expected = reference_pieces(re, text);
    if got != expected {
        let g: Vec<&str> = got.iter().map(|&(a, b)| &text[a..b]).collect();
        let e: Vec<&str> = expected.iter().map(|&(a, b)| &text[a..b]).collect();
        panic!("{}: pieces differ for {text:?}\n ours {g:?}\n  ref {e:?}", enc.as_str());
    }
}

/// Every code point put into each template at `#`, 4,096 code points a text, `|` between them
/// (the texts of the every-code-point-in-context tests).
pub fn code_point_texts<'a>(templates: &'a [&'a str]) -> impl Iterator<Item = String> + 'a {
    let chars: Vec<char> = (0u32..0x110000).filter_map(char::from_u32).collect();
    templates.iter().flat_map(move |template| {
        chars
            .chunks(4096)
            .map(|chunk| {
                let mut text = String::new();
                for &c in chunk {
                    text.push_str(&template.replace('#', &c.to_string()));
                    text.push('|');
                }
                text
            })
            .collect::<Vec<_>>()
    })
}
