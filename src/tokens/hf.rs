//! Tokenizer files in their publishers' formats, read into a [`Vocabulary`]: a Hugging Face
//! `tokenizer.json` (byte-level BPE) and a Mistral `tekken.json` (docs/vocabularies.md).
//!
//! ctxguard counts with one engine: a pre-tokenizer split it reproduces by hand, then byte-pair
//! merging by rank, with rank = token id. A file is read only when that is what its tokenizer
//! does, and refused otherwise with `UNSUPPORTED_VOCABULARY` and a message naming what is not
//! supported:
//!
//! - the pre-tokenizer must be one of the splits the engine has, recognized by its exact regex
//!   strings (`Split`), followed by a byte-level step without its own regex or a prefix space;
//! - the normalizer none, or NFC (Qwen);
//! - the model BPE without dropout, byte fallback, subword prefix or word suffix, and all 256
//!   bytes tokens;
//! - merge order must be rank order: every merge joins two tokens into a token, and the merged
//!   tokens' ids never go down along the merge list. Where one token is made by several merges
//!   (a tiktoken vocabulary converted: Llama 3, gpt-oss), the file must say `ignore_merges` as
//!   those do; where it does not, every token must be made by some merge and byte-pair merging by
//!   rank must rebuild each token from its bytes (what Hugging Face's merges do for Qwen and
//!   DeepSeek, whose whole-piece lookup is off);
//! - added tokens without `lstrip`, `rstrip` or `single_word`, and not `normalized` under NFC.
//!
//! The post-processor (a BOS some files add) is not read: ctxguard counts text as the tokenizer
//! encodes it without special tokens added, and chat templates write their own BOS.

use std::borrow::Cow;
use std::collections::HashMap;

use base64::Engine as _;
use rustc_hash::FxHashMap;
use serde::Deserialize;
use serde_json::Value;

use super::pretok::{LLAMA3_PATTERN, O200K_PATTERN, QWEN2_PATTERN, TEKKEN_PATTERN};
use super::vocabulary::{Added, Split, Vocabulary};
use crate::base::error::{Error, ErrorCode, Result};

/// Llama 3's split regex, as its `tokenizer.json` stores it (the pre-tokenizer's own, `pretok`).
pub const LLAMA3_REGEX: &str = LLAMA3_PATTERN;
/// Qwen 2/3's.
pub const QWEN2_REGEX: &str = QWEN2_PATTERN;
/// DeepSeek V3's three splits, in order, as its `tokenizer.json` stores them (the third has
/// literal CR and LF in its classes where `pretok::DEEPSEEK_V3_PATTERNS` has `\r` and `\n`).
pub const DEEPSEEK_V3_REGEXES: [&str; 3] = [
    r"\p{N}{1,3}",
    "[\u{4e00}-\u{9fa5}\u{3040}-\u{309f}\u{30a0}-\u{30ff}]+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
];
/// Tekken's (`config.pattern` of Mistral's `tekken.json`).
pub const TEKKEN_REGEX: &str = TEKKEN_PATTERN;

fn unsupported(what: impl std::fmt::Display) -> Error {
    Error::new(ErrorCode::UnsupportedVocabulary, format!("unsupported tokenizer: {what}"))
}

fn invalid(what: impl std::fmt::Display) -> Error {
    Error::new(ErrorCode::InvalidVocabulary, format!("invalid tokenizer file: {what}"))
}

/// Whether `bytes` look like a JSON object (a tokenizer file rather than ctxguard's format).
pub fn is_json(bytes: &[u8]) -> bool {
    bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

/// Reads a `tokenizer.json` or a `tekken.json` (told apart by their keys). `source` names where it came from.
pub fn read(bytes: &[u8], source: &str) -> Result<Vocabulary> {
    #[derive(Deserialize)]
    struct Probe {
        #[serde(default)]
        config: Option<serde::de::IgnoredAny>,
        #[serde(default)]
        model: Option<serde::de::IgnoredAny>,
    }
    let probe: Probe = serde_json::from_slice(bytes).map_err(|e| invalid(format!("not JSON ({e})")))?;
    match (probe.model, probe.config) {
        (Some(_), _) => read_hf(bytes, source),
        (None, Some(_)) => read_tekken(bytes, source),
        (None, None) => {
            Err(invalid("neither a Hugging Face tokenizer.json (no \"model\") nor a tekken.json (no \"config\")"))
        }
    }
}

#[derive(Deserialize)]
struct HfFile<'a> {
    #[serde(default)]
    normalizer: Option<Value>,
    #[serde(default)]
    pre_tokenizer: Option<Value>,
    #[serde(borrow)]
    model: HfModel<'a>,
    #[serde(default, borrow)]
    added_tokens: Vec<HfAdded<'a>>,
}

