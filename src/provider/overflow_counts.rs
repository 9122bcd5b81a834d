//! The figures an overflow error states: how many input tokens the provider counted, the output
//! room the request asked for, and the limit it broke.
//!
//! Read only for errors classified `context_overflow` (a rate-limit message's "Limit 30000,
//! Requested 31538" is never read), from the same lowercased leaves the classifier scanned, by
//! the first pattern in [`PATTERNS`] that matches a leaf; then, when no text pattern matched,
//! from llama.cpp's numeric body fields (`n_prompt_tokens`, `n_ctx`).
//!
//! # What each field means
//!
//! - `prompt_tokens`: the tokens of the request's input (system, messages, tool definitions), as
//!   the provider counted them. A total that includes the requested output is never reported
//!   here: it is split when the message gives both parts (OpenAI's and vLLM's "you requested 4120
//!   tokens (3120 in the messages, 1000 in the completion)" gives 3120), and otherwise left out.
//! - `completion_tokens`: the output room the request asked for (`max_tokens`), when stated.
//! - `requested_tokens`: a total the message states for input plus output ("you requested 4120
//!   tokens", Moonshot's "(requested: 269030)"), when it states one.
//! - `limit`: the maximum the message names — the context window ("maximum context length is
//!   128000 tokens") or an input limit ("maximum number of tokens allowed (1048576)", "maximum
//!   prompt length is 131072", DashScope's "[1, 983616]"), whichever the provider compared with.
//! - `qualifier`: `exact`, or `at_least` when the message says the input is *at least* that many
//!   tokens (vLLM stops counting at the window), or `about` when it says *about* (OpenRouter's
//!   "you requested about ... tokens (7884 of text input, ...)").
//!
//! A figure the message does not state is `None`: nothing is derived by arithmetic.
//!
//! # Patterns
//! A pattern is literal text (lowercase, as the leaves are) with `{p}` (input tokens), `{q}`
//! (more input tokens, added to `{p}`: OpenRouter's tool input), `{c}` (requested output), `{t}`
//! (stated total), `{l}` (limit) and `…` (any text up to the next literal, both within [`GAP`]
//! bytes).
//! A number is plain digits or digits grouped by commas (`300,000`). The table in
//! `tests/js/fixtures/overflow-figures.json` (read by `tests/core/overflow_counts.rs` and the JS tests)
//! holds a real message for every pattern, with where it was seen.

use serde::Serialize;
use serde_json::Value;

/// How exact the stated input or total figure is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Qualifier {
    Exact,
    /// A lower bound ("your prompt contains at least 134145 input tokens").
    AtLeast,
    /// An approximation ("you requested about 138956 tokens").
    About,
}

/// The figures of an overflow error; every one `None` when the message does not state it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OverflowCounts {
    pub prompt_tokens: Option<u32>,
    pub completion_tokens: Option<u32>,
    pub requested_tokens: Option<u32>,
    pub limit: Option<u32>,
    /// `None` when no input or total figure is stated.
    #[serde(rename = "countQualifier")]
    pub qualifier: Option<Qualifier>,
}

/// A `…` spans at most this many bytes.
pub const GAP: usize = 160;

/// Body fields (llama.cpp and servers modelled on it) that hold the figures as numbers.
pub const FIELD_PROMPT: &str = "n_prompt_tokens";
pub const FIELD_LIMIT: &str = "n_ctx";

struct Pattern {
    text: &'static str,
    qualifier: Qualifier,
}

const fn exact(text: &'static str) -> Pattern {
    Pattern { text, qualifier: Qualifier::Exact }
}

