//! Token counting for the OpenAI encodings and Gemini's (docs/design.md, "Token counting").
//!
//! Counts are exact: `count(encoding, text)` equals tiktoken-rs's
//! `encode_ordinary(text).len()` for every input (special-token text such as `<|endoftext|>` is
//! ordinary text, as the provider treats message content). Time grows linearly with the input,
//! including adversarial input such as megabytes without whitespace or base64 data URLs.
//!
//! How (docs/performance-notes.md has the figures):
//! - The vocabulary is binary data prepared at build time from tiktoken-rs (`data`: each token as
//!   its *canonical pair*, the two tokens whose merge makes it; checked against tiktoken-rs by
//!   `tests/tokens/vocab_data.rs`). On first use the merge table (`merge`) is built straight from
//!   the pairs; a page that only uses cl100k never builds o200k. A vocabulary loaded at run time
//!   (`loaded`) gets the same table, its canonical pairs found by BPE on each token's bytes.
//! - Pre-tokenization does not run tiktoken's backtracking regex: `pretok` reproduces each
//!   pattern by hand (character classes computed by the same regex engine, ASCII read off the
//!   bytes), which is linear and several times faster.
//! - Byte-pair merging (`merge`) reproduces tiktoken's merge order exactly, on token ids: a scan
//!   for short pieces, block minima for longer ones, overlapping windows stitched on a shared
//!   token for long pieces (with a fast-forward for text that repeats).
//! - A bounded cache of recent pieces (`cache`) answers the pieces natural text repeats.
//!
//! Tests: `tests/tokens/exact.rs` (ids and pieces against tiktoken-rs and its regex, including
//! every code point in context), `tests/tokens/linear.rs` (work counters on adversarial input),
//! `tests/tokens/offsets.rs`; throughput: `benches/tokens.rs` (`cargo bench --bench tokens`).
//!
//! `gemma3` (Cargo feature `gemini`) is the SentencePiece model Google's SDKs count Gemini text
//! with: the same merge on characters instead of bytes, no pre-tokenizer, user-defined symbols and
//! byte fallback (`spm`; docs/gemini-tokenizer.md). Its counts equal the Python `sentencepiece`
//! package's on that model (`tests/gemini/reference.rs`).

mod added;
mod bpe;
#[doc(hidden)]
pub mod bundle;
mod cache;
#[doc(hidden)]
pub mod hf;
pub mod loaded;
pub(crate) mod merge;
#[doc(hidden)]
pub mod nfc;
mod pretok;
mod rans;
mod spm;
#[doc(hidden)]
pub mod spm_file;
pub mod spm_model;
#[doc(hidden)]
pub mod vocab_file;
pub mod vocabulary;

use std::sync::{Mutex, MutexGuard, OnceLock};

use serde::{Deserialize, Serialize};

use crate::base::error::{Error, ErrorCode, Result};

use self::bpe::{Scratch, Vocab, NO_RANK};
use self::cache::{Key, PieceCache};
use self::merge::{MergeScratch, Merges};
use self::pretok::{Classes, Splitter};
use self::spm::Span;

pub use self::pretok::{
    Pattern, CL100K_PATTERN, DEEPSEEK_V3_PATTERNS, LLAMA3_PATTERN, O200K_PATTERN, QWEN2_PATTERN, TEKKEN_PATTERN,
};

/// The encodings ctxguard ships.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Encoding {
    #[serde(rename = "o200k_base")]
    O200kBase,
    #[serde(rename = "cl100k_base")]
    Cl100kBase,
    /// Gemma 3's SentencePiece model (`gemma3_cleaned_262144_v2.spiece.model`), which Google's
    /// SDKs count Gemini 2.x and 3 text with. Only in builds with the `gemini` feature
    /// (`ctxguard/gemini`).
    #[serde(rename = "gemma3")]
    Gemma3,
    /// Llama 3.x's byte-level BPE (128,000 ranks; the first 100,256 are cl100k_base's), loaded at
    /// run time (`loaded`, docs/vocabularies.md).
    #[serde(rename = "llama3")]
    Llama3,
    /// Qwen 2 / 2.5 / 3's byte-level BPE (151,643 ranks, NFC first), loaded at run time.
    #[serde(rename = "qwen2")]
    Qwen2,
    /// DeepSeek V3 / R1's byte-level BPE, loaded at run time.
    #[serde(rename = "deepseek-v3")]
    DeepseekV3,
    /// Mistral's Tekken (NeMo, Pixtral, Ministral), loaded at run time.
    #[serde(rename = "mistral-tekken")]
    MistralTekken,
    /// Mistral's SentencePiece model v3 (Mistral Large 2407, Codestral 2405, Mixtral 8x22B),
    /// loaded at run time.
    #[serde(rename = "mistral-spm-v3")]
    MistralSpmV3,
    /// Mistral's SentencePiece model v7 (Mistral Large 2411, Pixtral Large), loaded at run time.
    #[serde(rename = "mistral-spm-v7")]
    MistralSpmV7,
}

