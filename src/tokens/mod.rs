//! Token counting for the OpenAI encodings (SPEC §3).
//!
//! `count(encoding, text)` is exact: it equals `tiktoken-rs`'s `encode_ordinary(text).len()`.

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorCode, Result};

/// The encodings ctxguard ships.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Encoding {
    #[serde(rename = "o200k_base")]
    O200kBase,
    #[serde(rename = "cl100k_base")]
    Cl100kBase,
}

impl Encoding {
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }

    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "o200k_base" => Ok(Encoding::O200kBase),
            "cl100k_base" => Ok(Encoding::Cl100kBase),
            other => Err(Error::new(
                ErrorCode::UnknownEncoding,
                format!("unknown encoding {other:?}; ctxguard ships \"o200k_base\" and \"cl100k_base\""),
            )),
        }
    }
}

/// Exact number of tokens of `text` (no special tokens are recognized: text is ordinary text, as
/// the provider treats message content).
pub fn count(encoding: Encoding, text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    let bpe = match encoding {
        Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
        Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
    };
    bpe.encode_ordinary(text).len()
}
