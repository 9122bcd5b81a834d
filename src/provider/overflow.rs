//! Provider error classification (docs/design.md, "Overflow errors"): after a failed model call, does the error mean "the
//! context is too long" (compact and retry), "the request is too many bytes", "slow down", or
//! something else?
//!
//! The input is what hosts really have: an HTTP `status`, a `message`, a `code` (OpenAI's
//! `context_length_exceeded`...), and a `body` that is either the parsed JSON error or its raw
//! text. Bodies are walked (OpenAI `{error:{message,type,code}}`, Anthropic
//! `{type:"error",error:{type,message}}`, Google `{error:{code,status,message}}`, llama.cpp,
//! vLLM, gateways that wrap one provider's JSON inside another's `message` string...) and every
//! string found becomes a lowercased *leaf*; markers are matched inside one leaf at a time.
//!
//! # Rules, in order (the first that matches decides)
//!
//! | # | condition | kind | `reason` |
//! |---|---|---|---|
//! | 1 | status 429 | `rate_limit` | `status:429` |
//! | 2 | a rate-limit marker: rate limit, too many requests, tokens/requests per minute or per day, quota, resource exhausted, throttling, "wait before trying again", overloaded, out of capacity (+ zh/ja) | `rate_limit` | `marker:<id>` |
//! | 3 | an overflow marker: `context_length_exceeded`, maximum context length, context length/window/limit, prompt is too long, input is too long, too many tokens, token limit, Gemini's "exceeds the maximum number of tokens", Vertex's input token count, xAI's maximum prompt length, Copilot's prompt token count, llama.cpp's context size, vLLM's maximum model length, DashScope's input length range, zh/ja/es/fr/de phrasings... | `context_overflow` | `marker:<id>` |
//! | 4 | a payload marker: `request_too_large`, request entity / payload too large, payload or body size, bytes over a limit, `string_above_max_length` on a message | `payload_too_large` | `marker:<id>` |
//! | 5 | status 413 with none of the above | `context_overflow` | `status:413` |
//! | 6 | anything else (a bare 400, 401, 404, 5xx without a marker, garbage) | `other` | `none` |
//!
//! An overflow also carries the figures its message states (`promptTokens`, `completionTokens`,
//! `requestedTokens`, `limit`, `countQualifier`; see [`counts`] for what each means); every one
//! is `null` when the message does not state it, and for every other kind.
//!
//! Choices worth knowing:
//! - Rate-limit wording wins over token wording: "Request too large for gpt-4o ... on tokens per
//!   min (TPM)" (OpenAI 429, Groq 413) and Bedrock's "Too many tokens per day, please wait before
//!   trying again" are `rate_limit`. The word "tokens" alone never means overflow.
//! - A bare 400 is `other`: retrying a malformed request with a compacted context is a retry storm.
//! - A 413 that names bytes, payload, request entity or body size is `payload_too_large`; a 413 that
//!   names tokens or the context is an overflow; a bare 413 is treated as an overflow too, because
//!   OpenAI-compatible gateways answer 413 for oversize prompts and a compaction makes the request
//!   smaller in either reading.
//! - `string_above_max_length` (OpenAI's 10 MB per-string limit) on `messages`/`input` is a payload
//!   error; on another parameter (`user`, a tool name) it is `other`.
//! - A 5xx is `other` unless a marker says otherwise (llama.cpp reported overflow as 500 for a while).
//! - Values under keys that echo the request (`messages`, `input`, `prompt`, `contents`, `content`,
//!   `system`, `tools`, `request`, `config`, `headers`, `stack`) are not scanned, so a user who
//!   writes "context window" in a prompt that a validation error echoes back does not trigger a
//!   compaction.
//!
//! # Bounds
//! At most [`MAX_SCAN_BYTES`] of text over all fields, [`MAX_NODES`] JSON nodes, nesting
//! [`MAX_DEPTH`] deep, and [`MAX_EMBEDDED`] JSON documents found inside strings are parsed. Hostile
//! input (megabytes of text, deep nesting) costs a bounded amount of work. Nothing here panics.

use serde::Serialize;
use serde_json::Value;

use super::overflow_counts as counts;
pub use counts::{OverflowCounts, Qualifier};

