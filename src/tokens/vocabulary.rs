//! A loadable vocabulary as read from a file (`bundle`, `hf`), before `loaded` builds its
//! tokenizer, and the names the package's files answer to (docs/vocabularies.md).

use std::hash::Hasher;

use rustc_hash::FxHasher;

use super::Encoding;

/// Which pre-tokenizer split a vocabulary uses (the pattern id of the file format, `bundle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Split {
    /// tiktoken's cl100k_base pattern (possessive form).
    Cl100k = 1,
    /// o200k_base's (gpt-oss's `tokenizer.json` has exactly this regex).
    O200k = 2,
    /// Llama 3's: the cl100k pattern as first published (`\s*[\r\n]+|\s+(?!\S)|\s+` at the end;
    /// it differs from tiktoken's current cl100k pattern on trailing whitespace after a line break).
    Llama3 = 3,
    /// Qwen 2/3's: Llama 3's with single digits (`\p{N}`).
    Qwen2 = 4,
    /// DeepSeek V3's: digits in threes, then CJK/kana runs, then a cl100k-like pattern, each
    /// split keeping the text between matches.
    DeepseekV3 = 5,
    /// Tekken's: o200k's without the contractions, single digits.
    Tekken = 6,
}

impl Split {
    pub fn from_id(id: u8) -> Option<Split> {
        [Split::Cl100k, Split::O200k, Split::Llama3, Split::Qwen2, Split::DeepseekV3, Split::Tekken]
            .into_iter()
            .find(|s| *s as u8 == id)
    }

    pub fn name(self) -> &'static str {
        match self {
            Split::Cl100k => "cl100k",
            Split::O200k => "o200k",
            Split::Llama3 => "llama3",
            Split::Qwen2 => "qwen2",
            Split::DeepseekV3 => "deepseek-v3",
            Split::Tekken => "tekken",
        }
    }

    /// The encoding a vocabulary with this split registers as.
    pub fn encoding(self) -> Option<Encoding> {
        match self {
            Split::Llama3 => Some(Encoding::Llama3),
            Split::Qwen2 => Some(Encoding::Qwen2),
            Split::DeepseekV3 => Some(Encoding::DeepseekV3),
            Split::Tekken => Some(Encoding::MistralTekken),
            Split::Cl100k | Split::O200k => None,
        }
    }
}

/// An added token of a vocabulary.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Added {
    pub id: u32,
    pub content: String,
    /// Hugging Face's `special` flag (both kinds are matched in text).
    pub special: bool,
}

/// A vocabulary as read from a file, before its tokenizer is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vocabulary {
    /// The vocabulary's name (`llama3`, `qwen3`, `deepseek-v3`, `mistral-tekken`).
    pub name: String,
    pub split: Split,
    /// Token bytes in rank order: rank `r` is `bytes[starts[r]..starts[r + 1]]` (empty: not an
    /// ordinary token). Rank = token id.
    pub bytes: Vec<u8>,
    pub starts: Vec<u32>,
    pub added: Vec<Added>,
    /// Whether added tokens in text are one token each (Hugging Face), or ordinary text (Tekken).
    pub match_added: bool,
    /// Whether the tokenizer puts text in NFC first.
    pub nfc: bool,
    /// The NFC tables (`nfc.rs` format), when the file carries them.
    pub nfc_tables: Option<Vec<u8>>,
    /// Where the data came from (package, file, digest), for `loadVocabulary`'s answer.
    pub source: String,
}

impl Vocabulary {
    pub fn encoding(&self) -> Option<Encoding> {
        self.split.encoding()
    }

    /// Number of ranks (ordinary token ids, including unused ones).
    pub fn rank_count(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    /// Token bytes of every rank (empty where there is none).
    pub fn tokens(&self) -> Vec<Vec<u8>> {
        self.starts
            .windows(2)
            .map(|w| match w {
                [a, b] => self.bytes.get(*a as usize..*b as usize).unwrap_or_default().to_vec(),
                _ => Vec::new(),
            })
            .collect()
    }

    /// A digest of everything that changes counts (two loads of the same vocabulary are equal).
    pub(crate) fn digest(&self) -> u64 {
        let mut h = FxHasher::default();
        h.write(&self.bytes);
        for s in &self.starts {
            h.write_u32(*s);
        }
        for a in &self.added {
            h.write_u32(a.id);
            h.write(a.content.as_bytes());
        }
        h.write_u8(self.split as u8);
        h.write_u8(u8::from(self.match_added) | u8::from(self.nfc) << 1);
        h.finish()
    }
}

/// The vocabulary files the package ships (pkg/vocab/<name>.bin) and the names they answer to.
pub const VOCABULARIES: &[(&str, Encoding, &[&str])] = &[
    ("llama3", Encoding::Llama3, &["llama-3", "llama3.1", "llama3.2", "llama3.3", "llama"]),
    ("qwen3", Encoding::Qwen2, &["qwen2", "qwen2.5", "qwen-2.5", "qwen", "qwq"]),
    ("deepseek-v3", Encoding::DeepseekV3, &["deepseek", "deepseek-r1", "deepseek-v3.1"]),
    ("mistral-tekken", Encoding::MistralTekken, &["tekken", "mistral-nemo"]),
    ("mistral-spm-v3", Encoding::MistralSpmV3, &["mistral-large-2407", "codestral-2405", "mixtral-8x22b"]),
    ("mistral-spm-v7", Encoding::MistralSpmV7, &["mistral-large-2411", "pixtral-large-2411"]),
];

/// The vocabulary file of a name or alias (case-insensitive): `llama3`, `qwen3`, `deepseek-v3`,
/// `mistral-tekken`, `mistral-spm-v3`, `mistral-spm-v7`, or `None`.
pub fn vocabulary_file(name: &str) -> Option<&'static str> {
    let n = name.trim().to_ascii_lowercase();
    VOCABULARIES.iter().find(|(file, _, aliases)| *file == n || aliases.contains(&n.as_str())).map(|(f, _, _)| *f)
}

/// The vocabulary file that makes `encoding` exact (`None` for the built-in encodings).
pub fn vocabulary_of(encoding: Encoding) -> Option<&'static str> {
    VOCABULARIES.iter().find(|(_, e, _)| *e == encoding).map(|(f, _, _)| *f)
}