impl Encoding {
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
            Encoding::Gemma3 => "gemma3",
            Encoding::Llama3 => "llama3",
            Encoding::Qwen2 => "qwen2",
            Encoding::DeepseekV3 => "deepseek-v3",
            Encoding::MistralTekken => "mistral-tekken",
            Encoding::MistralSpmV3 => "mistral-spm-v3",
            Encoding::MistralSpmV7 => "mistral-spm-v7",
        }
    }

    /// Whether this encoding's vocabulary is loaded at run time (`loadVocabulary`) rather than
    /// built in.
    pub fn is_loadable(self) -> bool {
        matches!(
            self,
            Encoding::Llama3
                | Encoding::Qwen2
                | Encoding::DeepseekV3
                | Encoding::MistralTekken
                | Encoding::MistralSpmV3
                | Encoding::MistralSpmV7
        )
    }

    /// The encoding named `name`; `UNKNOWN_ENCODING` for other names and for an encoding this
    /// build leaves out (Cargo features `o200k` / `cl100k`).
    pub fn from_name(name: &str) -> Result<Self> {
        let encoding = match name {
            "o200k_base" => Encoding::O200kBase,
            "cl100k_base" => Encoding::Cl100kBase,
            "gemma3" => Encoding::Gemma3,
            "llama3" => Encoding::Llama3,
            "qwen2" => Encoding::Qwen2,
            "deepseek-v3" => Encoding::DeepseekV3,
            "mistral-tekken" => Encoding::MistralTekken,
            "mistral-spm-v3" => Encoding::MistralSpmV3,
            "mistral-spm-v7" => Encoding::MistralSpmV7,
            other => {
                return Err(Error::new(
                    ErrorCode::UnknownEncoding,
                    format!("unknown encoding {other:?}; ctxguard ships \"o200k_base\", \"cl100k_base\", (ctxguard/gemini) \"gemma3\", and loads \"llama3\", \"qwen2\", \"deepseek-v3\", \"mistral-tekken\", \"mistral-spm-v3\" and \"mistral-spm-v7\" (loadVocabulary)"),
                ))
            }
        };
        encoding.require()
    }

    /// This encoding when this build embeds it, else `UNKNOWN_ENCODING` — never a silent byte
    /// count. Every export that picks an encoding (from a name or from a model) goes through it.
    pub fn require(self) -> Result<Self> {
        if self.is_available() {
            return Ok(self);
        }
        if self.is_loadable() {
            return Err(Error::new(
                ErrorCode::VocabularyNotLoaded,
                format!(
                    "the {} vocabulary is not loaded; await loadVocabulary('{}') first (docs/vocabularies.md)",
                    self.as_str(),
                    loaded::vocabulary_of(self).unwrap_or(self.as_str())
                ),
            ));
        }
        let entry = if Encoding::Gemma3.is_available() {
            "ctxguard/gemini"
        } else if Encoding::O200kBase.is_available() && Encoding::Cl100kBase.is_available() {
            "ctxguard"
        } else if Encoding::O200kBase.is_available() {
            "ctxguard/o200k"
        } else {
            "ctxguard/cl100k"
        };
        if self == Encoding::Gemma3 {
            return Err(Error::new(
                ErrorCode::UnknownEncoding,
                format!("this build of ctxguard ({entry}) has no gemma3 vocabulary; import 'ctxguard/gemini' for Gemini's tokenizer"),
            ));
        }
        // The counting-only builds (no `pipeline` feature) are `ctxguard/<encoding>/count`.
        let (entry, instead) = if cfg!(feature = "pipeline") {
            (entry.to_string(), "'ctxguard'")
        } else {
            (format!("{entry}/count"), "'ctxguard/o200k/count' and 'ctxguard/cl100k/count' or 'ctxguard'")
        };
        Err(Error::new(
            ErrorCode::UnknownEncoding,
            format!(
                "this build of ctxguard ({entry}) has no {} vocabulary; import {instead} for both encodings",
                self.as_str()
            ),
        ))
    }

    /// The encoding used when none is named and no model says which: `o200k_base`, or
    /// `cl100k_base` in a build that has only that one (`ctxguard/cl100k`), or `gemma3` in a
    /// build that has neither (`ctxguard/gemini`).
    pub fn build_default() -> Self {
        if Encoding::O200kBase.is_available() {
            Encoding::O200kBase
        } else if Encoding::Cl100kBase.is_available() {
            Encoding::Cl100kBase
        } else if Encoding::Gemma3.is_available() {
            Encoding::Gemma3
        } else {
            Encoding::O200kBase
        }
    }

    /// Whether this build embeds the encoding's vocabulary (the OpenAI ones by default; `gemma3`
    /// with the `gemini` feature).
    pub fn is_available(self) -> bool {
        match self {
            Encoding::Gemma3 => spm_file::file().is_some(),
            e if e.is_loadable() => loaded::get(e).is_some(),
            _ => vocab_file::file(self).is_some(),
        }
    }
}

