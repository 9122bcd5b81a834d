//! Loadable vocabularies (docs/vocabularies.md; `src/tokens/loaded.rs`, `bundle.rs`, `hf.rs`,
//! `nfc.rs`, `added.rs`):
//! - the sources fetched by scripts/fetch-vocabs.sh read, convert to ctxguard's format and back;
//! - each family loaded (Llama 3, Qwen 3, DeepSeek V3, Tekken) counts and encodes as a reference
//!   made of its own regexes (fancy-regex) and byte-pair merging by rank, with its added tokens cut
//!   out and NFC first where the family has them; a loaded vocabulary merges as the built-in one,
//!   and tokens BPE does not build are whole pieces only (against tiktoken-rs);
//! - NFC from the tables the qwen3 file carries equals the `unicode-normalization` crate on every
//!   code point, alone and in context;
//! - tokenizer files ctxguard cannot count exactly are refused, naming what is unsupported;
//! - tests/js/fixtures/unicode16-assigned.json (the code points the JS tests draw from) is
//!   Unicode 16's assigned set as regex-syntax has it (`CTXGUARD_WRITE_VOCAB=1` rewrites it).

#[path = "../../examples/vocab/nfc_tables.rs"]
mod nfc_tables;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::common::Rng;
use ctxguard::base::error::ErrorCode;
use ctxguard::tokens::loaded::{self, Split, Vocabulary};
use ctxguard::tokens::{bundle, hf, nfc, tokenizer, vocab_file, Encoding};
use unicode_normalization::UnicodeNormalization;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/vocab-src")
}

fn read_source(dir: &str, file: &str) -> Vocabulary {
    let path = src().join(dir).join(file);
    let bytes = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (scripts/fetch-vocabs.sh fetches it; make setup runs it)", path.display()));
    hf::read(&bytes, &path.display().to_string()).unwrap()
}

/// Llama 3 as the JS tests and the package load it, registered once for this test binary.
fn llama3() -> &'static ctxguard::tokens::Tokenizer {
    static ONCE: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    ONCE.get_or_init(|| {
        let v = read_source("llama3", "models/tokenizer.json");
        let file = bundle::write(&v).unwrap();
        let info = loaded::load_bytes(&file, "test").unwrap();
        assert_eq!(info.encoding, Encoding::Llama3);
    });
    tokenizer(Encoding::Llama3).unwrap()
}

#[test]
fn sources_convert_and_read_back() {
    for (dir, file, split, ranks, added, nfc) in [
        ("llama3", "models/tokenizer.json", Split::Llama3, 128_000, 256, false),
        ("qwen3", "models/tokenizer.json", Split::Qwen2, 151_643, 26, true),
        ("deepseek_v3", "models/tokenizer.json", Split::DeepseekV3, 128_000, 818, false),
        ("tekken", "tekken_240718.json", Split::Tekken, 131_072, 0, false),
    ] {
        let v = read_source(dir, file);
        assert_eq!((v.split, v.rank_count(), v.added.len(), v.nfc), (split, ranks, added, nfc), "{dir}");
        assert_eq!(v.match_added, split != Split::Tekken, "{dir}: Tekken never matches added tokens");
        let back = bundle::read(&bundle::write(&v).unwrap()).unwrap();
        assert_eq!(back, v, "{dir}");
    }
}

#[test]
fn llama3_starts_with_cl100k_base() {
    let v = read_source("llama3", "models/tokenizer.json");
    let cl = vocab_file::decode(vocab_file::file(Encoding::Cl100kBase).unwrap()).unwrap();
    let tokens = v.tokens();
    let base = cl.starts.len() - 1;
    assert_eq!(base, 100_256);
    for (r, t) in tokens.iter().enumerate().take(base) {
        assert_eq!(&cl.bytes[cl.starts[r] as usize..cl.starts[r + 1] as usize], t.as_slice(), "rank {r}");
    }
}

/// The reference of a family, as Hugging Face tokenizers (and Mistral's tiktoken for Tekken) count:
/// NFC first where the tokenizer normalizes, added tokens cut out (leftmost, longest; not for
/// Tekken), the family's regexes applied in sequence as Hugging Face's `Split` with `Isolated`
/// applies them (matches and the text between them are pieces), byte-pair merging by rank
/// (whole-piece lookup first, as `ignore_merges`).
struct Reference {
    res: Vec<fancy_regex::Regex>,
    rank: HashMap<Vec<u8>, u32>,
    added: Vec<(String, u32)>,
    nfc: bool,
}