/// At most this many bytes of text are scanned, over all fields together.
pub const MAX_SCAN_BYTES: usize = 64 * 1024;
/// The top-level fields of a caught error that carry its HTTP status, in the order they are tried.
pub const STATUS_FIELDS: [&str; 3] = ["status", "statusCode", "status_code"];
/// The top-level fields whose text is scanned, in order (`error` is what the OpenAI and Anthropic
/// SDKs call the parsed body). With `STATUS_FIELDS`, every field `classify_value` reads of an
/// object: the binding reads these of a JS error, and the JS side's table lists them
/// (PROVIDER_ERROR_FIELDS in src/js/surface.js, checked by tests/js/surface.test.mjs).
pub const TEXT_FIELDS: [&str; 4] = ["message", "code", "body", "error"];
/// Objects and arrays nested deeper than this are not looked into.
pub const MAX_DEPTH: usize = 16;
/// At most this many JSON values are visited.
pub const MAX_NODES: usize = 4096;
/// At most this many JSON documents embedded in strings (`"400 {\"type\":\"error\",...}"`) are parsed.
pub const MAX_EMBEDDED: usize = 8;
/// An embedded JSON document must start within this many bytes of its string.
const EMBEDDED_START_WINDOW: usize = 256;

/// What a provider error means for the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The prompt does not fit the model's context: compact (forced) and retry once.
    ContextOverflow,
    /// The request is too many bytes for the provider or a proxy (attachments, images, bodies).
    PayloadTooLarge,
    /// Rate limit, quota or overload: wait and retry, do not compact.
    RateLimit,
    /// Anything else: do not retry with a compacted context.
    Other,
}

impl ErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::ContextOverflow => "context_overflow",
            ErrorKind::PayloadTooLarge => "payload_too_large",
            ErrorKind::RateLimit => "rate_limit",
            ErrorKind::Other => "other",
        }
    }
}

/// The verdict: `compact_and_retry` is true exactly for [`ErrorKind::ContextOverflow`]; `reason`
/// names the rule that matched (`marker:<id>`, `status:413`, `status:429` or `none`) and is stable;
/// `counts` holds the figures an overflow's message states (all `None` for other kinds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Classification {
    pub kind: ErrorKind,
    pub compact_and_retry: bool,
    pub reason: &'static str,
    #[serde(flatten)]
    pub counts: OverflowCounts,
}

impl Classification {
    fn new(kind: ErrorKind, reason: &'static str) -> Self {
        Classification {
            kind,
            compact_and_retry: kind == ErrorKind::ContextOverflow,
            reason,
            counts: OverflowCounts::default(),
        }
    }
}

/// A failed provider call as a host has it. Every field is optional.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProviderError {
    /// HTTP status.
    pub status: Option<u16>,
    pub message: Option<String>,
    /// Provider error code (`context_length_exceeded`, `rate_limit_exceeded`, `1261`...).
    pub code: Option<String>,
    /// The parsed JSON error body, or its raw text as a JSON string.
    pub body: Option<Value>,
}

/// Classify a failed provider call.
pub fn classify(error: &ProviderError) -> Classification {
    let mut scan = Scanner::default();
    let explicit = error.status.filter(|s| is_http_status(u64::from(*s)));
    if let Some(message) = &error.message {
        scan.text(message, 0);
    }
    if let Some(code) = &error.code {
        scan.text(code, 0);
    }
    if let Some(body) = &error.body {
        scan.walk(body, 0);
    }
    scan.decide(explicit)
}

/// Classify whatever a host passed, read as JSON: an object with `status` (or `statusCode`,
/// `status_code`), `message`, `code`, `body` and `error` (what the OpenAI and Anthropic SDKs call the
/// parsed body), a bare string (read as the message), or anything else (`other`). Never fails.
pub fn classify_value(value: &Value) -> Classification {
    let mut scan = Scanner::default();
    let mut explicit = None;
    match value {
        Value::Object(map) => {
            explicit = STATUS_FIELDS.iter().find_map(|k| map.get(*k).and_then(status_of));
            let code = map.get("code");
            if explicit.is_none() {
                explicit = code.and_then(status_of);
            }
            for key in TEXT_FIELDS {
                match map.get(key) {
                    Some(Value::Number(n)) if key == "code" => scan.text(&n.to_string(), 0),
                    Some(v) => scan.walk(v, 0),
                    None => {}
                }
            }
        }
        Value::String(s) => scan.text(s, 0),
        Value::Array(_) => scan.walk(value, 0),
        _ => {}
    }
    scan.decide(explicit)
}

fn decide(status: Option<u16>, leaves: &[String]) -> Classification {
    if status == Some(429) {
        return Classification::new(ErrorKind::RateLimit, "status:429");
    }
    if let Some(rule) = RULES.iter().find(|rule| leaves.iter().any(|leaf| rule.matches(leaf))) {
        return Classification::new(rule.kind, rule.reason);
    }
    if status == Some(413) {
        return Classification::new(ErrorKind::ContextOverflow, "status:413");
    }
    Classification::new(ErrorKind::Other, "none")
}

