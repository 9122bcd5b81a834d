//! The table of known models: how their tokens are counted and their limits (docs/design.md, "Token counting", "Budget").
//!
//! Limits are the providers' published figures as of 2026-11; every one can be overridden in the
//! guard config. Estimate factors multiply an `o200k_base` count for models whose tokenizer is
//! not public in the browser; each is a rough ratio to o200k times a safety margin
//! (documented in README "Defaults"), later refined by observed usage.
//!
//! Gemini 2.0, 2.5 and 3 (Pro and Flash) count with `gemma3`, the SentencePiece model
//! google-genai's local tokenizer pins for them, in a build that has it (`ctxguard/gemini`): those
//! rows say `gemma3` and exact, and their factor is the one used in a build without the
//! vocabulary, where they stay the o200k estimate (docs/gemini-tokenizer.md).

use serde::Serialize;

use crate::format::Format;
use crate::tokens::Encoding;

pub use crate::count::{CountKind, Provider};

/// One row of the table. `prefix` matches the start of a model name (longest prefix wins), so
/// dated snapshots (`gpt-4o-2024-08-06`) and provider-prefixed names (`openai/gpt-4o`) resolve.
#[derive(Debug, Clone, Copy)]
pub struct ModelSpec {
    pub prefix: &'static str,
    pub provider: Provider,
    pub encoding: Encoding,
    pub kind: CountKind,
    pub estimate_factor: f64,
    pub context_window: u32,
    pub max_output_tokens: u32,
}

/// What a model name resolves to, as JS sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    pub model: String,
    pub known: bool,
    pub provider: Provider,
    pub encoding: Encoding,
    pub kind: CountKind,
    #[serde(serialize_with = "crate::base::round::ser_round")]
    pub estimate_factor: f64,
    pub context_window: Option<u32>,
    pub max_output_tokens: Option<u32>,
    pub format: Format,
    /// Claude's preserved thinking: every thinking block is bound to the request that produced
    /// it (docs/edits.md, "Preserved thinking").
    pub preserved_thinking: bool,
    /// The vocabulary that counts this model exactly when loaded (`loadVocabulary`): `llama3`,
    /// `qwen3`, `deepseek-v3`, `mistral-tekken`, `mistral-spm-v3` or `mistral-spm-v7`; `null` for models counted with a built-in
    /// encoding or without a public tokenizer. Until it is loaded the model's counts are the
    /// o200k estimate (`kind: "estimate"`), after that `kind` is `exact`.
    pub vocabulary: Option<&'static str>,
}

const O: Encoding = Encoding::O200kBase;
const C: Encoding = Encoding::Cl100kBase;
const G: Encoding = Encoding::Gemma3;
/// Loaded at run time (docs/vocabularies.md): exact once loaded, the row's estimate before.
const L3: Encoding = Encoding::Llama3;
const Q2: Encoding = Encoding::Qwen2;
const DS: Encoding = Encoding::DeepseekV3;
const TK: Encoding = Encoding::MistralTekken;
const S3: Encoding = Encoding::MistralSpmV3;
const S7: Encoding = Encoding::MistralSpmV7;
const X: CountKind = CountKind::Exact;
const E: CountKind = CountKind::Estimate;