/// A loaded encoding. Get one with [`tokenizer`]; all methods are infallible, and it is `Sync`
/// (one shared instance per encoding).
pub struct Tokenizer {
    encoding: Encoding,
    engine: Engine,
    /// What a loaded vocabulary does to text before the split: added tokens cut out, NFC
    /// (`loaded`). `None` for the built-in encodings.
    rules: Option<Box<loaded::TextRules>>,
}

/// How an encoding cuts and merges. Variants differ in size, which does not matter: there is one
/// tokenizer per encoding for the life of the process.
#[allow(clippy::large_enum_variant)]
enum Engine {
    /// tiktoken: a pre-tokenizer, then byte-pair merging of each piece on token ids (`merge`).
    Bpe(Bpe),
    /// The same, merging on token bytes with a rank table (`bpe`): for a loaded vocabulary whose
    /// tokens are not all built from lower ranks, where merging on canonical pairs would differ
    /// from tiktoken's rule (`loaded::build`; Llama 3).
    Ranked { pattern: Pattern, vocab: Vocab, classes: &'static Classes },
    /// SentencePiece BPE (`spm`).
    Spm(spm::Model),
}

/// A byte-level BPE vocabulary with its pre-tokenizer.
struct Bpe {
    pattern: Pattern,
    merges: Merges,
    classes: &'static Classes,
    /// Recent pieces → their tokens (`cache.rs`), allocated on the first count.
    cache: Mutex<Option<Box<PieceCache>>>,
}

impl Bpe {
    /// Tokens of one piece `text[start..end]` (through the piece cache).
    #[inline(always)]
    fn piece_count(
        &self,
        bytes: &[u8],
        start: usize,
        end: usize,
        cache: Option<&mut PieceCache>,
        merge: &mut MergeScratch,
    ) -> usize {
        let len = end - start;
        let Some(piece) = bytes.get(start..end) else { return 0 };
        match cache {
            // One or two bytes: a table lookup at most, cheaper than the cache's.
            _ if len <= 2 => self.merges.scan_count(piece),
            Some(c) if len <= cache::MAX_PIECE => c.count_or(Key::of(bytes, start, len), || {
                merge.stats.merged_bytes += len as u64;
                self.merges.scan_count(piece)
            }),
            Some(c) => c.long_count_or(piece, || self.merges.count(piece, merge)),
            None => self.merges.count(piece, merge),
        }
    }

    /// Exact number of tokens of `text`: the pre-tokenizer and the pieces in one loop.
    fn count(&self, text: &str, work: &mut Work<'_>) -> usize {
        let splitter = Splitter::new(text, self.classes, self.pattern);
        let bytes = text.as_bytes();
        let mut cache = work.cache.as_mut().and_then(|g| g.as_deref_mut());
        let merge = &mut work.merge;
        let mut pos = 0usize;
        let mut segment_end = 0usize;
        let mut total = 0usize;
        while pos < bytes.len() {
            let end = splitter.next_end(pos, &mut segment_end);
            total += self.piece_count(bytes, pos, end, cache.as_deref_mut(), merge);
            pos = end;
        }
        total
    }
}

/// Scratch space of one call: the merge buffers and the tokenizer's piece cache, taken for the
/// call (`None` when another thread has it: that call merges every piece).
struct Work<'t> {
    spm: Scratch,
    merge: MergeScratch,
    cache: Option<MutexGuard<'t, Option<Box<PieceCache>>>>,
}

static O200K: OnceLock<Result<Tokenizer>> = OnceLock::new();
static CL100K: OnceLock<Result<Tokenizer>> = OnceLock::new();
static GEMMA3: OnceLock<Result<Tokenizer>> = OnceLock::new();

/// The tokenizer of `encoding`, built on first use (tens of milliseconds natively) and kept for
/// the life of the process. Fails only if the embedded vocabulary cannot be loaded, which would be
/// a build defect (code `INTERNAL`), or if this build leaves the encoding out (code
/// `UNKNOWN_ENCODING`; see the Cargo features `o200k` and `cl100k`).
pub fn tokenizer(encoding: Encoding) -> Result<&'static Tokenizer> {
    let cell = match encoding {
        Encoding::O200kBase => &O200K,
        Encoding::Cl100kBase => &CL100K,
        Encoding::Gemma3 => &GEMMA3,
        e => return loaded::get(e).ok_or_else(|| e.require().err().unwrap_or_else(|| internal(e, "not loaded"))),
    };
    cell.get_or_init(|| Tokenizer::load(encoding)).as_ref().map_err(Clone::clone)
}

fn internal(encoding: Encoding, what: impl std::fmt::Display) -> Error {
    Error::new(ErrorCode::Internal, format!("cannot load the {} vocabulary: {what}", encoding.as_str()))
}