/// Most specific first: a wording with the parts split comes before the same wording without.
static PATTERNS: &[Pattern] = &[
    // Anthropic (and Bedrock, Vertex, and gateways relaying Claude).
    exact("prompt is too long: {p} tokens > {l} maximum"),
    exact("input length and `max_tokens` exceed context limit: {p} + {c} > {l}"),
    exact("input length and max_tokens exceed context limit: {p} + {c} > {l}"),
    // Google: Gemini API, Vertex AI.
    exact("input token count ({p}) exceeds the maximum number of tokens allowed ({l})"),
    exact("input token count is {p} but model only supports up to {l}"),
    exact("input token count exceeds the maximum number of tokens allowed ({l})"),
    exact("input token count exceeds the maximum number of tokens allowed {l}"),
    // OpenAI Chat Completions and the servers that copy its wording (Azure, DeepSeek, Groq, vLLM,
    // OpenRouter...), newest wordings first.
    Pattern {
        text: "maximum context length is {l} tokens. however, you requested {c} output tokens and your prompt contains at least {p} input tokens, for a total of at least {t} tokens",
        qualifier: Qualifier::AtLeast,
    },
    Pattern { text: "maximum context length is {l} tokens. however, you requested about {t} tokens ({p} of text input, {q} of tool input, {c} in the output)", qualifier: Qualifier::About },
    Pattern { text: "maximum context length is {l} tokens. however, you requested about {t} tokens ({p} of text input, {c} in the output)", qualifier: Qualifier::About },
    Pattern { text: "maximum context length is {l} tokens. however, you requested about {t} tokens ({p} of text input)", qualifier: Qualifier::About },
    Pattern { text: "maximum context length is {l} tokens. however, you requested about {t} tokens", qualifier: Qualifier::About },
    exact("maximum context length is {l} tokens. however, your messages resulted in {p} tokens"),
    exact("maximum context length is {l} tokens. however, you requested {t} tokens ({p} in the messages, {c} in the completion)"),
    exact("maximum context length is {l} tokens, however you requested {t} tokens ({p} in your prompt; {c} for the completion)"),
    exact("maximum context length is {l} tokens, however you requested {t} tokens ({p} in your prompt, {c} for the completion)"),
    exact("maximum context length is {l} tokens. however, you requested {t} tokens"),
    exact("maximum context length is {l} tokens, however you requested {t} tokens"),
    exact("maximum context length is {l} tokens. however, your request has {p} input tokens"),
    // vLLM and OpenAI-compatible servers.
    exact("decoder prompt (length {p}) is longer than the maximum model length of {l}"),
    exact("prompt (total length {p}) is too long to fit into the model (context length {l})"),
    exact("input ({p} tokens) is longer than the model's context length ({l} tokens)"),
    exact("input length {p} exceeds the maximum allowed input length of {l} tokens"),
    exact("request {p} input tokens exceeds the model's maximum context length {l}"),
    exact("number of input tokens ({p}) has exceeded max_prompt_tokens ({l})"),
    exact("length of prompt_tokens ({p}) must be less than max_seq_len ({l})"),
    exact("prompt tokens ({p}) exceed model maximum ({l})"),
    exact("prompt tokens ({p}) exceeds context size ({l})"),
    exact("prompt has {p} tokens, but the configured context size is {l} tokens"),
    exact("requested tokens ({p}) exceed context window of {l}"),
    exact("`inputs` tokens + `max_new_tokens` must be <= {l}. given: {p} `inputs` tokens and {c} `max_new_tokens`"),
    // xAI, GitHub Copilot, Mistral, Moonshot, DashScope, LM Studio, LiteLLM.
    exact("maximum prompt length is {l} but the request contains {p} tokens"),
    exact("prompt token count of {p} exceeds the limit of {l}"),
    exact("prompt contains {p} tokens…too large for model with {l} maximum context length"),
    exact("exceeded model token limit: {l} (requested: {t})"),
    exact("model max length exceeded, max length:{l}"),
    exact("range of input length should be [1, {l}]"),
    exact("model is loaded with context length of only {l} tokens"),
    exact("reached context length of {l} tokens"),
    exact("exceeds the model's maximum context length of {l} tokens"),
    // A Chinese gateway's translation of Gemini's message.
    exact("输入令牌数({p})超过了允许的最大令牌数({l})"),
];