/// Ratio to o200k × (1 + margin), per family. See README "Defaults" for the reasoning.
///
/// Claude's: measured against an offline reconstruction of Claude's tokenizers
/// (docs/claude-estimate.md). Claude 3 to Opus 4.6: English prose, source code and JSON run at
/// 1.11-1.26 × o200k, so 1.20 × 1.10 leaves no kind of them undercounted (the closest, Rust
/// source, +5.8 %) and single messages at most 4 % under. Opus 4.7 and later count with a new
/// tokenizer at 1.19-1.60 × o200k on the same texts: 1.50 × 1.10 (the closest kind +3.0 %, single
/// messages at most 12 % under). Other languages than English run higher still (German 1.5,
/// Korean 1.9, Arabic 2.2 × o200k with the older tokenizer): calibration corrects those.
pub const FACTOR_ANTHROPIC: f64 = 1.20 * 1.10;
/// Claude Opus 4.7 and later (the tokenizer introduced with Opus 4.7).
pub const FACTOR_ANTHROPIC_V4_7: f64 = 1.50 * 1.10;
pub const FACTOR_GOOGLE: f64 = 1.05 * 1.10;
pub const FACTOR_META: f64 = 1.05 * 1.10;
pub const FACTOR_ALIBABA: f64 = 1.05 * 1.10;
pub const FACTOR_DEEPSEEK: f64 = 1.10 * 1.10;
pub const FACTOR_MISTRAL: f64 = 1.15 * 1.10;
/// Mistral's SentencePiece models (32,768 pieces) until their vocabulary is loaded: 1.08-1.15 ×
/// o200k on prose and CJK, 1.23-1.28 on source code, 1.37 on minified JSON, 1.4 on runs of
/// spaces and letters (the corpus of tests/tokens/mistral_reference.json), so 1.30 × 1.10.
pub const FACTOR_MISTRAL_SPM: f64 = 1.30 * 1.10;
/// Unknown models: o200k × 1.25.
pub const FACTOR_UNKNOWN: f64 = 1.25;

const fn m(
    prefix: &'static str,
    provider: Provider,
    encoding: Encoding,
    kind: CountKind,
    estimate_factor: f64,
    context_window: u32,
    max_output_tokens: u32,
) -> ModelSpec {
    ModelSpec { prefix, provider, encoding, kind, estimate_factor, context_window, max_output_tokens }
}

use Provider::*;