impl Reference {
    fn new(v: &Vocabulary) -> Reference {
        let regexes: &[&str] = match v.split {
            Split::Llama3 => &[hf::LLAMA3_REGEX],
            Split::Qwen2 => &[hf::QWEN2_REGEX],
            Split::DeepseekV3 => &hf::DEEPSEEK_V3_REGEXES,
            Split::Tekken => &[hf::TEKKEN_REGEX],
            other => panic!("{other:?} is built in"),
        };
        let rank =
            v.tokens().into_iter().enumerate().filter(|(_, t)| !t.is_empty()).map(|(r, t)| (t, r as u32)).collect();
        let added = if v.match_added { v.added.iter().map(|a| (a.content.clone(), a.id)).collect() } else { vec![] };
        Reference {
            res: regexes.iter().map(|r| fancy_regex::Regex::new(r).unwrap()).collect(),
            rank,
            added,
            nfc: v.nfc,
        }
    }

    fn merge(&self, piece: &[u8], out: &mut Vec<u32>) {
        if let Some(&r) = self.rank.get(piece) {
            out.push(r);
            return;
        }
        let mut parts: Vec<Vec<u8>> = piece.iter().map(|&b| vec![b]).collect();
        loop {
            let best = (0..parts.len().saturating_sub(1))
                .filter_map(|k| self.rank.get(&[parts[k].clone(), parts[k + 1].clone()].concat()).map(|&r| (r, k)))
                .min();
            let Some((_, k)) = best else { break };
            let right = parts.remove(k + 1);
            parts[k].extend(right);
        }
        out.extend(parts.iter().map(|p| self.rank[p]));
    }

    /// The pieces of `text` (no added tokens in it).
    fn pieces<'t>(&self, text: &'t str) -> Vec<&'t str> {
        let mut pieces = vec![text];
        for re in &self.res {
            let mut next = Vec::new();
            for p in pieces {
                let mut at = 0;
                for m in re.find_iter(p) {
                    let m = m.unwrap();
                    next.push(&p[at..m.start()]);
                    next.push(m.as_str());
                    at = m.end();
                }
                next.push(&p[at..]);
            }
            pieces = next.into_iter().filter(|p| !p.is_empty()).collect();
        }
        pieces
    }

    fn encode(&self, text: &str) -> Vec<u32> {
        let normalized: String = if self.nfc { text.nfc().collect() } else { text.to_string() };
        let text = normalized.as_str();
        let mut out = Vec::new();
        let mut pos = 0;
        while pos <= text.len() {
            let next = self
                .added
                .iter()
                .filter_map(|(c, id)| text[pos..].find(c.as_str()).map(|i| (pos + i, std::cmp::Reverse(c.len()), *id)))
                .min();
            let end = next.map_or(text.len(), |(s, _, _)| s);
            for piece in self.pieces(&text[pos..end]) {
                self.merge(piece.as_bytes(), &mut out);
            }
            match next {
                Some((s, std::cmp::Reverse(len), id)) => {
                    out.push(id);
                    pos = s + len;
                }
                None => break,
            }
        }
        out
    }
}

/// The texts every family is checked on: the tricky samples, random cases, whitespace at the end
/// of a text, the family's own added tokens in text, long mixed text.
fn family_texts(seed: u64, extra: &[&str]) -> Vec<String> {
    let mut rng = Rng::new(seed);
    let mut texts: Vec<String> = crate::common::TRICKY.iter().map(|s| s.to_string()).collect();
    texts.extend((0..150).map(|i| crate::common::case(&mut rng, i)));
    texts.extend(
        ["a\n  ", "x\r\n\t ", "end   ", "\n \n ", "12345678 1,234,567.89", "Cafe\u{301} e\u{301}\u{301}"]
            .map(String::from),
    );
    texts.extend(extra.iter().map(|s| s.to_string()));
    texts.push(crate::common::mixed(&mut rng, 20_000));
    texts
}

#[test]
fn llama3_equals_its_reference() {
    let ours = llama3();
    let reference = Reference::new(&read_source("llama3", "models/tokenizer.json"));
    let texts = family_texts(
        0x11a3a3,
        &[
            "<|eot_id|>\n  ",
            "hi<|begin_of_text|><|begin_of_text",
            "<|start_header_id|>user<|end_header_id|>\n\nHi",
            // `っている` (rank 103,836) is built from `ってい` (107,462) and `る`: a rank table's merge.
            "Die Katze sitzt auf der Matte. 猫がマットの上に座っている。",
        ],
    );
    for text in &texts {
        assert_eq!(ours.encode(text), reference.encode(text), "{text:?}");
        assert_eq!(ours.count(text), reference.encode(text).len(), "{text:?}");
    }
    // Added tokens in text are one token each (Hugging Face's rule for these families).
    assert_eq!(ours.encode("<|eot_id|>"), vec![128009]);
    assert_eq!(ours.decode(&ours.encode("a<|eot_id|>b")), "a<|eot_id|>b");
}