#[derive(Deserialize)]
struct HfModel<'a> {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    dropout: Option<f64>,
    #[serde(default)]
    byte_fallback: Option<bool>,
    #[serde(default)]
    continuing_subword_prefix: Option<String>,
    #[serde(default)]
    end_of_word_suffix: Option<String>,
    #[serde(default)]
    ignore_merges: Option<bool>,
    #[serde(borrow)]
    vocab: HashMap<Cow<'a, str>, u32>,
    #[serde(borrow, default)]
    merges: Vec<HfMerge<'a>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum HfMerge<'a> {
    Joined(#[serde(borrow)] Cow<'a, str>),
    Pair(#[serde(borrow)] [Cow<'a, str>; 2]),
}

#[derive(Deserialize)]
struct HfAdded<'a> {
    id: u32,
    #[serde(borrow)]
    content: Cow<'a, str>,
    #[serde(default)]
    special: bool,
    #[serde(default)]
    lstrip: bool,
    #[serde(default)]
    rstrip: bool,
    #[serde(default)]
    single_word: bool,
    #[serde(default)]
    normalized: bool,
}

/// GPT-2's byte-level alphabet: the character standing for each byte.
fn byte_chars() -> [char; 256] {
    let mut out = ['\0'; 256];
    let mut next = 256u32;
    for b in 0..=255u8 {
        let printable = matches!(b, 33..=126 | 161..=172 | 174..=255);
        let c = if printable {
            b as u32
        } else {
            next += 1;
            next - 1
        };
        if let Some(slot) = out.get_mut(b as usize) {
            *slot = char::from_u32(c).unwrap_or('\0');
        }
    }
    out
}

/// The bytes a byte-level token string stands for, `None` if it has other characters.
fn byte_level_bytes(s: &str, inverse: &FxHashMap<char, u8>) -> Option<Vec<u8>> {
    s.chars().map(|c| inverse.get(&c).copied()).collect()
}

/// Whether `v` is the JSON `null`, absent, or an empty `Sequence`.
fn is_none_like(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(v) => {
            v.get("type").and_then(Value::as_str) == Some("Sequence")
                && v.get("normalizers").and_then(Value::as_array).is_some_and(|a| a.is_empty())
        }
    }
}

fn type_of(v: &Value) -> &str {
    v.get("type").and_then(Value::as_str).unwrap_or("?")
}

/// Whether the normalizer is NFC (`Ok(true)`), none (`Ok(false)`), or something else (refused).
fn normalizer_is_nfc(v: Option<&Value>) -> Result<bool> {
    if is_none_like(v) {
        return Ok(false);
    }
    let Some(v) = v else { return Ok(false) };
    let list: Vec<&Value> = match type_of(v) {
        "Sequence" => v.get("normalizers").and_then(Value::as_array).map(|a| a.iter().collect()).unwrap_or_default(),
        _ => vec![v],
    };
    let mut nfc = false;
    for n in list {
        match type_of(n) {
            "NFC" => nfc = true,
            other => return Err(unsupported(format!("normalizer {other}"))),
        }
    }
    Ok(nfc)
}