/// The built-in table. Longest matching prefix wins.
pub static MODELS: &[ModelSpec] = &[
    // OpenAI — o200k_base
    m("gpt-5", Openai, O, X, 1.0, 400_000, 128_000),
    m("gpt-5-chat", Openai, O, X, 1.0, 128_000, 16_384),
    m("gpt-4.1", Openai, O, X, 1.0, 1_047_576, 32_768),
    m("gpt-4.5", Openai, O, X, 1.0, 128_000, 16_384),
    m("gpt-4o", Openai, O, X, 1.0, 128_000, 16_384),
    m("gpt-4o-2024-05-13", Openai, O, X, 1.0, 128_000, 4_096),
    m("chatgpt-4o", Openai, O, X, 1.0, 128_000, 16_384),
    m("o1", Openai, O, X, 1.0, 200_000, 100_000),
    m("o1-mini", Openai, O, X, 1.0, 128_000, 65_536),
    m("o1-preview", Openai, O, X, 1.0, 128_000, 32_768),
    m("o3", Openai, O, X, 1.0, 200_000, 100_000),
    m("o4-mini", Openai, O, X, 1.0, 200_000, 100_000),
    // gpt-oss: its tokenizer is o200k_base (the same 199,998 ranks and pattern; plus the
    // harmony format's special tokens), its messages the harmony format (count::template).
    m("gpt-oss", Openai, O, X, 1.0, 131_072, 32_768),
    // OpenAI — cl100k_base
    m("gpt-4", Openai, C, X, 1.0, 8_192, 8_192),
    m("gpt-4-32k", Openai, C, X, 1.0, 32_768, 32_768),
    m("gpt-4-turbo", Openai, C, X, 1.0, 128_000, 4_096),
    m("gpt-4-1106", Openai, C, X, 1.0, 128_000, 4_096),
    m("gpt-4-0125", Openai, C, X, 1.0, 128_000, 4_096),
    m("gpt-3.5-turbo", Openai, C, X, 1.0, 16_385, 4_096),
    m("gpt-3.5-turbo-instruct", Openai, C, X, 1.0, 4_096, 4_096),
    // Anthropic — estimate
    m("claude-opus-4", Anthropic, O, E, FACTOR_ANTHROPIC, 200_000, 32_000),
    m("claude-opus-4-5", Anthropic, O, E, FACTOR_ANTHROPIC, 200_000, 64_000),
    // The newer tokenizer: the same limits these names resolved to before (claude-opus-4, claude).
    m("claude-opus-4-7", Anthropic, O, E, FACTOR_ANTHROPIC_V4_7, 200_000, 32_000),
    m("claude-opus-4-8", Anthropic, O, E, FACTOR_ANTHROPIC_V4_7, 200_000, 32_000),
    m("claude-opus-5", Anthropic, O, E, FACTOR_ANTHROPIC_V4_7, 200_000, 8_192),
    m("claude-sonnet-5", Anthropic, O, E, FACTOR_ANTHROPIC_V4_7, 200_000, 8_192),
    // Claude 5.x with preserved thinking (docs/edits.md): 1M context, 128K output on every one
    // (Anthropic's model pages). Their factor is the newest measured tokenizer's until one of
    // their own is measured (docs/claude-estimate.md).
    m("claude-fable-5", Anthropic, O, E, FACTOR_ANTHROPIC_V4_7, 1_000_000, 128_000),
    m("claude-mythos-5", Anthropic, O, E, FACTOR_ANTHROPIC_V4_7, 1_000_000, 128_000),
    m("claude-opus-5-5", Anthropic, O, E, FACTOR_ANTHROPIC_V4_7, 1_000_000, 128_000),
    m("claude-sonnet-5-5", Anthropic, O, E, FACTOR_ANTHROPIC_V4_7, 1_000_000, 128_000),
    m("claude-haiku-5-5", Anthropic, O, E, FACTOR_ANTHROPIC_V4_7, 1_000_000, 128_000),
    m("claude-sonnet-4", Anthropic, O, E, FACTOR_ANTHROPIC, 200_000, 64_000),
    m("claude-haiku-4", Anthropic, O, E, FACTOR_ANTHROPIC, 200_000, 64_000),
    m("claude-3-7-sonnet", Anthropic, O, E, FACTOR_ANTHROPIC, 200_000, 64_000),
    m("claude-3-5-sonnet", Anthropic, O, E, FACTOR_ANTHROPIC, 200_000, 8_192),
    m("claude-3-5-haiku", Anthropic, O, E, FACTOR_ANTHROPIC, 200_000, 8_192),
    m("claude-3-opus", Anthropic, O, E, FACTOR_ANTHROPIC, 200_000, 4_096),
    m("claude-3-haiku", Anthropic, O, E, FACTOR_ANTHROPIC, 200_000, 4_096),
    m("claude", Anthropic, O, E, FACTOR_ANTHROPIC, 200_000, 8_192),
    // Google — gemma3, exact where the build has it (the models google-genai 3.6's local tokenizer
    // maps to gemma3: 2.0, 2.5, 3 Pro/Flash); the factor is the estimate's without it.
    m("gemini-2.5", Google, G, X, FACTOR_GOOGLE, 1_048_576, 65_536),
    m("gemini-3", Google, G, X, FACTOR_GOOGLE, 1_048_576, 65_536),
    m("gemini-2.0", Google, G, X, FACTOR_GOOGLE, 1_048_576, 8_192),
    // Google — estimate: google-genai maps 3.1 and 3.5 to a Gemma 4 tokenizer it loads from
    // Hugging Face (not in ctxguard), and 1.x to older models.
    m("gemini-3.1", Google, O, E, FACTOR_GOOGLE, 1_048_576, 65_536),
    m("gemini-3.5", Google, O, E, FACTOR_GOOGLE, 1_048_576, 65_536),
    m("gemini-1.5-pro", Google, O, E, FACTOR_GOOGLE, 2_097_152, 8_192),
    m("gemini-1.5-flash", Google, O, E, FACTOR_GOOGLE, 1_048_576, 8_192),
    m("gemini", Google, O, E, FACTOR_GOOGLE, 1_048_576, 8_192),
    // Meta — Llama 3.x: exact once the llama3 vocabulary is loaded (windows vary by host; 3.0
    // has 8K, 3.1 and later 128K). Spelled as OpenRouter / Groq / Together (`llama-3.1-…`),
    // ollama (`llama3.1:8b`), Hugging Face (`Meta-Llama-3.1-8B-Instruct`) and Bedrock
    // (`meta.llama3-1-…`) write them.
    m("llama-3", Meta, L3, X, FACTOR_META, 8_192, 8_192),
    m("llama-3.1", Meta, L3, X, FACTOR_META, 131_072, 8_192),
    m("llama-3.2", Meta, L3, X, FACTOR_META, 131_072, 8_192),
    m("llama-3.3", Meta, L3, X, FACTOR_META, 131_072, 8_192),
    m("llama3", Meta, L3, X, FACTOR_META, 8_192, 8_192),
    m("llama3.1", Meta, L3, X, FACTOR_META, 131_072, 8_192),
    m("llama3.2", Meta, L3, X, FACTOR_META, 131_072, 8_192),
    m("llama3.3", Meta, L3, X, FACTOR_META, 131_072, 8_192),
    m("meta-llama-3", Meta, L3, X, FACTOR_META, 8_192, 8_192),
    m("meta-llama-3.1", Meta, L3, X, FACTOR_META, 131_072, 8_192),
    m("meta.llama3", Meta, L3, X, FACTOR_META, 8_192, 8_192),
    m("meta.llama3-1", Meta, L3, X, FACTOR_META, 131_072, 8_192),
    m("meta.llama3-2", Meta, L3, X, FACTOR_META, 131_072, 8_192),
    m("meta.llama3-3", Meta, L3, X, FACTOR_META, 131_072, 8_192),
    // Llama 4 has another tokenizer (not public in a registry package): estimate.
    m("llama-4", Meta, O, E, FACTOR_META, 1_048_576, 8_192),
    m("llama", Meta, O, E, FACTOR_META, 131_072, 8_192),
    // Alibaba — Qwen 2, 2.5, QwQ and 3 share one BPE (qwen2): exact once qwen3 is loaded.
    // Qwen's API models (qwen-max, -plus, -turbo) stay estimates.
    m("qwen", Alibaba, O, E, FACTOR_ALIBABA, 131_072, 8_192),
    m("qwen3", Alibaba, Q2, X, FACTOR_ALIBABA, 131_072, 32_768),
    m("qwen2", Alibaba, Q2, X, FACTOR_ALIBABA, 32_768, 8_192),
    m("qwen2.5", Alibaba, Q2, X, FACTOR_ALIBABA, 32_768, 8_192),
    m("qwen-2.5", Alibaba, Q2, X, FACTOR_ALIBABA, 32_768, 8_192),
    m("qwq", Alibaba, Q2, X, FACTOR_ALIBABA, 131_072, 32_768),
    m("qwen-max", Alibaba, O, E, FACTOR_ALIBABA, 32_768, 8_192),
    m("qwen-turbo", Alibaba, O, E, FACTOR_ALIBABA, 1_000_000, 8_192),
    // DeepSeek — V3 and R1 (and the API names that served them): exact once deepseek-v3 is
    // loaded. DeepSeek V4 (the API's models since 2026-04) has a tokenizer not checked here.
    m("deepseek-chat", Deepseek, DS, X, FACTOR_DEEPSEEK, 128_000, 8_192),
    m("deepseek-reasoner", Deepseek, DS, X, FACTOR_DEEPSEEK, 128_000, 65_536),
    m("deepseek-v3", Deepseek, DS, X, FACTOR_DEEPSEEK, 131_072, 8_192),
    m("deepseek-r1", Deepseek, DS, X, FACTOR_DEEPSEEK, 131_072, 32_768),
    m("deepseek-v4", Deepseek, O, E, FACTOR_DEEPSEEK, 1_000_000, 393_216),
    m("deepseek", Deepseek, O, E, FACTOR_DEEPSEEK, 128_000, 8_192),
    // The R1 distills are their base models' tokenizers: Llama 3 (8B, 70B) and Qwen 2.5 (1.5B to
    // 32B), Qwen3 for the 0528 8B one. ollama's `deepseek-r1:8b` (and `:latest`) was the Llama
    // distill and is now the Qwen3 one, so it stays an estimate.
    m("deepseek-r1-distill-llama", Meta, L3, X, FACTOR_META, 131_072, 32_768),
    m("deepseek-r1-distill-qwen", Alibaba, Q2, X, FACTOR_ALIBABA, 131_072, 32_768),
    m("deepseek-r1-0528-qwen3", Alibaba, Q2, X, FACTOR_ALIBABA, 131_072, 32_768),
    m("deepseek-r1:1.5b", Alibaba, Q2, X, FACTOR_ALIBABA, 131_072, 32_768),
    m("deepseek-r1:7b", Alibaba, Q2, X, FACTOR_ALIBABA, 131_072, 32_768),
    m("deepseek-r1:14b", Alibaba, Q2, X, FACTOR_ALIBABA, 131_072, 32_768),
    m("deepseek-r1:32b", Alibaba, Q2, X, FACTOR_ALIBABA, 131_072, 32_768),
    m("deepseek-r1:70b", Meta, L3, X, FACTOR_META, 131_072, 32_768),
    m("deepseek-r1:8b", Deepseek, O, E, FACTOR_DEEPSEEK, 131_072, 32_768),
    m("deepseek-r1:latest", Deepseek, O, E, FACTOR_DEEPSEEK, 131_072, 32_768),
    m("deepseek-r1:671b", Deepseek, DS, X, FACTOR_DEEPSEEK, 131_072, 32_768),
    // Mistral — Tekken (v3, the one mistral-common ships): NeMo, Pixtral 12B, Ministral, Small
    // 2409. Exact once mistral-tekken is loaded. SentencePiece v3 (Large 2407, Codestral 2405 and
    // Mamba, Mixtral 8x22B, 7B v0.3) and v7 (Large 2411, Pixtral Large): exact once mistral-spm-v3
    // / -v7 is loaded (mistral-common's MODEL_NAME_TO_TOKENIZER_CLS names which). The `-latest`
    // aliases, Small 3.x and later (Tekken v7+, which no registry package ships): estimates.
    m("open-mistral-nemo", Mistral, TK, X, FACTOR_MISTRAL, 131_072, 8_192),
    m("mistral-nemo", Mistral, TK, X, FACTOR_MISTRAL, 131_072, 8_192),
    m("pixtral-12b", Mistral, TK, X, FACTOR_MISTRAL, 131_072, 8_192),
    m("ministral-8b", Mistral, TK, X, FACTOR_MISTRAL, 131_072, 8_192),
    m("ministral-3b", Mistral, TK, X, FACTOR_MISTRAL, 131_072, 8_192),
    m("mistral-small-2409", Mistral, TK, X, FACTOR_MISTRAL, 32_768, 8_192),
    m("mistral-large-2407", Mistral, S3, X, FACTOR_MISTRAL_SPM, 131_072, 8_192),
    m("mistral-large-instruct-2407", Mistral, S3, X, FACTOR_MISTRAL_SPM, 131_072, 8_192),
    m("codestral-2405", Mistral, S3, X, FACTOR_MISTRAL_SPM, 32_768, 8_192),
    m("codestral-22b", Mistral, S3, X, FACTOR_MISTRAL_SPM, 32_768, 8_192),
    m("codestral:22b", Mistral, S3, X, FACTOR_MISTRAL_SPM, 32_768, 8_192),
    m("codestral-mamba", Mistral, S3, X, FACTOR_MISTRAL_SPM, 262_144, 8_192),
    m("open-codestral-mamba", Mistral, S3, X, FACTOR_MISTRAL_SPM, 262_144, 8_192),
    m("mamba-codestral-7b", Mistral, S3, X, FACTOR_MISTRAL_SPM, 262_144, 8_192),
    m("open-mixtral-8x22b", Mistral, S3, X, FACTOR_MISTRAL_SPM, 65_536, 8_192),
    m("mixtral-8x22b", Mistral, S3, X, FACTOR_MISTRAL_SPM, 65_536, 8_192),
    m("mixtral:8x22b", Mistral, S3, X, FACTOR_MISTRAL_SPM, 65_536, 8_192),
    m("mistral-tiny-2407", Mistral, S3, X, FACTOR_MISTRAL_SPM, 32_768, 8_192),
    m("mistral-7b-instruct-v0.3", Mistral, S3, X, FACTOR_MISTRAL_SPM, 32_768, 8_192),
    m("mistral-large-2411", Mistral, S7, X, FACTOR_MISTRAL_SPM, 131_072, 8_192),
    m("mistral-large-instruct-2411", Mistral, S7, X, FACTOR_MISTRAL_SPM, 131_072, 8_192),
    m("pixtral-large-2411", Mistral, S7, X, FACTOR_MISTRAL_SPM, 131_072, 8_192),
    m("pixtral-large-instruct-2411", Mistral, S7, X, FACTOR_MISTRAL_SPM, 131_072, 8_192),
    m("mistral-large", Mistral, O, E, FACTOR_MISTRAL, 131_072, 8_192),
    m("mistral-medium", Mistral, O, E, FACTOR_MISTRAL, 131_072, 8_192),
    m("mistral-small", Mistral, O, E, FACTOR_MISTRAL, 131_072, 8_192),
    m("codestral", Mistral, O, E, FACTOR_MISTRAL, 262_144, 8_192),
    m("mistral", Mistral, O, E, FACTOR_MISTRAL, 131_072, 8_192),
];