/// A family's vocabulary from its source, registered (Qwen's with the NFC tables the package's
/// qwen3 file carries).
fn family(dir: &str, file: &str) -> (&'static ctxguard::tokens::Tokenizer, Vocabulary) {
    let mut v = read_source(dir, file);
    if v.nfc {
        v.nfc_tables = Some(nfc::write(&nfc_tables::tables()));
    }
    let info = loaded::register(v.clone()).unwrap();
    (tokenizer(info.encoding).unwrap(), v)
}

#[test]
fn qwen3_deepseek_v3_and_tekken_equal_their_references() {
    let cases: [(&str, &str, &[&str]); 3] = [
        (
            "qwen3",
            "models/tokenizer.json",
            &["<|im_start|>user\nhi<|im_end|>\n", "\u{FF41}\u{FF42} 1234 e\u{301}\u{301} \u{212B}"],
        ),
        (
            "deepseek_v3",
            "models/tokenizer.json",
            &[
                "<\u{FF5C}begin\u{2581}of\u{2581}sentence\u{FF5C}><\u{FF5C}User\u{FF5C}>hi",
                "中文123456日本語カタカナ!!",
                "a,b.c;:!? «x» ¿y?",
            ],
        ),
        ("tekken", "tekken_240718.json", &["[INST] hi [/INST]</s>", "<s>x 12345 don't"]),
    ];
    for (seed, (dir, file, extra)) in (0u64..).zip(cases) {
        let (ours, v) = family(dir, file);
        let reference = Reference::new(&v);
        for text in &family_texts(0xFA17 + seed, extra) {
            let want = reference.encode(text);
            assert_eq!(ours.encode(text), want, "{dir} {text:?}");
            assert_eq!(ours.count(text), want.len(), "{dir} {text:?}");
        }
    }
}

/// The token bytes of a built-in vocabulary as a loaded vocabulary with that split.
pub(crate) fn built_in_as_loaded(enc: Encoding, split: Split, extra: &[&[u8]]) -> Vocabulary {
    let mut d = vocab_file::decode(vocab_file::file(enc).unwrap()).unwrap();
    for t in extra {
        d.bytes.extend_from_slice(t);
        d.starts.push(d.bytes.len() as u32);
    }
    Vocabulary {
        name: "test".into(),
        split,
        bytes: d.bytes,
        starts: d.starts,
        added: vec![],
        match_added: true,
        nfc: false,
        nfc_tables: None,
        source: "test".into(),
    }
}

#[test]
fn a_loaded_vocabulary_merges_as_the_built_in_one() {
    // Canonical pairs found at load time (BPE on each token's bytes) against those the shipped
    // files store.
    for (enc, split) in [(Encoding::O200kBase, Split::O200k), (Encoding::Cl100kBase, Split::Cl100k)] {
        let built = loaded::unregistered(&built_in_as_loaded(enc, split, &[])).unwrap();
        let shipped = tokenizer(enc).unwrap();
        assert_eq!(built.vocab_size(), shipped.vocab_size());
        assert_eq!(built.max_token_bytes(), shipped.max_token_bytes());
        let mut rng = Rng::new(11);
        for i in 0..3_000 {
            let text = crate::common::case(&mut rng, i);
            assert_eq!(built.encode(&text), shipped.encode(&text), "{} {text:?}", enc.as_str());
            assert_eq!(built.count(&text), shipped.count(&text));
        }
        let text = crate::common::mixed(&mut rng, 200_000);
        assert_eq!(built.encode(&text), shipped.encode(&text));
    }
}

