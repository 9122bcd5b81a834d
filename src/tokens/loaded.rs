//! Vocabularies loaded at run time: Llama 3, Qwen 2/3, DeepSeek V3, Mistral Tekken, and Mistral's
//! SentencePiece models v3 and v7 (docs/vocabularies.md).
//!
//! Their data is not in the `.wasm`: a host loads the file it needs (`loadVocabulary`), the
//! bytes are parsed here ([`Vocabulary`], from ctxguard's format in `bundle` or a Hugging Face
//! `tokenizer.json` / Mistral `tekken.json` in `hf`), and [`register`] builds the tokenizer once
//! and keeps it for the life of the process, so that `tokenizer(Encoding::Llama3)` and every
//! count after it are synchronous. One vocabulary per encoding: loading the same one again is a
//! no-op, another one of the same encoding is refused (`VOCABULARY_CONFLICT`).
//!
//! The tokenizer is the same byte-pair engine as the built-in encodings (`merge`: rank = token
//! id, each token as its canonical pair, found at load time by BPE on the token's bytes; a token
//! BPE does not build is matched as a whole piece only. The research behind docs/vocabularies.md
//! checked that this merge equals Hugging Face's for these vocabularies, and `hf` refuses files
//! where it could differ), with two rules of Hugging Face tokenizers in front of the split
//! ([`TextRules`]): added tokens found in the text are one token each (not for Tekken, which
//! never matches them), and NFC first where the tokenizer normalizes (Qwen).
//!
//! Each family's split is the engine's own pre-tokenizer for its regexes ([`Split::pattern`]).

use std::sync::OnceLock;

use rustc_hash::FxHashMap;
use serde::Serialize;

pub use super::vocabulary::{vocabulary_file, vocabulary_of, Added, Split, Vocabulary, VOCABULARIES};

use super::added::AddedTokens;
use super::bpe::Vocab;
use super::bpe::NO_RANK;
use super::merge::{self, Merges};
use super::nfc::Nfc;
use super::pretok::{Classes, Pattern, Pieces, Splitter};
use super::spm::Span;
use super::{Bpe, Encoding, Engine, Tokenizer};
use crate::base::error::{Error, ErrorCode, Result};

impl Split {
    /// The engine's pre-tokenizer for this split (`pretok` reproduces each family's regexes;
    /// `tests/tokens/families.rs` checks them against the regexes tokenizer files name).
    pub(crate) fn pattern(self) -> Pattern {
        match self {
            Split::Cl100k => Pattern::Cl100k,
            Split::O200k => Pattern::O200k,
            Split::Llama3 => Pattern::Llama3,
            Split::Qwen2 => Pattern::Qwen2,
            Split::DeepseekV3 => Pattern::DeepseekV3,
            Split::Tekken => Pattern::Tekken,
        }
    }
}

/// What `loadVocabulary` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadedInfo {
    /// The vocabulary's name.
    pub name: String,
    /// The encoding it counts as (`countTokens(text, { encoding })`, `modelInfo(...).encoding`).
    pub encoding: Encoding,
    /// Ordinary tokens.
    pub tokens: usize,
    /// Added (special and control) tokens.
    pub added_tokens: usize,
    /// Whether added tokens found in text count as one token each.
    pub matches_added_tokens: bool,
    /// Whether text is put in NFC first.
    pub nfc: bool,
    pub source: String,
    /// `false` when this vocabulary was already loaded (nothing was done).
    pub loaded_now: bool,
    /// Bytes of memory the tokenizer holds.
    pub memory_bytes: usize,
}

/// A registered vocabulary.
struct Registered {
    tokenizer: Tokenizer,
    info: LoadedInfo,
    digest: u64,
}

static LLAMA3: OnceLock<Registered> = OnceLock::new();
static QWEN2: OnceLock<Registered> = OnceLock::new();
static DEEPSEEK_V3: OnceLock<Registered> = OnceLock::new();
static MISTRAL_TEKKEN: OnceLock<Registered> = OnceLock::new();
static MISTRAL_SPM_V3: OnceLock<Registered> = OnceLock::new();
static MISTRAL_SPM_V7: OnceLock<Registered> = OnceLock::new();
/// The NFC tables, once a vocabulary brought them (every vocabulary that normalizes uses these).
static NFC: OnceLock<Nfc> = OnceLock::new();