/// Strip a router prefix (`openai/gpt-4o`, `anthropic/claude-...`, `models/gemini-...`) and
/// Bedrock's (`anthropic.claude-...`, `us.anthropic.claude-...`), and lower-case the name.
fn normalize(model: &str) -> String {
    let lower = model.trim().to_ascii_lowercase();
    let tail = match lower.rsplit_once('/') {
        Some((_, tail)) => tail,
        None => lower.as_str(),
    };
    match tail.find("anthropic.") {
        Some(i) if tail.get(..i).is_some_and(|region| region.is_empty() || region.ends_with('.')) => {
            tail.get(i + "anthropic.".len()..).unwrap_or(tail).to_string()
        }
        _ => tail.to_string(),
    }
}

/// Whether a model binds its thinking blocks to their prefix (Claude's preserved thinking:
/// Fable and Mythos 5.x, Opus, Sonnet and Haiku 5.5; their API, Bedrock and Vertex ids).
pub fn preserved_thinking(model: &str) -> bool {
    let name = normalize(model);
    ["claude-fable-5", "claude-mythos-5", "claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// The table row for `model`, longest prefix first. A prefix matches only at a name boundary
/// (end of name, `-`, `.`, `:` or `@` next), so `o1` does not match `o100`.
pub fn lookup(model: &str) -> Option<&'static ModelSpec> {
    let name = normalize(model);
    MODELS
        .iter()
        .filter(|spec| {
            name.strip_prefix(spec.prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '.', ':', '@', '_']))
        })
        .max_by_key(|spec| spec.prefix.len())
}