#[test]
fn tokens_bpe_does_not_build_are_whole_pieces_only() {
    // cl100k plus tokens its merges never build (as Llama 3 has 588): tiktoken-rs matches them only
    // as a whole piece, and so must the engine.
    let extra: [&[u8]; 3] = [b"qzxqzxqzj", b" xqzvjwq", b"!!!???!!!???"];
    let v = built_in_as_loaded(Encoding::Cl100kBase, Split::Cl100k, &extra);
    let ours = loaded::unregistered(&v).unwrap();
    let mut encoder: rustc_hash::FxHashMap<Vec<u8>, u32> = Default::default();
    for (rank, t) in v.tokens().into_iter().enumerate() {
        if !t.is_empty() {
            encoder.insert(t, rank as u32);
        }
    }
    let reference = tiktoken_rs::CoreBPE::new(encoder, Default::default(), ctxguard::tokens::CL100K_PATTERN).unwrap();
    let mut whole = 0;
    for (k, t) in extra.iter().enumerate() {
        let text = std::str::from_utf8(t).unwrap();
        for text in
            [text.to_string(), format!("{text}a"), format!("a{text}"), format!("{text}{text}"), format!("x {text} y")]
        {
            assert_eq!(ours.encode(&text), reference.encode_ordinary(&text), "{text:?}");
        }
        whole += usize::from(ours.encode(text) == vec![100_256 + k as u32]);
    }
    assert_eq!(whole, 3, "each extra token is one token as a whole piece");
    let mut rng = Rng::new(5);
    for i in 0..2_000 {
        let text = crate::common::case(&mut rng, i);
        assert_eq!(ours.encode(&text), reference.encode_ordinary(&text), "{text:?}");
    }
}

#[test]
fn registry_refuses_a_second_vocabulary_of_an_encoding_and_unknown_names() {
    llama3();
    let mut other = read_source("llama3", "models/tokenizer.json");
    other.added.pop();
    let e = loaded::register(other).unwrap_err();
    assert_eq!(e.code, ErrorCode::VocabularyConflict, "{e}");
    assert_eq!(loaded::resolve_name("Qwen2.5").unwrap(), "qwen3");
    assert_eq!(loaded::resolve_name("tekken").unwrap(), "mistral-tekken");
    assert_eq!(loaded::resolve_name("gpt-4o").unwrap_err().code, ErrorCode::UnknownVocabulary);
    // The same vocabulary again is no conflict: nothing is done.
    let again = loaded::register(read_source("llama3", "models/tokenizer.json")).unwrap();
    assert!(!again.loaded_now);
}

#[test]
fn nfc_equals_unicode_normalization() {
    let n = nfc::Nfc::read(&nfc::write(&nfc_tables::tables())).unwrap();
    let check = |s: &str| {
        let want: String = s.nfc().collect();
        assert_eq!(n.normalize(s), want, "{s:?} ({:x?})", s.chars().map(|c| c as u32).collect::<Vec<_>>());
    };
    let marks = ['\u{301}', '\u{308}', '\u{323}', '\u{31b}', '\u{345}', '\u{1161}', '\u{11a8}', '\u{3099}', '\u{5b0}'];
    // Every code point alone; in context those that normalization can touch (a mark, a
    // decomposition, a composition) and a sample of the rest.
    let touched: std::collections::HashSet<u32> = {
        let t = nfc_tables::tables();
        t.ccc
            .iter()
            .map(|c| c.0)
            .chain(t.decompositions.iter().map(|d| d.0))
            .chain(t.compositions.iter().flat_map(|c| [c.0, c.1]))
            .collect()
    };
    for cp in 0..=0x10FFFFu32 {
        let Some(c) = char::from_u32(cp) else { continue };
        let s = c.to_string();
        check(&s);
        if touched.contains(&cp) || cp % 251 == 0 || (0xAC00..0xAC40).contains(&cp) {
            for m in marks {
                check(&format!("a{c}{m}"));
                check(&format!("{m}{c}e"));
            }
        }
    }
    // Random strings of starters, marks and decomposable characters.
    let pool: Vec<char> =
        "aeiouAOU \u{300}\u{301}\u{302}\u{303}\u{308}\u{323}\u{327}\u{31b}\u{345}\u{e9}\u{c5}\u{212b}\u{1e69}\u{1100}\u{1161}\u{11a8}\u{ac00}\u{d55c}\u{304b}\u{3099}\u{fb01}\u{344}\u{f900}\u{2adc}\u{1d15e}"
            .chars()
            .collect();
    let mut rng = Rng::new(5);
    for _ in 0..5_000 {
        let len = 1 + rng.below(12);
        let s: String = (0..len).map(|_| pool[rng.below(pool.len())]).collect();
        check(&s);
        // The map back: every character boundary lands on a character boundary of the original.
        if let Some(m) = n.normalize_mapped(&s) {
            for i in (0..=m.text.len()).filter(|&i| m.text.is_char_boundary(i)) {
                for ceil in [false, true] {
                    assert!(s.is_char_boundary(m.original(i, ceil, s.len())), "{s:?} {i}");
                }
            }
        }
    }
    // Text below U+0300 is never copied.
    assert!(matches!(n.normalize("plain ASCII and Latin-1: café"), std::borrow::Cow::Borrowed(_)));
}