fn cell(encoding: Encoding) -> Option<&'static OnceLock<Registered>> {
    match encoding {
        Encoding::Llama3 => Some(&LLAMA3),
        Encoding::Qwen2 => Some(&QWEN2),
        Encoding::DeepseekV3 => Some(&DEEPSEEK_V3),
        Encoding::MistralTekken => Some(&MISTRAL_TEKKEN),
        Encoding::MistralSpmV3 => Some(&MISTRAL_SPM_V3),
        Encoding::MistralSpmV7 => Some(&MISTRAL_SPM_V7),
        _ => None,
    }
}

/// The tokenizer of a loaded encoding, `None` before its vocabulary is loaded.
pub fn get(encoding: Encoding) -> Option<&'static Tokenizer> {
    cell(encoding)?.get().map(|r| &r.tokenizer)
}

/// What was loaded for `encoding`, if anything.
pub fn info(encoding: Encoding) -> Option<LoadedInfo> {
    cell(encoding)?.get().map(|r| LoadedInfo { loaded_now: false, ..r.info.clone() })
}

/// Whether NFC tables are loaded (a `tokenizer.json` that normalizes needs them).
pub fn has_nfc_tables() -> bool {
    NFC.get().is_some()
}

/// Builds the tokenizer of `vocabulary` and keeps it for the life of the process (see the
/// module doc). Errors: `UNSUPPORTED_VOCABULARY` (a split this build does not have, an encoding
/// that is built in), `INVALID_VOCABULARY` (tables that do not make a vocabulary),
/// `VOCABULARY_CONFLICT`.
pub fn register(vocabulary: Vocabulary) -> Result<LoadedInfo> {
    let encoding = vocabulary.encoding().ok_or_else(|| {
        Error::new(
            ErrorCode::UnsupportedVocabulary,
            format!(
                "a vocabulary with the {} split is built in (o200k_base, cl100k_base): nothing to load",
                vocabulary.split.name()
            ),
        )
    })?;
    let digest = vocabulary.digest();
    if let Some(r) = cell(encoding).and_then(OnceLock::get) {
        return same_or_conflict(r, digest, &vocabulary.source);
    }
    if vocabulary.nfc {
        if let Some(tables) = vocabulary.nfc_tables.as_deref() {
            let nfc = Nfc::read(tables).map_err(invalid)?;
            let _ = NFC.set(nfc);
        }
        if NFC.get().is_none() {
            return Err(Error::new(
                ErrorCode::UnsupportedVocabulary,
                "this tokenizer normalizes text to NFC and no NFC tables are loaded: load ctxguard's qwen3 \
                 vocabulary first (it carries them), or pass the tables",
            ));
        }
    }
    let tokenizer = build(encoding, vocabulary.split.pattern(), &vocabulary)?;
    let info = LoadedInfo {
        name: vocabulary.name.clone(),
        encoding,
        tokens: tokenizer.ordinary_tokens(),
        added_tokens: vocabulary.added.len(),
        matches_added_tokens: vocabulary.match_added,
        nfc: vocabulary.nfc,
        source: vocabulary.source.clone(),
        loaded_now: true,
        memory_bytes: tokenizer.memory_bytes(),
    };
    keep(encoding, digest, tokenizer, info)
}

/// Registers the tokenizer of `encoding` unless one is (then: the same one, or a conflict).
fn keep(encoding: Encoding, digest: u64, tokenizer: Tokenizer, info: LoadedInfo) -> Result<LoadedInfo> {
    let cell = cell(encoding).ok_or_else(|| Error::new(ErrorCode::Internal, "no registry slot"))?;
    let source = info.source.clone();
    let mut now = false;
    let r = cell.get_or_init(|| {
        now = true;
        Registered { tokenizer, info, digest }
    });
    if now {
        Ok(r.info.clone())
    } else {
        same_or_conflict(r, digest, &source)
    }
}