impl Tokenizer {
    // Not inlined (and kept out of wasm-opt's inlining by scripts/build-pkg.sh): inlined, this
    // one-time code made the export that first counts a very large function, which V8 then
    // compiled in its optimizing tier (tens of ms on a background thread, megabytes of working
    // memory) although it only runs once.
    #[inline(never)]
    fn load(encoding: Encoding) -> Result<Tokenizer> {
        // An encoding this build leaves out: the UNKNOWN_ENCODING that names the build.
        encoding.require()?;
        let pattern = match encoding {
            Encoding::O200kBase => Pattern::O200k,
            Encoding::Cl100kBase => Pattern::Cl100k,
            Encoding::Gemma3 => {
                let model = spm::Model::load().map_err(|e| internal(encoding, e))?;
                return Ok(Tokenizer { encoding, engine: Engine::Spm(model), rules: None });
            }
            e => return Err(internal(e, "a loaded vocabulary has no built-in data")),
        };
        let classes = Classes::get()?;
        let file = vocab_file::file(encoding).ok_or_else(|| internal(encoding, "no data"))?;
        let merges = vocab_file::merges(file).map_err(|e| internal(encoding, e))?;
        Ok(Tokenizer {
            encoding,
            engine: Engine::Bpe(Bpe { pattern, merges, classes, cache: Mutex::new(None) }),
            rules: None,
        })
    }

    /// The scratch space of one call (takes the piece cache when it is free).
    fn work(&self) -> Work<'_> {
        let cache = match &self.engine {
            Engine::Bpe(b) => match b.cache.try_lock() {
                Ok(mut g) => {
                    if g.is_none() {
                        *g = Some(Box::new(PieceCache::new()));
                    }
                    Some(g)
                }
                Err(_) => None,
            },
            Engine::Ranked { .. } | Engine::Spm(_) => None,
        };
        Work { spm: Scratch::default(), merge: MergeScratch::default(), cache }
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// Number of ids (the highest ordinary token id plus one; special tokens are not included).
    /// For `gemma3`, every id of the model (control and byte pieces too).
    pub fn vocab_size(&self) -> usize {
        match &self.engine {
            Engine::Bpe(b) => b.merges.rank_count(),
            Engine::Ranked { vocab, .. } => vocab.rank_count(),
            Engine::Spm(m) => m.vocab_size(),
        }
    }

    /// Most bytes of text one token stands for: a text of `b` bytes has at least
    /// `b.div_ceil(max_token_bytes)` tokens and at most `b`.
    pub fn max_token_bytes(&self) -> usize {
        match &self.engine {
            Engine::Bpe(b) => b.merges.max_token_len(),
            Engine::Ranked { vocab, .. } => vocab.max_token_len(),
            Engine::Spm(m) => m.max_span(),
        }
    }