/// A small byte-level BPE in tokenizer.json form: the 256 bytes, then "ab" and "abc".
fn tiny_json() -> serde_json::Value {
    let chars: Vec<char> = {
        let mut out = Vec::new();
        let mut next = 256u32;
        for b in 0..=255u8 {
            if matches!(b, 33..=126 | 161..=172 | 174..=255) {
                out.push(b as char);
            } else {
                out.push(char::from_u32(next).unwrap());
                next += 1;
            }
        }
        out
    };
    let mut vocab = serde_json::Map::new();
    for (b, c) in chars.iter().enumerate() {
        vocab.insert(c.to_string(), b.into());
    }
    vocab.insert("ab".into(), 256.into());
    vocab.insert("abc".into(), 257.into());
    serde_json::json!({
        "version": "1.0",
        "added_tokens": [{"id": 258, "content": "<|x|>", "special": true, "lstrip": false, "rstrip": false, "single_word": false, "normalized": false}],
        "normalizer": null,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": hf::LLAMA3_REGEX}, "behavior": "Isolated", "invert": false},
            {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]},
        "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
                  "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
                  "vocab": vocab, "merges": ["a b", "ab c"]}
    })
}

#[test]
fn tokenizer_files_ctxguard_cannot_count_exactly_are_refused() {
    let read = |v: &serde_json::Value| hf::read(&serde_json::to_vec(v).unwrap(), "test");
    let ok = read(&tiny_json()).unwrap();
    assert_eq!((ok.split, ok.rank_count(), ok.added.len()), (Split::Llama3, 258, 1));
    let refused = |f: &dyn Fn(&mut serde_json::Value), what: &str| {
        let mut v = tiny_json();
        f(&mut v);
        let e = read(&v).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnsupportedVocabulary, "{what}: {e}");
        assert!(e.message.contains(what), "{what}: {e}");
    };
    refused(&|v| v["normalizer"] = serde_json::json!({"type": "NFKC"}), "NFKC");
    refused(&|v| v["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "\\w+".into(), "\\\\w+");
    refused(
        &|v| {
            v["pre_tokenizer"] = serde_json::json!({"type": "ByteLevel", "add_prefix_space": false, "use_regex": true})
        },
        "use_regex",
    );
    refused(&|v| v["pre_tokenizer"] = serde_json::json!({"type": "Metaspace"}), "Metaspace");
    refused(&|v| v["model"]["type"] = "Unigram".into(), "Unigram");
    refused(&|v| v["model"]["byte_fallback"] = true.into(), "byte_fallback");
    refused(&|v| v["model"]["continuing_subword_prefix"] = "##".into(), "continuing_subword_prefix");
    refused(&|v| v["model"]["merges"] = serde_json::json!(["ab c", "a b"]), "merge");
    refused(&|v| v["model"]["merges"] = serde_json::json!(["a b"]), "made by no merge");
    refused(&|v| v["added_tokens"][0]["lstrip"] = true.into(), "lstrip");
    let e = hf::read(b"{\"neither\": 1}", "test").unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidVocabulary);
}

#[test]
fn unicode16_fixture_is_regex_syntax_assigned_set() {
    let re = fancy_regex::Regex::new(r"\P{Cn}+").unwrap();
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for block in 0..(0x110000u32 / 0x100) {
        let s: String = (block * 0x100..(block + 1) * 0x100).filter_map(char::from_u32).collect();
        for m in re.find_iter(&s) {
            let m = m.unwrap();
            let (first, last) = (m.as_str().chars().next().unwrap() as u32, m.as_str().chars().last().unwrap() as u32);
            match ranges.last_mut() {
                Some((_, end)) if *end + 1 == first => *end = last,
                _ => ranges.push((first, last)),
            }
        }
    }
    let json = format!("[\n{}\n]\n", ranges.iter().map(|(a, b)| format!("[{a}, {b}]")).collect::<Vec<_>>().join(",\n"));
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/js/fixtures/unicode16-assigned.json");
    if std::env::var_os("CTXGUARD_WRITE_VOCAB").is_some() {
        std::fs::write(&path, &json).unwrap();
    }
    assert_eq!(std::fs::read_to_string(&path).unwrap(), json, "rewrite with CTXGUARD_WRITE_VOCAB=1");
}