/// The figures stated in the first leaf a pattern matches, or in the numeric fields.
pub fn extract(leaves: &[String], fields: &NumericFields) -> OverflowCounts {
    for pattern in PATTERNS {
        for leaf in leaves {
            if let Some(counts) = match_pattern(pattern, leaf) {
                return counts;
            }
        }
    }
    match (fields.prompt, fields.limit) {
        (None, None) => OverflowCounts::default(),
        (prompt, limit) => OverflowCounts {
            prompt_tokens: prompt,
            limit,
            qualifier: prompt.map(|_| Qualifier::Exact),
            ..Default::default()
        },
    }
}

/// llama.cpp's numeric body fields, the first of each seen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NumericFields {
    pub prompt: Option<u32>,
    pub limit: Option<u32>,
}

impl NumericFields {
    /// Note `value` under `key` when it is one of the fields and a whole number of tokens.
    pub fn note(&mut self, key: &str, value: &Value) {
        let slot = match key {
            FIELD_PROMPT => &mut self.prompt,
            FIELD_LIMIT => &mut self.limit,
            _ => return,
        };
        if slot.is_none() {
            // JS numbers arrive as floats: a whole one is a count.
            let whole = value.as_u64().or_else(|| {
                value.as_f64().filter(|f| f.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(f)).map(|f| f as u64)
            });
            *slot = whole.and_then(|n| u32::try_from(n).ok());
        }
    }
}

/// One piece of a pattern.
enum Piece<'a> {
    Lit(&'a str),
    Num(u8),
    Gap,
}

/// Split a pattern into pieces: `{x}` is a number slot, `…` a gap, the rest literal text.
fn pieces(text: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let next_slot = rest.find('{');
        let next_gap = rest.find('…');
        let cut = match (next_slot, next_gap) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => rest.len(),
        };
        if cut > 0 {
            out.push(Piece::Lit(rest.get(..cut).unwrap_or("")));
            rest = rest.get(cut..).unwrap_or("");
            continue;
        }
        if let Some(tail) = rest.strip_prefix('…') {
            out.push(Piece::Gap);
            rest = tail;
        } else if let (Some(b'{'), Some(slot), Some(b'}')) =
            (rest.as_bytes().first(), rest.as_bytes().get(1), rest.as_bytes().get(2))
        {
            out.push(Piece::Num(*slot));
            rest = rest.get(3..).unwrap_or("");
        } else {
            // A lone `{` in literal text.
            out.push(Piece::Lit(rest.get(..1).unwrap_or("")));
            rest = rest.get(1..).unwrap_or("");
        }
    }
    out
}

/// Every start of the pattern's first literal in the leaf is tried in turn.
fn match_pattern(pattern: &Pattern, leaf: &str) -> Option<OverflowCounts> {
    let pieces = pieces(pattern.text);
    let Some(Piece::Lit(first)) = pieces.first() else { return None };
    let mut from = 0;
    while let Some(at) = leaf.get(from..).and_then(|s| s.find(first)) {
        let start = from + at;
        if let Some(counts) = match_at(&pieces, leaf, start, pattern.qualifier) {
            return Some(counts);
        }
        from = start + first.len();
    }
    None
}