    /// Bytes of memory held by this tokenizer's tables, its piece cache included (the character
    /// classes are static data).
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + match &self.engine {
                Engine::Bpe(b) => {
                    let cache = b.cache.try_lock().ok().and_then(|g| g.as_ref().map(|c| c.heap_bytes()));
                    b.merges.heap_bytes() + cache.unwrap_or(cache::FIXED_BYTES)
                }
                Engine::Ranked { vocab, .. } => vocab.heap_bytes(),
                Engine::Spm(m) => m.heap_bytes(),
            }
            + self.rules.as_ref().map_or(0, |r| r.heap_bytes())
    }

    /// The spans a text is cut into before merging: the pre-tokenizer's pieces, or
    /// SentencePiece's user-defined symbols and the runs between them.
    fn spans<'t>(&'t self, text: &'t str) -> Spans<'t> {
        #[cfg(debug_assertions)]
        TOKENIZED.with(|n| n.set(n.get() + text.len() as u64));
        match (&self.engine, &self.rules) {
            (Engine::Bpe(b), Some(r)) => Spans::Added(loaded::AddedSpans::new(text, b.classes, b.pattern, &r.added)),
            (Engine::Bpe(b), None) => Spans::Bpe(Splitter::new(text, b.classes, b.pattern).pieces()),
            (Engine::Ranked { pattern, classes, .. }, Some(r)) => {
                Spans::Added(loaded::AddedSpans::new(text, classes, *pattern, &r.added))
            }
            (Engine::Ranked { pattern, classes, .. }, None) => {
                Spans::Bpe(Splitter::new(text, classes, *pattern).pieces())
            }
            (Engine::Spm(m), _) => Spans::Spm(m.spans(text.as_bytes())),
        }
    }

    /// The NFC tables, for a vocabulary whose tokenizer normalizes text first.
    #[inline]
    fn nfc(&self) -> Option<&'static nfc::Nfc> {
        self.rules.as_ref().and_then(|r| r.nfc)
    }

    /// `text` as the tokenizer sees it (NFC for a vocabulary that normalizes, a space in front
    /// for a SentencePiece model with a dummy prefix), with the map back to `text` when it changed.
    fn prepared<'t>(&self, text: &'t str) -> (std::borrow::Cow<'t, str>, Option<nfc::Normalized>) {
        if self.dummy_prefix() && !text.is_empty() {
            let mut n = nfc::Normalized::prefixed(" ", text);
            return (std::borrow::Cow::Owned(std::mem::take(&mut n.text)), Some(n));
        }
        match self.nfc().and_then(|n| n.normalize_mapped(text)) {
            Some(mut n) => (std::borrow::Cow::Owned(std::mem::take(&mut n.text)), Some(n)),
            None => (std::borrow::Cow::Borrowed(text), None),
        }
    }

    /// Whether a space goes in front of the text (Mistral's SentencePiece models).
    #[inline]
    fn dummy_prefix(&self) -> bool {
        matches!(&self.engine, Engine::Spm(m) if m.dummy_prefix())
    }

    /// Tokens of one span.
    #[inline]
    fn span_count(&self, bytes: &[u8], span: Span, work: &mut Work<'_>) -> usize {
        if span.id != NO_RANK {
            return 1;
        }
        let Some(piece) = bytes.get(span.start..span.end) else { return 0 };
        match &self.engine {
            Engine::Bpe(b) => {
                let cache = work.cache.as_mut().and_then(|g| g.as_deref_mut());
                b.piece_count(bytes, span.start, span.end, cache, &mut work.merge)
            }
            Engine::Ranked { vocab, .. } => vocab.piece_count(piece, &mut work.spm),
            Engine::Spm(m) => m.run_count(piece, &mut work.spm),
        }
    }

    /// Tokens of one span: `f(id, start, end)` with offsets in the text.
    fn span_tokens(&self, bytes: &[u8], span: Span, work: &mut Work<'_>, mut f: impl FnMut(u32, usize, usize)) {
        let a = span.start;
        if span.id != NO_RANK {
            return f(span.id, a, span.end);
        }
        let Some(piece) = bytes.get(a..span.end) else { return };
        let scratch = &mut work.spm;
        match &self.engine {
            Engine::Bpe(b) => {
                b.merges.tokens(piece, a, &mut work.merge, &mut f);
            }
            Engine::Ranked { vocab, .. } => {
                vocab.piece_tokens(piece, scratch, |id, s, e| f(id, a + s, a + e));
            }
            Engine::Spm(m) => {
                m.run_tokens(piece, scratch, |id, s, e| f(id, a + s, a + e));
            }
        }
    }

    /// `text` as this vocabulary's normalizer leaves it (NFC for the vocabularies that have one,
    /// a space in front for a dummy prefix).
    fn normalized<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        if self.dummy_prefix() && !text.is_empty() {
            return std::borrow::Cow::Owned(format!(" {text}"));
        }
        match self.nfc() {
            Some(n) => n.normalize(text),
            None => std::borrow::Cow::Borrowed(text),
        }
    }

    /// Exact number of tokens of `text`.
    pub fn count(&self, text: &str) -> usize {
        if let (Engine::Bpe(b), None) = (&self.engine, &self.rules) {
            let mut work = self.work();
            #[cfg(debug_assertions)]
            TOKENIZED.with(|n| n.set(n.get() + text.len() as u64));
            return b.count(text, &mut work);
        }
        let normalized = self.normalized(text);
        let text: &str = &normalized;
        let mut work = self.work();
        let bytes = text.as_bytes();
        self.spans(text).map(|span| self.span_count(bytes, span, &mut work)).sum()
    }

    /// Exact number of tokens of `text` if it is at most `limit`, else `None`. Stops as soon as
    /// the count is known to exceed `limit` (using the lower bound of one token per
    /// [`max_token_bytes`](Self::max_token_bytes) for the text and for each piece before merging it).
    pub fn count_till_limit(&self, text: &str, limit: usize) -> Option<usize> {
        let normalized = self.normalized(text);
        let text: &str = &normalized;
        let max_len = self.max_token_bytes().max(1);
        if text.len().div_ceil(max_len) > limit {
            return None;
        }
        let mut work = self.work();
        let bytes = text.as_bytes();
        let mut total = 0usize;
        for span in self.spans(text) {
            if total + (span.end - span.start).div_ceil(max_len) > limit {
                return None;
            }
            total += self.span_count(bytes, span, &mut work);
            if total > limit {
                return None;
            }
        }
        Some(total)
    }

    /// Calls `f(id, start, end)` for every token of `text`, in order; `start..end` is the token's
    /// byte range in `text`. Token boundaries can fall inside a multi-byte character (byte-level
    /// tokens of rare characters).
    pub fn for_each_token(&self, text: &str, mut f: impl FnMut(u32, usize, usize)) {
        let (prepared, map) = self.prepared(text);
        let mut work = self.work();
        let bytes = prepared.as_bytes();
        for span in self.spans(&prepared) {
            match &map {
                None => self.span_tokens(bytes, span, &mut work, &mut f),
                Some(m) => self.span_tokens(bytes, span, &mut work, |id, s, e| {
                    f(id, m.original(s, false, text.len()), m.original(e, true, text.len()))
                }),
            }
        }
    }

    /// Token ids of `text`; equal to tiktoken-rs's `encode_ordinary(text)` (for `gemma3`: to
    /// the `sentencepiece` package's `encode(text)` on Gemma 3's model).
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut out = Vec::with_capacity(text.len() / 4 + 1);
        self.for_each_token(text, |id, _, _| out.push(id));
        out
    }

    /// Bytes of the given ids concatenated (for `gemma3`, with spaces for U+2581, as Google's
    /// SDKs show tokens). Ids that are not ordinary tokens of this encoding (special tokens,
    /// out of range) become U+FFFD.
    pub fn decode_bytes(&self, ids: &[u32]) -> Vec<u8> {
        let mut out = Vec::with_capacity(ids.len() * 4);
        for &id in ids {
            let added = |out: &mut Vec<u8>| match self.rules.as_ref().and_then(|r| r.added_bytes(id)) {
                Some(bytes) => {
                    out.extend_from_slice(bytes);
                    true
                }
                None => false,
            };
            let found = match &self.engine {
                Engine::Bpe(b) => b.merges.append_bytes(id, &mut out) || added(&mut out),
                Engine::Ranked { vocab, .. } => match vocab.token_bytes(id) {
                    Some(bytes) => {
                        out.extend_from_slice(bytes);
                        true
                    }
                    None => added(&mut out),
                },
                Engine::Spm(m) => match m.token_bytes(id) {
                    Some(bytes) => {
                        out.extend_from_slice(&bytes);
                        true
                    }
                    None => false,
                },
            };
            if !found {
                out.extend_from_slice("\u{FFFD}".as_bytes());
            }
        }
        out
    }

    /// Text of the given ids, with invalid UTF-8 (e.g. a cut through a multi-byte character)
    /// replaced by U+FFFD. Ids that are not ordinary tokens become U+FFFD.
    pub fn decode(&self, ids: &[u32]) -> String {
        String::from_utf8_lossy(&self.decode_bytes(ids)).into_owned()
    }

    /// Byte offset in `text` just after its first `n` tokens, moved back to a character boundary
    /// if that token ends inside a character. `0` for `n == 0`, `text.len()` if the text has at
    /// most `n` tokens.
    ///
    /// `&text[..head_offset(text, n)]` is the text of (at most) the first `n` tokens of `text`.
    /// Tokenizing that prefix on its own usually gives the same tokens, but the last piece can
    /// split differently once cut (about 1 cut in 5000 in the tests), so a caller that needs a
    /// hard bound should use [`fit_head`](Self::fit_head).
    pub fn head_offset(&self, text: &str, n: usize) -> usize {
        match self.prepared(text) {
            (prepared, Some(map)) => {
                floor_char_boundary(text, map.original(self.head_offset_in(&prepared, n), false, text.len()))
            }
            (_, None) => self.head_offset_in(text, n),
        }
    }

    /// [`head_offset`](Self::head_offset) in text the tokenizer takes as it is.
    fn head_offset_in(&self, text: &str, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        let mut work = self.work();
        let bytes = text.as_bytes();
        let mut need = n;
        for span in self.spans(text) {
            let c = self.span_count(bytes, span, &mut work);
            if c < need {
                need -= c;
                continue;
            }
            if c == need {
                return span.end;
            }
            let mut seen = 0usize;
            let mut cut = span.start;
            self.span_tokens(bytes, span, &mut work, |_, _, e| {
                seen += 1;
                if seen == need {
                    cut = e;
                }
            });
            return floor_char_boundary(text, cut);
        }
        text.len()
    }

    /// Byte offset in `text` where its last `n` tokens start, moved forward to a character
    /// boundary if that token starts inside a character. `text.len()` for `n == 0`, `0` if the
    /// text has at most `n` tokens. Same caveat as [`head_offset`](Self::head_offset); see
    /// [`fit_tail`](Self::fit_tail) for a hard bound.
    pub fn tail_offset(&self, text: &str, n: usize) -> usize {
        match self.prepared(text) {
            (prepared, Some(map)) => {
                ceil_char_boundary(text, map.original(self.tail_offset_in(&prepared, n), true, text.len()))
            }
            (_, None) => self.tail_offset_in(text, n),
        }
    }

    /// [`tail_offset`](Self::tail_offset) in text the tokenizer takes as it is.
    fn tail_offset_in(&self, text: &str, n: usize) -> usize {
        if n == 0 {
            return text.len();
        }
        let mut work = self.work();
        let bytes = text.as_bytes();
        let spans: Vec<Span> = self.spans(text).collect();
        let mut need = n;
        for &span in spans.iter().rev() {
            let c = self.span_count(bytes, span, &mut work);
            if c < need {
                need -= c;
                continue;
            }
            if c == need {
                return span.start;
            }
            let skip = c - need;
            let mut seen = 0usize;
            let mut cut = span.end;
            self.span_tokens(bytes, span, &mut work, |_, s, _| {
                if seen == skip {
                    cut = s;
                }
                seen += 1;
            });
            return ceil_char_boundary(text, cut);
        }
        0
    }

    /// Like [`head_offset`](Self::head_offset), but guarantees that the prefix on its own counts
    /// at most `n` tokens: `count(&text[..fit_head(text, n)]) <= n`. Usually the same offset;
    /// when cutting changes how the end of the prefix tokenizes, it steps back further.
    pub fn fit_head(&self, text: &str, n: usize) -> usize {
        let mut k = n;
        loop {
            let off = self.head_offset(text, k);
            let c = text.get(..off).map_or(0, |p| self.count(p));
            if c <= n || k == 0 {
                return off;
            }
            k = k.saturating_sub(c - n);
        }
    }

    /// Like [`tail_offset`](Self::tail_offset), but guarantees
    /// `count(&text[fit_tail(text, n)..]) <= n`.
    pub fn fit_tail(&self, text: &str, n: usize) -> usize {
        let mut k = n;
        loop {
            let off = self.tail_offset(text, k);
            let c = text.get(off..).map_or(0, |s| self.count(s));
            if c <= n || k == 0 {
                return off;
            }
            k = k.saturating_sub(c - n);
        }
    }

    /// The pre-tokenizer's pieces as byte ranges (for tests against the reference regex; for
    /// `gemma3`, the user-defined symbols and the runs between them).
    #[doc(hidden)]
    pub fn pieces(&self, text: &str) -> Vec<(usize, usize)> {
        let (prepared, map) = self.prepared(text);
        self.spans(&prepared)
            .map(|s| match &map {
                None => (s.start, s.end),
                Some(m) => (m.original(s.start, false, text.len()), m.original(s.end, true, text.len())),
            })
            .collect()
    }

    /// Count plus work counters (for structural linearity tests; not a stable API).
    #[doc(hidden)]
    pub fn count_with_stats(&self, text: &str) -> WorkStats {
        let (prepared, _) = self.prepared(text);
        let text = &*prepared;
        let mut work = self.work();
        let bytes = text.as_bytes();
        let mut spans = self.spans(text);
        let mut stats = WorkStats::default();
        for span in spans.by_ref() {
            stats.pieces += 1;
            stats.longest_piece = stats.longest_piece.max(span.end - span.start);
            stats.tokens += self.span_count(bytes, span, &mut work);
        }
        stats.queue_ops = work.spm.queue_ops;
        stats.tree_writes = work.spm.tree_writes;
        stats.scan_lookups = work.spm.scan_lookups;
        if let Some(c) = work.cache.as_ref().and_then(|g| g.as_ref()) {
            stats.cache_hits = c.hits;
            stats.cache_misses = c.misses;
        }
        let m = work.merge.stats;
        stats.merged_bytes = m.merged_bytes;
        stats.heap_ops = m.heap_ops;
        stats.window_bytes = m.window_bytes;
        stats.windows = m.windows;
        stats.skipped_windows = m.skipped_windows;
        stats.fallbacks = m.fallbacks;
        stats.period_bytes = m.period_bytes;
        match spans {
            Spans::Bpe(p) => stats.chars_examined = p.chars_examined(),
            Spans::Added(a) => stats.chars_examined = a.chars_examined(),
            Spans::Spm(s) => stats.matcher_steps = s.steps,
        }
        stats
    }
}