/// Resolve a model name. Unknown names get o200k × `FACTOR_UNKNOWN`, no limits, `known: false`.
pub fn info(model: &str) -> ModelInfo {
    match lookup(model) {
        Some(spec) => {
            let (encoding, kind, estimate_factor) = resolved_counting(spec);
            ModelInfo {
                model: model.to_string(),
                known: true,
                provider: spec.provider,
                encoding,
                kind,
                estimate_factor,
                context_window: Some(spec.context_window),
                max_output_tokens: Some(spec.max_output_tokens),
                // Claude speaks Anthropic's Messages format — unless the name is routed
                // (`openrouter/anthropic/…`, `anthropic/claude-…`): routers are OpenAI-compatible.
                format: if spec.provider == Provider::Anthropic && !model.contains('/') {
                    Format::Anthropic
                } else {
                    Format::Openai
                },
                preserved_thinking: preserved_thinking(model),
                vocabulary: crate::tokens::loaded::vocabulary_of(spec.encoding),
            }
        }
        None => ModelInfo {
            model: model.to_string(),
            known: false,
            provider: Provider::Other,
            encoding: Encoding::O200kBase,
            kind: CountKind::Estimate,
            estimate_factor: FACTOR_UNKNOWN,
            context_window: None,
            max_output_tokens: None,
            format: Format::Openai,
            preserved_thinking: false,
            vocabulary: None,
        },
    }
}

