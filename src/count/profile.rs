//! How a model's requests are counted: provider family, encoding, estimate factor, per-message
//! framing, the image rule and the tool-definition rule.
//!
//! A `Profile` is plain data. The model table (owned elsewhere) picks one of the constructors and
//! may override any field.

use serde::{Deserialize, Serialize};

use super::image::ImageRule;
use crate::tokens::Encoding;

/// The provider family of a model (the model table's rows, the counting rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    Openai,
    Anthropic,
    Google,
    Meta,
    Alibaba,
    Deepseek,
    Mistral,
    Other,
}

/// Whether a count matches what the provider bills (`exact`) or is a calibrated estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CountKind {
    Exact,
    Estimate,
}

/// Per-message framing constants, in final (already estimated) tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Framing {
    /// Tokens every message costs (`<|start|>{role}<|message|>...<|end|>`: 3 on OpenAI).
    pub per_message: usize,
    /// Whether the role string itself is tokenized and added (OpenAI: yes).
    pub count_role: bool,
    /// Extra tokens when a message has a `name` (OpenAI: 1, plus the name's own tokens).
    pub per_name: usize,
    /// Tokens added once per request for the reply priming (`<|start|>assistant<|message|>`: 3).
    pub reply_priming: usize,
    /// Extra tokens per assistant tool call on top of its name and arguments.
    pub per_tool_call: usize,
}

/// How tool (function) definitions are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ToolRule {
    /// OpenAI: the definitions are rendered into a TypeScript-like `namespace functions { ... }`
    /// block merged into the system message (see `count::tools`). `nested_descriptions`: whether
    /// descriptions of properties inside nested objects are rendered. The 2023 `functions`
    /// figures (gpt-3.5-turbo-0613, hmarr/openai-chat-tokens) only match without them; the 2024
    /// `tools` figures (pamelafox/openai-messages-token-helper) only come close with them.
    /// `Profile::openai` renders them (the safe side: never fewer tokens).
    OpenaiNamespace { nested_descriptions: bool },
    /// Estimated providers: the compact JSON of `{name, description, input_schema}` per tool,
    /// times the estimate factor, plus a fixed tool-use system prompt added once when any tool is
    /// present.
    JsonSchema { system_prompt_tokens: usize },
    /// Gemini with its own tokenizer: the texts Google's local tokenizer takes from function
    /// declarations (name, description, schema texts), each counted on its own (`count::gemini`).
    GeminiDeclarations,
}

/// The `tool_choice` (or legacy `function_call`) of a request; it changes OpenAI's count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub enum ToolChoice {
    /// `"auto"` or absent: no extra tokens.
    #[default]
    Auto,
    /// `"none"`: +1 (openai-chat-tokens, API-verified).
    None,
    /// `"required"`: no published figure; counted like a forced tool without a name (+7).
    Required,
    /// `{"type":"function","function":{"name":...}}` with `tools`: +7 + name tokens
    /// (openai-messages-token-helper, API-verified).
    Named(String),
    /// Legacy `function_call: {"name": ...}` with `functions`: +4 + name tokens
    /// (openai-chat-tokens, API-verified).
    NamedFunction(String),
}

/// How a model's requests are counted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Profile {
    pub provider: Provider,
    pub accuracy: CountKind,
    /// Encoding used for text. Estimated profiles count with `o200k_base` and multiply.
    pub encoding: Encoding,
    /// Multiplier applied (then rounded up) to text-derived tokens: 1.0 for exact OpenAI models,
    /// above 1 for models without a public tokenizer. Non-finite or non-positive values count as 1.
    pub estimate_factor: f64,
    pub framing: Framing,
    pub image_rule: ImageRule,
    pub tool_rule: ToolRule,
    /// Tokens charged for a file part without extracted text (a PDF the provider reads itself),
    /// on top of its name. ctxguard cannot look inside the file, so this is a flat allowance.
    pub opaque_file_tokens: usize,
    /// Tokens charged for an audio part whose payload size is unknown.
    pub opaque_audio_tokens: usize,
    /// The model's own chat template, counted exactly (`count::template`): the open-weight
    /// families with a loaded vocabulary, and gpt-oss. `None`: the framing above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<super::template::Template>,
    /// Every system message of a request reaches the model joined into one system text
    /// (Anthropic's `system` parameter, a blank line between texts): only the first carries the
    /// per-message framing (`count::join_system`).
    #[serde(default)]
    pub system_joined: bool,
}

/// OpenAI's framing (OpenAI cookbook "How to count tokens with tiktoken": 3 per message, +1 per
/// name, 3 for the reply priming; 3 per function call from openai-chat-tokens).
pub const OPENAI_FRAMING: Framing =
    Framing { per_message: 3, count_role: true, per_name: 1, reply_priming: 3, per_tool_call: 3 };

/// Tool-use system prompt Anthropic adds when `tools` is present, for `tool_choice` auto/none on
/// Claude 3.5 Sonnet and later (Anthropic docs, "Tool use: pricing"). The older Claude 3 table
/// lists up to 530 (Claude 3 Opus, auto); override the field for those models.
pub const ANTHROPIC_TOOL_SYSTEM_PROMPT: usize = 346;

/// Allowance for the tool preamble open-weight chat templates add (the Qwen2.5 / Llama 3.1
/// templates' tool instructions are about 100 tokens), with a margin.
pub const GENERIC_TOOL_SYSTEM_PROMPT: usize = 120;