/// The pieces `pattern`'s pre-tokenizer cuts `text` into, as byte ranges (tests against the
/// regexes; not a stable API).
#[doc(hidden)]
pub fn split(pattern: Pattern, text: &str) -> Result<Vec<(usize, usize)>> {
    Ok(Splitter::new(text, Classes::get()?, pattern).pieces().collect())
}

/// The spans of one text (see [`Tokenizer::spans`]).
enum Spans<'t> {
    Bpe(pretok::Pieces<'t>),
    /// A loaded vocabulary's added tokens, and the pre-tokenizer's pieces between them.
    Added(loaded::AddedSpans<'t>),
    Spm(spm::Spans<'t>),
}

impl Iterator for Spans<'_> {
    type Item = Span;

    #[inline]
    fn next(&mut self) -> Option<Span> {
        match self {
            Spans::Bpe(p) => p.next().map(|(start, end)| Span { start, end, id: NO_RANK }),
            Spans::Added(a) => a.next(),
            Spans::Spm(s) => s.next(),
        }
    }
}

#[cfg(debug_assertions)]
thread_local! {
    static TOKENIZED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Bytes of text this thread has handed to a tokenizer so far (every count, limit, offset and
/// encode goes through it), so that a test can assert a path never tokenizes a payload, such as
/// an image's base64, by the difference before and after. Debug builds only: always 0 in release
/// builds, where the counter is compiled out. Not a stable API.
#[doc(hidden)]
pub fn bytes_tokenized() -> u64 {
    #[cfg(debug_assertions)]
    {
        TOKENIZED.with(std::cell::Cell::get)
    }
    #[cfg(not(debug_assertions))]
    {
        0
    }
}

/// Work done by one count (see [`Tokenizer::count_with_stats`]).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WorkStats {
    pub tokens: usize,
    pub pieces: usize,
    pub longest_piece: usize,
    /// Priority-queue operations of the long-piece merge (pops and updates, each O(log n)).
    pub queue_ops: u64,
    /// Tree nodes written by those operations (at most `log2(piece length) + 1` each).
    pub tree_writes: u64,
    /// Characters decoded by the pre-tokenizer (debug builds only; 0 in release builds).
    pub chars_examined: u64,
    /// SentencePiece: trie edges followed while looking for user-defined symbols.
    pub matcher_steps: u64,
    /// SentencePiece: vocabulary lookups of the short-segment scan merge.
    pub scan_lookups: u64,
    /// Byte-level BPE: bytes handed to a merge (the piece cache's misses, segments, the windows of
    /// long pieces); each merge of `n` bytes does at most `n` merges of `O(log n)` or `O(16)` work.
    pub merged_bytes: u64,
    /// Byte-level BPE: heap pushes and pops of the heap merge (each `O(log n)`).
    pub heap_ops: u64,
    /// Byte-level BPE: bytes merged in windows of long pieces, and windows merged.
    pub window_bytes: u64,
    pub windows: u64,
    /// Byte-level BPE: window steps of a periodic text added up without merging.
    pub skipped_windows: u64,
    /// Byte-level BPE: long pieces merged whole because their windows never agreed.
    pub fallbacks: u64,
    /// Byte-level BPE: bytes compared to find how far a text repeats.
    pub period_bytes: u64,
    /// Byte-level BPE: the piece cache's hits and misses so far (the cache lives as long as the
    /// tokenizer: these count every call that had it).
    pub cache_hits: u64,
    pub cache_misses: u64,
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    if i >= text.len() {
        return text.len();
    }
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char_boundary(text: &str, mut i: usize) -> usize {
    while i < text.len() && !text.is_char_boundary(i) {
        i += 1;
    }
    i.min(text.len())
}

/// Exact number of tokens of `text` (no special tokens are recognized: text is ordinary text, as
/// the provider treats message content).
///
/// Never fails: if the vocabulary could not be loaded (a build defect; see [`try_count`]) it
/// returns `text.len()`, the number of bytes, which is an upper bound of the token count (every
/// token is at least one byte), so budgets stay safe.
pub fn count(encoding: Encoding, text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    match tokenizer(encoding) {
        Ok(t) => t.count(text),
        Err(_) => text.len(),
    }
}

/// Exact number of tokens of `text`, or the `INTERNAL` error if the vocabulary cannot be loaded.
pub fn try_count(encoding: Encoding, text: &str) -> Result<usize> {
    if text.is_empty() {
        return Ok(0);
    }
    Ok(tokenizer(encoding)?.count(text))
}

/// Exact number of tokens if it is at most `limit`, else `None`; stops early once the limit is
/// exceeded. Never fails: without a vocabulary it uses the byte-count upper bound as [`count`]
/// does (so it may say `None` for a text that would fit).
pub fn count_till_limit(encoding: Encoding, text: &str, limit: usize) -> Option<usize> {
    match tokenizer(encoding) {
        Ok(t) => t.count_till_limit(text, limit),
        Err(_) => Some(text.len()).filter(|&n| n <= limit),
    }
}

/// Fallible form of [`count_till_limit`].
pub fn try_count_till_limit(encoding: Encoding, text: &str, limit: usize) -> Result<Option<usize>> {
    Ok(tokenizer(encoding)?.count_till_limit(text, limit))
}

/// Token ids of `text` (equal to tiktoken-rs's `encode_ordinary`).
pub fn encode(encoding: Encoding, text: &str) -> Result<Vec<u32>> {
    Ok(tokenizer(encoding)?.encode(text))
}

/// Text of token ids (lossy: invalid UTF-8 and unknown ids become U+FFFD).
pub fn decode(encoding: Encoding, ids: &[u32]) -> Result<String> {
    Ok(tokenizer(encoding)?.decode(ids))
}

/// See [`Tokenizer::head_offset`].
pub fn head_offset(encoding: Encoding, text: &str, n: usize) -> Result<usize> {
    Ok(tokenizer(encoding)?.head_offset(text, n))
}

/// See [`Tokenizer::tail_offset`].
pub fn tail_offset(encoding: Encoding, text: &str, n: usize) -> Result<usize> {
    Ok(tokenizer(encoding)?.tail_offset(text, n))
}

/// See [`Tokenizer::fit_head`].
pub fn fit_head(encoding: Encoding, text: &str, n: usize) -> Result<usize> {
    Ok(tokenizer(encoding)?.fit_head(text, n))
}

/// See [`Tokenizer::fit_tail`].
pub fn fit_tail(encoding: Encoding, text: &str, n: usize) -> Result<usize> {
    Ok(tokenizer(encoding)?.fit_tail(text, n))
}