/// A row's encoding, kind and factor in this build: a row counted with `gemma3` is exact (factor
/// 1) when the build has that vocabulary, else the o200k estimate with the row's factor.
fn resolved_counting(spec: &ModelSpec) -> (Encoding, CountKind, f64) {
    match spec.encoding {
        e @ Encoding::Gemma3 if e.is_available() => (e, spec.kind, 1.0),
        e if e.is_loadable() && e.is_available() => (e, spec.kind, 1.0),
        e if e == Encoding::Gemma3 || e.is_loadable() => {
            (Encoding::O200kBase, CountKind::Estimate, spec.estimate_factor)
        }
        e => (e, spec.kind, spec.estimate_factor),
    }
}

/// Whether counting `info`'s model with `encoding` is exact: OpenAI's known models with an
/// OpenAI encoding (their framing is published), Gemini rows counted with `gemma3`.
pub fn exact_with(info: &ModelInfo, encoding: Encoding) -> bool {
    match info.provider {
        Provider::Openai => info.known && encoding != Encoding::Gemma3,
        Provider::Google => {
            encoding == Encoding::Gemma3 && lookup(&info.model).is_some_and(|s| s.encoding == Encoding::Gemma3)
        }
        // A loaded vocabulary counts the models of its family exactly.
        _ => {
            encoding.is_loadable()
                && encoding.is_available()
                && lookup(&info.model).is_some_and(|s| s.encoding == encoding && s.kind == CountKind::Exact)
        }
    }
}