/// Registers a SentencePiece vocabulary file (`spm_file`, version 2: Mistral's v3 and v7), the
/// encoding named by its name.
fn register_spm(bytes: &[u8]) -> Result<LoadedInfo> {
    let decoded = super::spm_file::decode(bytes).map_err(invalid)?;
    let encoding = vocabulary_file(&decoded.name)
        .and_then(|f| VOCABULARIES.iter().find(|(file, _, _)| *file == f))
        .map(|(_, e, _)| *e)
        .filter(|e| e.is_loadable())
        .ok_or_else(|| {
            Error::new(
                ErrorCode::UnsupportedVocabulary,
                format!("a SentencePiece vocabulary named {:?}: not one ctxguard loads", decoded.name),
            )
        })?;
    let mut h = rustc_hash::FxHasher::default();
    std::hash::Hasher::write(&mut h, bytes);
    let digest = std::hash::Hasher::finish(&h);
    if let Some(r) = cell(encoding).and_then(OnceLock::get) {
        return same_or_conflict(r, digest, &decoded.source);
    }
    let (name, source, added_tokens) = (decoded.name.clone(), decoded.source.clone(), decoded.user_defined.len());
    let model = super::spm::Model::new(decoded).map_err(invalid)?;
    let tokenizer = Tokenizer { encoding, engine: Engine::Spm(model), rules: None };
    let info = LoadedInfo {
        name,
        encoding,
        tokens: tokenizer.ordinary_tokens(),
        added_tokens,
        matches_added_tokens: true,
        nfc: false,
        source,
        loaded_now: true,
        memory_bytes: tokenizer.memory_bytes(),
    };
    keep(encoding, digest, tokenizer, info)
}

fn same_or_conflict(r: &Registered, digest: u64, source: &str) -> Result<LoadedInfo> {
    if r.digest == digest {
        return Ok(LoadedInfo { loaded_now: false, ..r.info.clone() });
    }
    Err(Error::new(
        ErrorCode::VocabularyConflict,
        format!(
            "another {} vocabulary ({}) is already loaded; a module holds one vocabulary per encoding",
            r.info.encoding.as_str(),
            r.info.source
        ),
    ))
    .map_err(|e| Error { message: format!("{} (refused: {source})", e.message), ..e })
}

pub(crate) fn invalid(message: impl std::fmt::Display) -> Error {
    Error::new(ErrorCode::InvalidVocabulary, format!("invalid vocabulary: {message}"))
}

/// The tokenizer of a vocabulary, not registered (tests: a built-in vocabulary's token bytes with
/// its split count as the built-in tokenizer does). A vocabulary that normalizes needs the NFC
/// tables loaded already.
#[doc(hidden)]
pub fn unregistered(v: &Vocabulary) -> Result<Tokenizer> {
    let encoding = v.encoding().unwrap_or(match v.split {
        Split::O200k => Encoding::O200kBase,
        _ => Encoding::Cl100kBase,
    });
    build(encoding, v.split.pattern(), v)
}