/// The split of a pre-tokenizer (see the module doc).
fn split_of(v: Option<&Value>) -> Result<Split> {
    let v = v.filter(|v| !v.is_null()).ok_or_else(|| unsupported("no pre-tokenizer"))?;
    let steps: Vec<&Value> = match type_of(v) {
        "Sequence" => v.get("pretokenizers").and_then(Value::as_array).map(|a| a.iter().collect()).unwrap_or_default(),
        _ => vec![v],
    };
    let (last, splits) = steps.split_last().ok_or_else(|| unsupported("an empty pre-tokenizer sequence"))?;
    if type_of(last) != "ByteLevel" {
        return Err(unsupported(format!("pre-tokenizer {} (ctxguard reads byte-level BPE only)", type_of(last))));
    }
    if last.get("use_regex").and_then(Value::as_bool).unwrap_or(true) {
        return Err(unsupported("the ByteLevel pre-tokenizer's own GPT-2 regex (use_regex: true)"));
    }
    if last.get("add_prefix_space").and_then(Value::as_bool).unwrap_or(false) {
        return Err(unsupported("ByteLevel with add_prefix_space: true"));
    }
    let mut regexes = Vec::new();
    for s in splits {
        if type_of(s) != "Split" {
            return Err(unsupported(format!("pre-tokenizer {}", type_of(s))));
        }
        let regex = s
            .get("pattern")
            .and_then(|p| p.get("Regex"))
            .and_then(Value::as_str)
            .ok_or_else(|| unsupported("a Split pre-tokenizer without a regex"))?;
        let behavior = s.get("behavior").and_then(Value::as_str).unwrap_or("?");
        let invert = s.get("invert").and_then(Value::as_bool).unwrap_or(false);
        regexes.push((regex, behavior, invert));
    }
    let known = |r: &str| match r {
        LLAMA3_REGEX => Some(Split::Llama3),
        QWEN2_REGEX => Some(Split::Qwen2),
        TEKKEN_REGEX => Some(Split::Tekken),
        O200K_PATTERN => Some(Split::O200k),
        _ => None,
    };
    match regexes.as_slice() {
        // These patterns match every character, so keeping the matches and dropping the rest
        // (`Removed`, inverted) cuts the same pieces as `Isolated`.
        [(r, b, inv)] => match (known(r), *b, *inv) {
            (Some(split), "Isolated", false) | (Some(split), "Removed", true) => Ok(split),
            (Some(_), b, inv) => Err(unsupported(format!("a Split with behavior {b}, invert {inv}"))),
            (None, _, _) => Err(unsupported(format!("the split regex {r:?}"))),
        },
        [a, b, c]
            if [a.0, b.0, c.0] == DEEPSEEK_V3_REGEXES
                && [a, b, c].iter().all(|(_, behavior, invert)| *behavior == "Isolated" && !*invert) =>
        {
            Ok(Split::DeepseekV3)
        }
        [] => Err(unsupported("a byte-level pre-tokenizer without a split regex")),
        more => Err(unsupported(format!(
            "a sequence of {} Split pre-tokenizers ({:?})",
            more.len(),
            more.iter().map(|r| r.0).collect::<Vec<_>>()
        ))),
    }
}