/// The chat template a row's model renders its messages with, where ctxguard counts it
/// (`count::template`): Llama 3.0 and 3.1+, Qwen 3, DeepSeek V3 and R1, gpt-oss (harmony).
fn template_of(spec: &ModelSpec) -> Option<crate::count::template::Template> {
    use crate::count::template::Template;
    Some(match spec.prefix {
        "llama-3" | "llama3" | "meta-llama-3" | "meta.llama3" => Template::Llama3,
        "llama-3.1" | "llama-3.2" | "llama-3.3" | "llama3.1" | "llama3.2" | "llama3.3" | "meta-llama-3.1"
        | "meta.llama3-1" | "meta.llama3-2" | "meta.llama3-3" => Template::Llama31,
        "qwen3" => Template::Qwen3,
        "deepseek-chat" | "deepseek-v3" => Template::DeepseekV3,
        "deepseek-reasoner" | "deepseek-r1" | "deepseek-r1:671b" => Template::DeepseekR1,
        "gpt-oss" => Template::Harmony,
        _ => return None,
    })
}

/// Every row of the table, resolved.
pub fn known_models() -> Vec<ModelInfo> {
    MODELS.iter().map(|spec| info(spec.prefix)).collect()
}

/// The counting profile for a resolved model: OpenAI's published billing rules with the image
/// rule of the model's family, or an estimate with the model's factor.
pub fn profile(info: &ModelInfo) -> crate::count::Profile {
    use crate::count::{ImageRule, Profile};
    let name = normalize(&info.model);
    // A model counted with its own vocabulary (or o200k for gpt-oss) and its own chat template.
    let template = lookup(&info.model).and_then(template_of).filter(|_| info.kind == CountKind::Exact);
    if let Some(t) = template {
        let mut p = Profile::template(info.provider, info.encoding, t);
        if t == crate::count::template::Template::Harmony {
            p.image_rule = ImageRule::GPT_4O;
        }
        return p;
    }
    let mut p = match info.provider {
        Provider::Openai if info.kind == CountKind::Exact => {
            let image = if name.starts_with("gpt-4o-mini") {
                ImageRule::GPT_4O_MINI
            } else if name.starts_with("gpt-4.1-mini") {
                ImageRule::GPT_4_1_MINI
            } else if name.starts_with("gpt-4.1-nano") {
                ImageRule::GPT_4_1_NANO
            } else if name.starts_with("gpt-5-mini") {
                ImageRule::OpenaiPatches { multiplier: 1.62 }
            } else if name.starts_with("gpt-5-nano") {
                ImageRule::OpenaiPatches { multiplier: 2.46 }
            } else if name.starts_with("gpt-5") {
                ImageRule::GPT_5
            } else if name.starts_with("o4-mini") {
                ImageRule::O4_MINI
            } else if name.starts_with("o1") || name.starts_with("o3") {
                ImageRule::O_SERIES
            } else {
                ImageRule::GPT_4O
            };
            Profile::openai(info.encoding, image)
        }
        Provider::Anthropic => {
            // With preserved thinking ctxguard's notes go to the model as user messages
            // (`pipeline::model_visible_for`), not joined into `system`.
            let mut p = Profile::anthropic_estimate(info.estimate_factor);
            p.system_joined = !info.preserved_thinking;
            p
        }
        Provider::Google => {
            // Gemini 3 gives each image a budget by media resolution; 2.x tiles it.
            let image = if name.starts_with("gemini-3") { ImageRule::GeminiResolution } else { ImageRule::GeminiTiles };
            let mut p = if info.kind == CountKind::Exact && info.encoding == Encoding::Gemma3 {
                Profile::gemini_exact(image)
            } else {
                Profile::gemini_estimate(info.estimate_factor)
            };
            p.image_rule = image;
            p
        }
        _ => Profile::generic_estimate(info.estimate_factor),
    };
    p.encoding = info.encoding;
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_and_boundaries() {
        assert_eq!(info("gpt-4o-mini").encoding, Encoding::O200kBase);
        assert_eq!(info("gpt-4o-2024-05-13").max_output_tokens, Some(4_096));
        assert_eq!(info("gpt-4o-2024-08-06").max_output_tokens, Some(16_384));
        assert_eq!(info("gpt-4").encoding, Encoding::Cl100kBase);
        assert_eq!(info("gpt-4-0613").context_window, Some(8_192));
        assert_eq!(info("gpt-4-turbo-2024-04-09").context_window, Some(128_000));
        assert_eq!(info("gpt-4.1-mini").context_window, Some(1_047_576));
        assert_eq!(info("gpt-3.5-turbo-0125").encoding, Encoding::Cl100kBase);
        assert_eq!(info("openai/gpt-5-mini").context_window, Some(400_000));
        assert_eq!(info("o3-mini").kind, CountKind::Exact);
        assert!(!info("o100").known);
        assert_eq!(info("claude-sonnet-4-5-20250929").provider, Provider::Anthropic);
        assert_eq!(info("claude-sonnet-4-5-20250929").kind, CountKind::Estimate);
        assert_eq!(info("anthropic/claude-3-5-haiku-latest").max_output_tokens, Some(8_192));
        assert_eq!(info("models/gemini-2.5-pro").provider, Provider::Google);
        assert_eq!(info("Qwen3-235B-A22B").max_output_tokens, Some(32_768));
        assert_eq!(info("meta-llama/Llama-3.3-70B-Instruct").provider, Provider::Meta);
        assert_eq!(info("deepseek-reasoner").max_output_tokens, Some(65_536));
    }

    #[test]
    fn claude_factors_follow_the_tokenizer() {
        for old in [
            "claude-sonnet-4-5-20250929",
            "claude-opus-4-1",
            "claude-opus-4-6",
            "claude-haiku-4-5",
            "claude-3-5-haiku-latest",
        ] {
            assert_eq!(info(old).estimate_factor, FACTOR_ANTHROPIC, "{old}");
        }
        for new in ["claude-opus-4-7", "claude-opus-4-8-20261001", "claude-sonnet-5", "anthropic/claude-opus-5"] {
            assert_eq!(info(new).estimate_factor, FACTOR_ANTHROPIC_V4_7, "{new}");
        }
        // Only the factor changed for them: the limits are those the names resolved to before.
        assert_eq!(
            (info("claude-opus-4-7").context_window, info("claude-opus-4-7").max_output_tokens),
            (Some(200_000), Some(32_000))
        );
        assert_eq!(info("claude-sonnet-5").max_output_tokens, Some(8_192));
    }

    #[test]
    fn unknown_models_are_estimates_without_limits() {
        let i = info("my-local-model");
        assert!(!i.known);
        assert_eq!(i.kind, CountKind::Estimate);
        assert_eq!(i.context_window, None);
        assert!(i.estimate_factor > 1.0);
    }

    #[test]
    fn every_row_resolves_to_itself() {
        for spec in MODELS {
            let i = info(spec.prefix);
            assert!(i.known, "{}", spec.prefix);
            assert_eq!(i.context_window, Some(spec.context_window), "{}", spec.prefix);
            assert!(spec.max_output_tokens <= spec.context_window, "{}", spec.prefix);
        }
    }
}