/// The tokenizer of a vocabulary (not registered).
fn build(encoding: Encoding, pattern: Pattern, v: &Vocabulary) -> Result<Tokenizer> {
    let classes = Classes::get()?;
    // Each token as its canonical pair, found by BPE on its bytes over the earlier ranks; a token
    // BPE does not build is matched as a whole piece only (`merge.rs`). When a token that BPE does
    // not build from lower ranks is built from higher ones, merging on canonical pairs would differ
    // from tiktoken's rule: such a vocabulary merges on token bytes instead (`bpe.rs`).
    let (bytes, starts) = (&v.bytes, &v.starts);
    if starts.windows(2).any(|w| matches!(w, [a, b] if b < a || *b as usize > bytes.len())) {
        return Err(invalid("inconsistent token offsets"));
    }
    let tokens = starts.windows(2).map(|w| match w {
        [a, b] => bytes.get(*a as usize..*b as usize).unwrap_or_default(),
        _ => &[][..],
    });
    let merges =
        merge::canonical(tokens.clone(), &mut |_, _| Ok(())).and_then(merge::Builder::finish).map_err(invalid)?;
    let engine = if canonical_pairs_hold(&merges, tokens) {
        Engine::Bpe(Bpe { pattern, merges, classes, cache: Default::default() })
    } else {
        // One tokenizer per encoding, kept for the life of the process: its token bytes are too.
        let bytes: &'static [u8] = v.bytes.clone().leak();
        let vocab = Vocab::from_arena(bytes, v.starts.clone()).map_err(invalid)?;
        Engine::Ranked { pattern, vocab, classes }
    };
    let added = if v.match_added {
        AddedTokens::new(v.added.iter().map(|a| (a.content.as_bytes(), a.id)))
    } else {
        AddedTokens::new(std::iter::empty())
    };
    let added_bytes = v.added.iter().map(|a| (a.id, a.content.as_bytes().to_vec().into_boxed_slice())).collect();
    let nfc = if v.nfc { NFC.get() } else { None };
    Ok(Tokenizer { encoding, engine, rules: Some(Box::new(TextRules { added, added_bytes, nfc })) })
}

/// Whether merging on canonical pairs equals tiktoken's rule for this vocabulary: every token that
/// BPE does not build from lower ranks stays unbuilt by BPE over the whole vocabulary (Llama 3's
/// `っている`, rank 103,836, is built from `ってい` + `る`, and `ってい` is rank 107,462: in text
/// tiktoken merges them into it, canonical pairs never would; docs/performance-notes.md).
fn canonical_pairs_hold<'a>(merges: &Merges, tokens: impl Iterator<Item = &'a [u8]>) -> bool {
    let whole: Vec<&[u8]> = merges.whole_tokens().collect();
    if whole.is_empty() {
        return true;
    }
    let mut rank: FxHashMap<&[u8], u32> = FxHashMap::default();
    for (r, t) in (0u32..).zip(tokens) {
        if !t.is_empty() {
            rank.entry(t).or_insert(r);
        }
    }
    whole.iter().all(|t| !bpe_builds(&rank, t))
}

/// Whether tiktoken's merge (the adjacent pair whose concatenation has the lowest rank, leftmost
/// on ties) turns `t`'s bytes into one part. Quadratic: for the few tokens BPE does not build from
/// lower ranks.
fn bpe_builds(rank: &FxHashMap<&[u8], u32>, t: &[u8]) -> bool {
    // Part boundaries: part k is t[cuts[k]..cuts[k + 1]].
    let mut cuts: Vec<usize> = (0..=t.len()).collect();
    while cuts.len() > 2 {
        let best = (0usize..)
            .zip(cuts.windows(3))
            .filter_map(|(k, w)| match w {
                [a, _, c] => t.get(*a..*c).and_then(|s| rank.get(s)).map(|&r| (r, k)),
                _ => None,
            })
            .min();
        match best {
            Some((_, k)) => {
                cuts.remove(k + 1);
            }
            None => return false,
        }
    }
    true
}

/// What a loaded vocabulary does to text before the split.
pub(crate) struct TextRules {
    /// Added tokens cut out of the text first (empty for Tekken).
    pub(crate) added: AddedTokens,
    /// Every added token's content by id (for decoding).
    added_bytes: FxHashMap<u32, Box<[u8]>>,
    /// NFC first (Qwen).
    pub(crate) nfc: Option<&'static Nfc>,
}

impl TextRules {
    pub(crate) fn added_bytes(&self, id: u32) -> Option<&[u8]> {
        self.added_bytes.get(&id).map(|b| &b[..])
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.added.heap_bytes() + self.added_bytes.values().map(|b| b.len() + 32).sum::<usize>()
    }
}

impl Tokenizer {
    /// Ranks that are ordinary tokens.
    fn ordinary_tokens(&self) -> usize {
        match &self.engine {
            Engine::Bpe(b) => b.merges.ordinary_tokens(),
            Engine::Ranked { vocab, .. } => {
                (0..vocab.rank_count() as u32).filter(|&r| vocab.token_bytes(r).is_some()).count()
            }
            Engine::Spm(m) => m.ordinary_pieces(),
        }
    }
}