/// Reads a Hugging Face `tokenizer.json` (see the module doc for what is accepted).
pub fn read_hf(bytes: &[u8], source: &str) -> Result<Vocabulary> {
    let file: HfFile = serde_json::from_slice(bytes).map_err(|e| invalid(e.to_string()))?;
    let m = &file.model;
    match m.kind.as_deref() {
        Some("BPE") | None => {}
        Some(other) => return Err(unsupported(format!("model {other} (ctxguard reads BPE only)"))),
    }
    if m.dropout.is_some_and(|d| d > 0.0) {
        return Err(unsupported("BPE dropout"));
    }
    if m.byte_fallback == Some(true) {
        return Err(unsupported("byte_fallback (a SentencePiece-style BPE)"));
    }
    for (what, v) in
        [("continuing_subword_prefix", &m.continuing_subword_prefix), ("end_of_word_suffix", &m.end_of_word_suffix)]
    {
        if v.as_deref().is_some_and(|s| !s.is_empty()) {
            return Err(unsupported(format!("{what} {v:?}")));
        }
    }
    let nfc = normalizer_is_nfc(file.normalizer.as_ref())?;
    let split = split_of(file.pre_tokenizer.as_ref())?;
    let mut added = Vec::with_capacity(file.added_tokens.len());
    for a in &file.added_tokens {
        if a.lstrip || a.rstrip || a.single_word {
            return Err(unsupported(format!("added token {:?} with lstrip, rstrip or single_word", a.content)));
        }
        if a.normalized && nfc {
            return Err(unsupported(format!("added token {:?} matched after NFC (normalized: true)", a.content)));
        }
        added.push(Added { id: a.id, content: a.content.to_string(), special: a.special });
    }
    let added_ids: rustc_hash::FxHashSet<u32> = added.iter().map(|a| a.id).collect();

    // Ordinary tokens by id, as bytes.
    let chars = byte_chars();
    let inverse: FxHashMap<char, u8> = chars.iter().enumerate().map(|(b, &c)| (c, b as u8)).collect();
    let ranks = m.vocab.values().copied().max().map_or(0, |x| x as usize + 1);
    if ranks > 1 << 18 {
        return Err(unsupported(format!("{ranks} token ids (at most 2^18)")));
    }
    let mut tokens: Vec<Vec<u8>> = vec![Vec::new(); ranks];
    let mut id_of: FxHashMap<&str, u32> = FxHashMap::default();
    id_of.reserve(m.vocab.len());
    for (s, &id) in &m.vocab {
        id_of.insert(s.as_ref(), id);
        match byte_level_bytes(s, &inverse) {
            Some(b) if !b.is_empty() => {
                let slot = tokens.get_mut(id as usize).ok_or_else(|| invalid("token id out of range"))?;
                if !slot.is_empty() {
                    return Err(invalid(format!("token id {id} is listed twice")));
                }
                *slot = b;
            }
            _ if added_ids.contains(&id) => {}
            _ => return Err(unsupported(format!("vocabulary entry {s:?} is not byte-level"))),
        }
    }
    for b in 0..=255u8 {
        if !tokens.iter().any(|t| t.as_slice() == [b]) {
            return Err(unsupported(format!("byte {b:#04x} is not a token")));
        }
    }

    // Merge order = rank order.
    let mut merged_by = vec![0u32; ranks];
    let mut last = 0u32;
    for (i, merge) in m.merges.iter().enumerate() {
        let (a, b): (&str, &str) = match merge {
            HfMerge::Joined(s) => s.split_once(' ').ok_or_else(|| invalid(format!("merge {i} {s:?}")))?,
            HfMerge::Pair([a, b]) => (a, b),
        };
        let joined = format!("{a}{b}");
        let (Some(_), Some(_), Some(&r)) = (id_of.get(a), id_of.get(b), id_of.get(joined.as_str())) else {
            return Err(unsupported(format!("merge {i} ({a:?} {b:?}) joins or makes something that is not a token")));
        };
        if r < last {
            return Err(unsupported(format!(
                "merge order is not token-id order (merge {i} makes id {r} after id {last}): ctxguard merges by id"
            )));
        }
        last = r;
        if let Some(n) = merged_by.get_mut(r as usize) {
            *n += 1;
        }
    }
    let ignore_merges = m.ignore_merges.unwrap_or(false);
    if !ignore_merges {
        if merged_by.iter().any(|&n| n > 1) {
            return Err(unsupported(
                "tokens made by several merges without ignore_merges (merge order could differ from id order)",
            ));
        }
        if let Some(id) = tokens.iter().enumerate().position(|(id, t)| t.len() > 1 && merged_by.get(id) == Some(&0)) {
            return Err(unsupported(format!("token id {id} is made by no merge (and ignore_merges is off)")));
        }
        check_rebuilds(&tokens)?;
    }
    let (bytes, starts) = arena(&tokens)?;
    Ok(Vocabulary {
        name: split
            .encoding()
            .map_or(split.name(), |e| super::vocabulary::vocabulary_of(e).unwrap_or(e.as_str()))
            .to_string(),
        split,
        bytes,
        starts,
        added,
        match_added: true,
        nfc,
        nfc_tables: None,
        source: source.to_string(),
    })
}