fn is_http_status(n: u64) -> bool {
    (100..=599).contains(&n)
}

/// An HTTP status from a JSON number (integral) or a numeric string.
fn status_of(value: &Value) -> Option<u16> {
    let n = match value {
        Value::Number(n) => {
            n.as_u64().or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < 1000.0).map(|f| f as u64))
        }
        Value::String(s) => s.trim().parse::<u64>().ok(),
        _ => None,
    }?;
    if is_http_status(n) {
        u16::try_from(n).ok()
    } else {
        None
    }
}

/// Keys whose values echo the request rather than describe the error.
const ECHO_KEYS: &[&str] = &[
    "messages", "input", "inputs", "prompt", "prompts", "contents", "content", "system", "tools", "request", "config",
    "headers", "stack",
];
/// Whether values under this key are left out of the scan because they echo the request
/// (`messages`, `input`, `prompt`...). Readers of foreign objects can skip them too.
pub fn is_echo_key(key: &str) -> bool {
    ECHO_KEYS.contains(&key)
}

/// Keys that may hold the HTTP status inside a body (Google `error.code`, gateways' `status`).
const STATUS_KEYS: &[&str] = &["code", "status", "statusCode", "status_code"];

/// Collects lowercased string leaves within the bounds, and the first HTTP status seen in a body.
#[derive(Default)]
struct Scanner {
    leaves: Vec<String>,
    used: usize,
    nodes: usize,
    embedded: usize,
    body_status: Option<u16>,
    fields: counts::NumericFields,
}

impl Scanner {
    /// The verdict on what was scanned (`explicit`: the status the host gave), with an
    /// overflow's figures.
    fn decide(&self, explicit: Option<u16>) -> Classification {
        let mut c = decide(explicit.or(self.body_status), &self.leaves);
        if c.kind == ErrorKind::ContextOverflow {
            c.counts = counts::extract(&self.leaves, &self.fields);
        }
        c
    }

    fn left(&self) -> usize {
        MAX_SCAN_BYTES.saturating_sub(self.used)
    }

    fn walk(&mut self, value: &Value, depth: usize) {
        if depth > MAX_DEPTH || self.nodes >= MAX_NODES || self.left() == 0 {
            return;
        }
        self.nodes += 1;
        match value {
            Value::String(s) => self.text(s, depth),
            Value::Array(items) => {
                for item in items {
                    if self.nodes >= MAX_NODES || self.left() == 0 {
                        break;
                    }
                    self.walk(item, depth + 1);
                }
            }
            Value::Object(map) => {
                for (key, item) in map {
                    if self.nodes >= MAX_NODES || self.left() == 0 {
                        break;
                    }
                    if is_echo_key(key) {
                        continue;
                    }
                    if self.body_status.is_none() && STATUS_KEYS.contains(&key.as_str()) {
                        self.body_status = status_of(item);
                    }
                    self.fields.note(key, item);
                    self.walk(item, depth + 1);
                }
            }
            Value::Number(_) | Value::Bool(_) | Value::Null => {}
        }
    }

    /// A string: if a JSON object (or a list of objects) starts near its beginning, walk that
    /// document and keep the text around it; otherwise keep the whole string as one leaf.
    fn text(&mut self, s: &str, depth: usize) {
        let s = clip(s, self.left());
        if self.embedded < MAX_EMBEDDED && depth < MAX_DEPTH {
            if let Some((head, doc, tail)) = embedded_json(s) {
                self.embedded += 1;
                self.leaf(head);
                self.walk(&doc, depth + 1);
                self.leaf(tail);
                return;
            }
        }
        self.leaf(s);
    }

    fn leaf(&mut self, s: &str) {
        let s = clip(s.trim(), self.left());
        if s.is_empty() {
            return;
        }
        self.used += s.len();
        self.leaves.push(s.to_lowercase());
    }
}

/// The longest prefix of `s` of at most `max` bytes that ends on a char boundary.
fn clip(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    s.get(..end).unwrap_or("")
}

/// `(text before, document, text after)` when `s` holds a JSON object, or an array of objects,
/// starting within its first [`EMBEDDED_START_WINDOW`] bytes (`400 {"type":"error",...}`,
/// Gemini's `[{"error":{...}}]`, a gateway's `message` that is another provider's whole body).
fn embedded_json(s: &str) -> Option<(&str, Value, &str)> {
    let window = clip(s, EMBEDDED_START_WINDOW);
    let start = window.find(['{', '['])?;
    let rest = s.get(start..)?;
    let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
    let doc = stream.next()?.ok()?;
    let is_error_shaped = match &doc {
        Value::Object(_) => true,
        Value::Array(items) => items.first().is_some_and(Value::is_object),
        _ => false,
    };
    if !is_error_shaped {
        return None;
    }
    let end = start + stream.byte_offset();
    Some((s.get(..start).unwrap_or(""), doc, s.get(end..).unwrap_or("")))
}

