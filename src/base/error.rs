//! The one error type of the core. Every variant has a stable SCREAMING_SNAKE `code` that the
//! binding layer copies onto the JS `Error` it throws.

use std::fmt;

/// What went wrong, with a stable code and a human message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub code: ErrorCode,
    pub message: String,
    /// Index of the offending message in the caller's list, when there is one.
    pub index: Option<usize>,
}

/// Stable error codes. Never renumber or rename: hosts match on `err.code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// The options object or config has the wrong shape, an unknown field, or a bad value.
    InvalidOptions,
    /// The messages argument is not an array of messages.
    InvalidMessages,
    /// One message is malformed (see `index`).
    InvalidMessage,
    /// A role the format does not know.
    InvalidRole,
    /// A content part of a kind or shape the format does not know.
    InvalidContentPart,
    /// A tool call or tool definition is malformed.
    InvalidTool,
    /// An encoding name ctxguard does not ship.
    UnknownEncoding,
    /// A format name other than `openai`, `anthropic`, `ai-sdk`, `openai-responses`, `gemini`.
    UnknownFormat,
    /// The model is not in the table and no limits were given.
    UnknownModel,
    /// Budget numbers that cannot work together (window smaller than the reserve, ratios out of order...).
    InvalidBudget,
    /// A text argument was not a string.
    InvalidText,
    /// `readAttachment` was asked for an id the source does not hold.
    UnknownAttachment,
    /// The latest user message alone (with the system messages) does not fit the usable limit.
    LatestMessageTooLarge,
    /// Counting with a loadable encoding (`llama3`, `qwen2`, `deepseek-v3`, `mistral-tekken`,
    /// `mistral-spm-v3`, `mistral-spm-v7`) named explicitly before its vocabulary was loaded
    /// (`loadVocabulary`).
    VocabularyNotLoaded,
    /// `loadVocabulary` was given a name that is no vocabulary, alias or model with one.
    UnknownVocabulary,
    /// Vocabulary bytes that are neither ctxguard's format nor a tokenizer file, or are damaged.
    InvalidVocabulary,
    /// A tokenizer file ctxguard cannot count exactly (its pre-tokenizer, normalizer or model);
    /// the message names what is unsupported.
    UnsupportedVocabulary,
    /// Another vocabulary of the same encoding is already loaded in this module.
    VocabularyConflict,
    /// Something that should never happen; reported rather than trapping.
    Internal,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidOptions => "INVALID_OPTIONS",
            ErrorCode::InvalidMessages => "INVALID_MESSAGES",
            ErrorCode::InvalidMessage => "INVALID_MESSAGE",
            ErrorCode::InvalidRole => "INVALID_ROLE",
            ErrorCode::InvalidContentPart => "INVALID_CONTENT_PART",
            ErrorCode::InvalidTool => "INVALID_TOOL",
            ErrorCode::UnknownEncoding => "UNKNOWN_ENCODING",
            ErrorCode::UnknownFormat => "UNKNOWN_FORMAT",
            ErrorCode::UnknownModel => "UNKNOWN_MODEL",
            ErrorCode::InvalidBudget => "INVALID_BUDGET",
            ErrorCode::InvalidText => "INVALID_TEXT",
            ErrorCode::UnknownAttachment => "UNKNOWN_ATTACHMENT",
            ErrorCode::LatestMessageTooLarge => "LATEST_MESSAGE_TOO_LARGE",
            ErrorCode::VocabularyNotLoaded => "VOCABULARY_NOT_LOADED",
            ErrorCode::UnknownVocabulary => "UNKNOWN_VOCABULARY",
            ErrorCode::InvalidVocabulary => "INVALID_VOCABULARY",
            ErrorCode::UnsupportedVocabulary => "UNSUPPORTED_VOCABULARY",
            ErrorCode::VocabularyConflict => "VOCABULARY_CONFLICT",
            ErrorCode::Internal => "INTERNAL",
        }
    }
}

impl Error {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error { code, message: message.into(), index: None }
    }

    /// An error about the message at `index` of the caller's list.
    pub fn at(code: ErrorCode, index: usize, message: impl Into<String>) -> Self {
        Error { code, message: format!("messages[{index}]: {}", message.into()), index: Some(index) }
    }

    pub fn options(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::InvalidOptions, message)
    }

    pub fn budget(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::InvalidBudget, message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