/// The spans of a text with added tokens: each occurrence (leftmost-longest) one span with its
/// id, the pre-tokenizer's pieces of the text between them (each stretch split on its own, as
/// Hugging Face tokenizers split the segments between added tokens).
pub(crate) struct AddedSpans<'t> {
    text: &'t str,
    classes: &'static Classes,
    pattern: Pattern,
    added: &'t AddedTokens,
    /// Where the current stretch starts (offsets of `pieces` are relative to it).
    base: usize,
    pieces: Option<Pieces<'t>>,
    /// The next added token, once found: `(start, end, id)`.
    next_added: Option<(usize, usize, u32)>,
    pos: usize,
    examined: u64,
}

impl<'t> AddedSpans<'t> {
    pub(crate) fn new(text: &'t str, classes: &'static Classes, pattern: Pattern, added: &'t AddedTokens) -> Self {
        AddedSpans { text, classes, pattern, added, base: 0, pieces: None, next_added: None, pos: 0, examined: 0 }
    }

    pub(crate) fn chars_examined(&self) -> u64 {
        self.examined + self.pieces.as_ref().map_or(0, Pieces::chars_examined)
    }
}

impl Iterator for AddedSpans<'_> {
    type Item = Span;

    fn next(&mut self) -> Option<Span> {
        loop {
            if let Some(p) = self.pieces.as_mut() {
                if let Some((s, e)) = p.next() {
                    return Some(Span { start: self.base + s, end: self.base + e, id: NO_RANK });
                }
                self.examined += p.chars_examined();
                self.pieces = None;
                if let Some((s, e, id)) = self.next_added.take() {
                    self.pos = e;
                    return Some(Span { start: s, end: e, id });
                }
            }
            if self.pos >= self.text.len() {
                return None;
            }
            let found = self.added.find(self.text.as_bytes(), self.pos);
            let gap_end = found.map_or(self.text.len(), |(s, _, _)| s);
            self.next_added = found;
            if gap_end == self.pos {
                if let Some((s, e, id)) = self.next_added.take() {
                    self.pos = e;
                    return Some(Span { start: s, end: e, id });
                }
                return None;
            }
            let gap = self.text.get(self.pos..gap_end).unwrap_or("");
            self.base = self.pos;
            self.pos = gap_end;
            self.pieces = Some(Splitter::new(gap, self.classes, self.pattern).pieces());
        }
    }
}

/// `loadVocabulary(bytes)`: ctxguard's formats (`bundle`, `spm_file`) or a tokenizer file (`hf`),
/// registered.
/// `source` names where the bytes came from (kept in the answer when the file does not say).
pub fn load_bytes(bytes: &[u8], source: &str) -> Result<LoadedInfo> {
    if super::spm_file::is_spm(bytes) {
        return register_spm(bytes);
    }
    let vocabulary = if super::bundle::is_bundle(bytes) {
        super::bundle::read(bytes).map_err(invalid)?
    } else if super::hf::is_json(bytes) {
        super::hf::read(bytes, source)?
    } else {
        return Err(invalid(
            "neither ctxguard's vocabulary formats (pkg/vocab/*.bin) nor a tokenizer.json / tekken.json",
        ));
    };
    register(vocabulary)
}

/// The vocabulary file for a name, an alias or a model id (`llama3.1:8b` -> `llama3`), or
/// `UNKNOWN_VOCABULARY`.
pub fn resolve_name(name: &str) -> Result<&'static str> {
    vocabulary_file(name).ok_or_else(|| {
        Error::new(
            ErrorCode::UnknownVocabulary,
            format!(
                "no vocabulary is called {name:?}; ctxguard ships {} (or pass a model id with one, or the bytes of a tokenizer.json)",
                VOCABULARIES.iter().map(|(f, _, _)| format!("{f:?}")).collect::<Vec<_>>().join(", ")
            ),
        )
    })
}