/// A file the provider reads itself (a PDF without host-extracted text): ctxguard cannot see its
/// pages, so one text-heavy page is charged, with margin. Providers bill a PDF page as its text
/// plus a page image; public measurements on Claude put a text page at about 2,100-2,500
/// tokens. Multi-page files are under-counted: hosts should supply the extracted `text`, which
/// is then counted exactly.
pub const OPAQUE_FILE_TOKENS: usize = 3_000;

/// An audio part without a readable payload: about 100 s of audio at OpenAI's ~10 tokens/s.
pub const OPAQUE_AUDIO_TOKENS: usize = 1_000;

impl Profile {
    /// Exact OpenAI counting with the given text encoding and image rule.
    pub fn openai(encoding: Encoding, image_rule: ImageRule) -> Self {
        Profile {
            provider: Provider::Openai,
            accuracy: CountKind::Exact,
            encoding,
            estimate_factor: 1.0,
            framing: OPENAI_FRAMING,
            image_rule,
            tool_rule: ToolRule::OpenaiNamespace { nested_descriptions: true },
            opaque_file_tokens: OPAQUE_FILE_TOKENS,
            opaque_audio_tokens: OPAQUE_AUDIO_TOKENS,
            template: None,
            system_joined: false,
        }
    }

    /// Claude: no public tokenizer. Text is counted with `o200k_base` times `factor`; images by
    /// pixel area; tools as JSON plus Anthropic's tool-use system prompt.
    pub fn anthropic_estimate(factor: f64) -> Self {
        // Claude's turn markers are not published: the generic estimate's framing (the OpenAI
        // shape plus one for the role; 12 per `tool_use` block) and pixel-area images.
        Profile {
            provider: Provider::Anthropic,
            tool_rule: ToolRule::JsonSchema { system_prompt_tokens: ANTHROPIC_TOOL_SYSTEM_PROMPT },
            system_joined: true,
            ..Profile::generic_estimate(factor)
        }
    }

    /// Gemini with its own tokenizer (`gemma3`, Cargo feature `gemini`): Google's local
    /// tokenizer's rules (`count::gemini`): text exact, no framing, no reply priming; media by
    /// `image_rule` and the per-second rates.
    pub fn gemini_exact(image_rule: ImageRule) -> Self {
        Profile {
            provider: Provider::Google,
            accuracy: CountKind::Exact,
            encoding: Encoding::Gemma3,
            estimate_factor: 1.0,
            framing: Framing { per_message: 0, count_role: false, per_name: 0, reply_priming: 0, per_tool_call: 0 },
            image_rule,
            tool_rule: ToolRule::GeminiDeclarations,
            opaque_file_tokens: OPAQUE_FILE_TOKENS,
            opaque_audio_tokens: OPAQUE_AUDIO_TOKENS,
            template: None,
            system_joined: false,
        }
    }

    /// Gemini: estimated like Claude, images by Gemini's 258-token tiles, no tool preamble.
    pub fn gemini_estimate(factor: f64) -> Self {
        Profile {
            provider: Provider::Google,
            image_rule: ImageRule::GeminiTiles,
            tool_rule: ToolRule::JsonSchema { system_prompt_tokens: 0 },
            ..Profile::generic_estimate(factor)
        }
    }

    /// Any other model (Llama, Qwen, DeepSeek...): text with `o200k_base` times `factor`, images by
    /// pixel area (capped like Claude's, 1640), tools as JSON plus a chat-template allowance.
    pub fn generic_estimate(factor: f64) -> Self {
        Profile {
            provider: Provider::Other,
            accuracy: CountKind::Estimate,
            encoding: Encoding::O200kBase,
            estimate_factor: factor,
            framing: Framing { per_message: 4, count_role: false, per_name: 0, reply_priming: 3, per_tool_call: 12 },
            image_rule: ImageRule::AnthropicPixels,
            tool_rule: ToolRule::JsonSchema { system_prompt_tokens: GENERIC_TOOL_SYSTEM_PROMPT },
            opaque_file_tokens: OPAQUE_FILE_TOKENS,
            opaque_audio_tokens: OPAQUE_AUDIO_TOKENS,
            template: None,
            system_joined: false,
        }
    }

    /// Exact counting with a model's own chat template and its vocabulary: text as the
    /// tokenizer counts it, the framing as the template renders it (`count::template`); images,
    /// files and audio as the estimate counts them.
    pub fn template(provider: Provider, encoding: Encoding, template: super::template::Template) -> Self {
        Profile {
            provider,
            accuracy: CountKind::Exact,
            encoding,
            estimate_factor: 1.0,
            framing: Framing { per_message: 0, count_role: false, per_name: 0, reply_priming: 0, per_tool_call: 0 },
            template: Some(template),
            ..Profile::generic_estimate(1.0)
        }
    }

    /// The factor actually applied: 1 when the configured one is not a usable number.
    pub fn effective_factor(&self) -> f64 {
        if self.estimate_factor.is_finite() && self.estimate_factor > 0.0 {
            self.estimate_factor
        } else {
            1.0
        }
    }

    /// Scale a raw text-token count by the estimate factor, rounding up.
    pub fn scale(&self, raw: usize) -> usize {
        let f = self.effective_factor();
        if f == 1.0 || raw == 0 {
            return raw;
        }
        // `as` saturates for out-of-range floats; counts are far below f64's exact range.
        (raw as f64 * f).ceil() as usize
    }
}