fn match_at(pieces: &[Piece<'_>], leaf: &str, mut pos: usize, qualifier: Qualifier) -> Option<OverflowCounts> {
    let mut c = OverflowCounts::default();
    let mut i = 0;
    while let Some(piece) = pieces.get(i) {
        match piece {
            Piece::Lit(lit) => {
                if !leaf.get(pos..)?.starts_with(lit) {
                    return None;
                }
                pos += lit.len();
            }
            Piece::Num(slot) => {
                let (n, len) = number(leaf.get(pos..)?)?;
                pos += len;
                match slot {
                    b'p' => c.prompt_tokens = Some(n),
                    b'q' => c.prompt_tokens = c.prompt_tokens.map(|p| p.saturating_add(n)),
                    b'c' => c.completion_tokens = Some(n),
                    b't' => c.requested_tokens = Some(n),
                    _ => c.limit = Some(n),
                }
            }
            Piece::Gap => {
                let Some(Piece::Lit(next)) = pieces.get(i + 1) else { return None };
                let rest = leaf.get(pos..)?;
                let window = rest.get(..floor_boundary(rest, GAP)).unwrap_or(rest);
                pos += window.find(next)?;
            }
        }
        i += 1;
    }
    if c.prompt_tokens.is_some() || c.requested_tokens.is_some() {
        c.qualifier = Some(qualifier);
    }
    Some(c)
}

/// The largest char boundary of `s` at or below `max`.
fn floor_boundary(s: &str, max: usize) -> usize {
    let mut end = max.min(s.len());
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// A whole number at the start of `s`: plain digits, or digits grouped by commas (`300,000`).
/// Returns the number and the bytes it took; `None` when there is no digit or it does not fit.
fn number(s: &str) -> Option<(u32, usize)> {
    let bytes = s.as_bytes();
    let mut len = 0;
    let mut value: u64 = 0;
    let mut group = 0;
    let mut grouped = false;
    while let Some(&b) = bytes.get(len) {
        if b.is_ascii_digit() {
            value = value * 10 + u64::from(b - b'0');
            if value > u64::from(u32::MAX) {
                return None;
            }
            group += 1;
            len += 1;
        } else if b == b','
            && (if grouped { group == 3 } else { (1..=3).contains(&group) })
            && bytes.get(len + 1..len + 4).is_some_and(|d| d.iter().all(u8::is_ascii_digit))
            && !bytes.get(len + 4).is_some_and(u8::is_ascii_digit)
        {
            grouped = true;
            group = 0;
            len += 1;
        } else {
            break;
        }
    }
    if len == 0 {
        None
    } else {
        Some((u32::try_from(value).ok()?, len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_plain_and_grouped() {
        assert_eq!(number("202609 tokens"), Some((202_609, 6)));
        assert_eq!(number("300,000 tokens"), Some((300_000, 7)));
        assert_eq!(number("1,048,576)"), Some((1_048_576, 9)));
        // A comma that does not group three digits ends the number.
        assert_eq!(number("4096, 5000"), Some((4096, 4)));
        assert_eq!(number("12,34"), Some((12, 2)));
        assert_eq!(number("x"), None);
        assert_eq!(number("99999999999"), None);
    }

    #[test]
    fn every_pattern_parses_and_is_lowercase() {
        for p in PATTERNS {
            assert_eq!(p.text, p.text.to_lowercase(), "{}", p.text);
            let pieces = pieces(p.text);
            assert!(matches!(pieces.first(), Some(Piece::Lit(_))), "{} must start with text", p.text);
            for (i, piece) in pieces.iter().enumerate() {
                if let Piece::Num(slot) = piece {
                    assert!(b"pqctl".contains(slot), "{}", p.text);
                    assert!(!matches!(pieces.get(i + 1), Some(Piece::Num(_))), "{}: two numbers in a row", p.text);
                }
                if matches!(piece, Piece::Gap) {
                    assert!(matches!(pieces.get(i + 1), Some(Piece::Lit(_))), "{}: a gap needs text after it", p.text);
                }
            }
        }
    }

    /// Every pattern reads at least one real message of the shared table.
    #[test]
    fn every_pattern_has_a_real_message() {
        fn strings(v: &Value, out: &mut Vec<String>) {
            match v {
                Value::String(s) => out.push(s.to_lowercase()),
                Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
                Value::Object(m) => m.values().for_each(|x| strings(x, out)),
                _ => {}
            }
        }
        let table: Value = serde_json::from_str(include_str!("../../tests/js/fixtures/overflow-figures.json")).unwrap();
        let mut texts = Vec::new();
        for case in table.as_array().unwrap() {
            strings(&case["error"], &mut texts);
        }
        for p in PATTERNS {
            assert!(texts.iter().any(|t| match_pattern(p, t).is_some()), "no real message for {:?}", p.text);
        }
    }

    #[test]
    fn gaps_are_bounded() {
        let p = exact("prompt contains {p} tokens…too large for model with {l} maximum context length");
        let near =
            "prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length";
        assert_eq!(match_pattern(&p, near).unwrap().prompt_tokens, Some(40_000));
        let far = format!(
            "prompt contains 40000 tokens{}too large for model with 32768 maximum context length",
            " ".repeat(GAP + 1)
        );
        assert!(match_pattern(&p, &far).is_none());
    }
}