/// A marker: every group must have one needle in the same (lowercased) leaf.
struct Rule {
    kind: ErrorKind,
    reason: &'static str,
    groups: &'static [&'static [&'static str]],
}

impl Rule {
    fn matches(&self, leaf: &str) -> bool {
        self.groups.iter().all(|group| group.iter().any(|needle| leaf.contains(needle)))
    }
}

const fn rule(kind: ErrorKind, reason: &'static str, groups: &'static [&'static [&'static str]]) -> Rule {
    Rule { kind, reason, groups }
}

use ErrorKind::{ContextOverflow as O, PayloadTooLarge as P, RateLimit as R};

/// All markers, lowercase, in precedence order: rate limits, then overflows, then payload sizes.
static RULES: &[Rule] = &[
    // --- rate limits, quotas, overload ---
    rule(R, "marker:rate_limit", &[&["rate_limit", "rate limit", "ratelimit", "rate-limit"]]),
    rule(R, "marker:too_many_requests", &[&["too many requests"]]),
    rule(R, "marker:tokens_per_minute", &[&["tokens per min", "(tpm)"]]),
    rule(R, "marker:requests_per_minute", &[&["requests per min", "(rpm)"]]),
    rule(R, "marker:per_day_limit", &[&["tokens per day", "requests per day"]]),
    rule(R, "marker:wait_before_trying_again", &[&["wait before trying again"]]),
    rule(R, "marker:quota", &[&["quota"]]),
    rule(
        R,
        "marker:resource_exhausted",
        &[&["resource_exhausted", "resource exhausted", "resource has been exhausted"]],
    ),
    rule(R, "marker:throttled", &[&["throttl"]]),
    rule(R, "marker:overloaded", &[&["overloaded"]]),
    rule(R, "marker:capacity", &[&["out of capacity", "capacity exceeded"]]),
    rule(R, "marker:zh_rate_limit", &[&["速率限制", "限流", "请求过于频繁", "请求过多", "并发数过高", "频率超限"]]),
    rule(R, "marker:ja_rate_limit", &[&["レート制限", "リクエストが多すぎ"]]),
    // --- context overflow ---
    rule(O, "marker:context_length_exceeded", &[&["context_length_exceeded"]]),
    rule(
        O,
        "marker:context_exceeded",
        &[&[
            "exceed_context_size_error",
            "context_exceeded",
            "context_window_exceeded",
            "contextwindowexceeded",
            "model_max_prompt_tokens_exceeded",
        ]],
    ),
    rule(O, "marker:maximum_context_length", &[&["maximum context length", "max context length"]]),
    rule(O, "marker:context_length", &[&["context length"]]),
    rule(O, "marker:context_window", &[&["context window"]]),
    rule(O, "marker:context_limit", &[&["context limit"]]),
    rule(O, "marker:context_size", &[&["context size"], &["exceed"]]),
    rule(O, "marker:prompt_too_long", &[&["prompt is too long", "prompt too long", "prompt exceeds"]]),
    rule(O, "marker:input_too_long", &[&["input is too long", "input too long", "too many input tokens"]]),
    rule(O, "marker:too_many_tokens", &[&["too many tokens"]]),
    rule(O, "marker:reduce_the_length", &[&["reduce the length of the messages"]]),
    rule(O, "marker:exceeds_maximum_tokens", &[&["exceeds the maximum number of tokens"]]),
    rule(O, "marker:token_limit", &[&["token limit"]]),
    rule(O, "marker:maximum_model_length", &[&["maximum model length", "model max length"]]),
    rule(O, "marker:input_length_range", &[&["range of input length"]]),
    rule(O, "marker:inputs_tokens", &[&["`inputs` tokens"]]),
    rule(O, "marker:current_length", &[&["current length is"], &["while limit is"]]),
    rule(O, "marker:maximum_input_length", &[&["maximum input length", "maximum allowed input length"], &["token"]]),
    rule(O, "marker:maximum_prompt_length", &[&["maximum prompt length"]]),
    rule(O, "marker:prompt_token_count", &[&["prompt token count"], &["exceed"]]),
    rule(O, "marker:input_token_count", &[&["input token count"], &["exceed", "only supports up to"]]),
    rule(O, "marker:configured_context_size", &[&["configured context size"]]),
    rule(
        O,
        "marker:input_tokens_exceed",
        &[
            &["input tokens", "prompt tokens", "prompt_tokens", "max_prompt_tokens"],
            &["exceed", "must be less than", "max_seq_len"],
        ],
    ),
    rule(O, "marker:length_limit_exceeded", &[&["length limit exceeded"]]),
    rule(
        O,
        "marker:zh_context",
        &[&[
            "上下文长度",
            "上下文窗口",
            "上下文过长",
            "上下文太长",
            "超出最大长度",
            "超过最大长度",
            "超过模型最大",
            "输入过长",
            "超长",
            "token数超过",
            "token 数超过",
            "tokens数超过",
            "最大令牌数",
        ]],
    ),
    rule(
        O,
        "marker:ja_context",
        &[&[
            "コンテキスト長",
            "最大コンテキスト",
            "コンテキストウィンドウ",
            "トークン数が上限",
            "トークン数の上限",
            "入力が長すぎ",
            "プロンプトが長すぎ",
        ]],
    ),
    rule(O, "marker:es_context", &[&["longitud máxima del contexto", "longitud del contexto", "ventana de contexto"]]),
    rule(
        O,
        "marker:es_too_long",
        &[&["demasiado larg"], &["prompt", "entrada", "mensaje", "contexto", "solicitud", "token"]],
    ),
    rule(O, "marker:fr_context", &[&["longueur maximale du contexte", "longueur du contexte", "fenêtre de contexte"]]),
    rule(
        O,
        "marker:fr_too_long",
        &[&["trop long"], &["prompt", "entrée", "message", "contexte", "requête", "token", "jeton"]],
    ),
    rule(O, "marker:de_context", &[&["maximale kontextlänge", "kontextlänge", "kontextfenster"]]),
    rule(O, "marker:de_too_long", &[&["zu lang"], &["prompt", "eingabe", "nachricht", "kontext", "anfrage", "token"]]),
    // --- payload size (bytes, not tokens) ---
    rule(P, "marker:request_too_large", &[&["request_too_large", "request too large"]]),
    rule(
        P,
        "marker:request_entity_too_large",
        &[&["request entity too large", "payload too large", "payloadtoolarge"]],
    ),
    rule(P, "marker:payload_size", &[&["payload size"]]),
    rule(
        P,
        "marker:maximum_size",
        &[&["exceeds the maximum size", "exceeds the maximum allowed size", "maximum allowed number of bytes"]],
    ),
    rule(P, "marker:body_size", &[&["body size", "body too large", "body is too large", "client_max_body_size"]]),
    rule(P, "marker:bytes", &[&["bytes"], &["exceed", "too large", "maximum", "limit", "larger than"]]),
    rule(P, "marker:content_length", &[&["content length", "content-length"], &["exceed", "too large", "limit"]]),
    rule(
        P,
        "marker:string_above_max_length",
        &[
            &["string_above_max_length", "string too long"],
            &["'messages", "messages[", "messages.", "'input", "input["],
        ],
    ),
    rule(P, "marker:zh_payload", &[&["请求体过大", "请求体太大", "请求实体过大"]]),
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn clip_respects_char_boundaries() {
        assert_eq!(clip("héllo", 2), "h");
        assert_eq!(clip("héllo", 3), "hé");
        assert_eq!(clip("abc", 10), "abc");
    }

    #[test]
    fn embedded_json_is_found_after_a_prefix() {
        let (head, doc, tail) = embedded_json(r#"400 {"type":"error"} trailing"#).unwrap();
        assert_eq!(head, "400 ");
        assert_eq!(doc, json!({"type": "error"}));
        assert_eq!(tail, " trailing");
        // A list of numbers is not an error document: the string stays one leaf.
        assert!(embedded_json("Range of input length should be [1, 6000]").is_none());
        assert!(embedded_json("{'error': 'python repr'}").is_none());
    }

    #[test]
    fn status_of_accepts_numbers_and_numeric_strings_in_range() {
        assert_eq!(status_of(&json!(413)), Some(413));
        assert_eq!(status_of(&json!(413.0)), Some(413));
        assert_eq!(status_of(&json!("429")), Some(429));
        assert_eq!(status_of(&json!(1261)), None);
        assert_eq!(status_of(&json!(413.5)), None);
        assert_eq!(status_of(&json!(-1)), None);
        assert_eq!(status_of(&json!("INVALID_ARGUMENT")), None);
    }

    #[test]
    fn every_needle_is_lowercase() {
        for rule in RULES {
            for group in rule.groups {
                for needle in *group {
                    assert_eq!(*needle, needle.to_lowercase(), "{}", rule.reason);
                }
            }
        }
    }
}