/// Every token, byte-pair merged by rank from its bytes, must come out whole.
fn check_rebuilds(tokens: &[Vec<u8>]) -> Result<()> {
    let rank: FxHashMap<&[u8], u32> =
        tokens.iter().enumerate().filter(|(_, t)| !t.is_empty()).map(|(r, t)| (t.as_slice(), r as u32)).collect();
    let mut bounds: Vec<usize> = Vec::new();
    for (id, t) in tokens.iter().enumerate() {
        if t.len() < 2 {
            continue;
        }
        bounds.clear();
        bounds.extend(0..=t.len());
        loop {
            let mut best: Option<(u32, usize)> = None;
            for k in 0..bounds.len().saturating_sub(2) {
                let (Some(&a), Some(&c)) = (bounds.get(k), bounds.get(k + 2)) else { break };
                if let Some(&r) = t.get(a..c).and_then(|s| rank.get(s)) {
                    if best.is_none_or(|(br, _)| r < br) {
                        best = Some((r, k));
                    }
                }
            }
            let Some((_, k)) = best else { break };
            bounds.remove(k + 1);
        }
        if bounds.len() != 2 {
            return Err(unsupported(format!("merging by id does not rebuild token id {id} from its bytes")));
        }
    }
    Ok(())
}

/// Token bytes concatenated in rank order, with the offset of each rank.
fn arena(tokens: &[Vec<u8>]) -> Result<(Vec<u8>, Vec<u32>)> {
    let mut bytes = Vec::with_capacity(tokens.iter().map(Vec::len).sum());
    let mut starts = Vec::with_capacity(tokens.len() + 1);
    starts.push(0);
    for t in tokens {
        bytes.extend_from_slice(t);
        starts.push(u32::try_from(bytes.len()).map_err(|_| invalid("vocabulary too large"))?);
    }
    Ok((bytes, starts))
}

#[derive(Deserialize)]
struct TekkenFile<'a> {
    config: TekkenConfig,
    #[serde(borrow)]
    vocab: Vec<TekkenToken<'a>>,
    #[serde(default, borrow)]
    special_tokens: Vec<TekkenSpecial<'a>>,
}

#[derive(Deserialize)]
struct TekkenConfig {
    pattern: String,
    default_vocab_size: usize,
    default_num_special_tokens: usize,
}

#[derive(Deserialize)]
struct TekkenToken<'a> {
    rank: usize,
    #[serde(borrow)]
    token_bytes: Cow<'a, str>,
}

#[derive(Deserialize)]
struct TekkenSpecial<'a> {
    rank: u32,
    #[serde(borrow)]
    token_str: Cow<'a, str>,
}

/// Reads a Mistral `tekken.json`: tiktoken ranks under Tekken's pattern; token id = rank + the
/// number of control tokens, which never match in text (mistral-common encodes text without them).
pub fn read_tekken(bytes: &[u8], source: &str) -> Result<Vocabulary> {
    let file: TekkenFile = serde_json::from_slice(bytes).map_err(|e| invalid(e.to_string()))?;
    if file.config.pattern != TEKKEN_REGEX {
        return Err(unsupported(format!("the Tekken pattern {:?}", file.config.pattern)));
    }
    let specials = file.config.default_num_special_tokens;
    let used = file.config.default_vocab_size.checked_sub(specials).ok_or_else(|| invalid("default_vocab_size"))?;
    if used + specials > 1 << 18 {
        return Err(unsupported("more than 2^18 token ids"));
    }
    let mut tokens: Vec<Vec<u8>> = vec![Vec::new(); specials];
    for (i, t) in file.vocab.iter().take(used).enumerate() {
        if t.rank != i {
            return Err(invalid(format!("vocab entry {i} has rank {}", t.rank)));
        }
        let b = base64::engine::general_purpose::STANDARD
            .decode(t.token_bytes.as_bytes())
            .map_err(|e| invalid(format!("rank {i}: {e}")))?;
        if b.is_empty() {
            return Err(invalid(format!("rank {i} is empty")));
        }
        tokens.push(b);
    }
    if tokens.len() != used + specials {
        return Err(invalid(format!("{} ranks, expected {used}", tokens.len() - specials)));
    }
    let added = file
        .special_tokens
        .iter()
        .map(|s| Added { id: s.rank, content: s.token_str.to_string(), special: true })
        .collect();
    let (bytes, starts) = arena(&tokens)?;
    Ok(Vocabulary {
        name: "mistral-tekken".to_string(),
        split: Split::Tekken,
        bytes,
        starts,
        added,
        match_added: false,
        nfc: false,
        nfc_tables: None,
        source: source.to_string(),
    })
}
