//! Tool-output compaction (docs/design.md, "Pipeline", layer 1): an output over its token limit becomes a stable
//! compact form — head and tail cut at line boundaries where possible, one marker line with the
//! original size and what was omitted, and a hint how to fetch the full output.
//!
//! Same input and options give byte-identical output (provider prompt caches depend on it).
//! Output that already carries the marker is left alone unless `emergency` is set (or it is far
//! over the limit, which a genuine compacted output never is).

use serde_json::Value;

use crate::tokens::{self, Encoding};

use super::cut::{cut_head, cut_tail};

/// The marker every compacted output carries; recognizing it makes compaction idempotent.
pub const MARKER: &str = "[ctxguard:compacted-tool-output]";

/// Tokens kept free for the marker line inside the limit.
const MARKER_RESERVE: usize = 96;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompactOptions {
    /// Token limit for the output (marker included).
    pub limit: usize,
    /// Re-compact even an already compacted output (the pipeline's emergency layer).
    pub emergency: bool,
    /// Name of a host tool that returns a full output by call id, mentioned in the marker.
    pub retrieval_tool: Option<String>,
    /// The tool call id the output answers (for the retrieval hint).
    pub call_id: Option<String>,
}

/// What compaction produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Compacted {
    pub text: String,
    pub original_tokens: usize,
    pub tokens: usize,
}

pub fn is_compacted(text: &str) -> bool {
    text.contains(MARKER)
}

/// Compact `text` to at most `opts.limit` tokens, or `None` when it already fits (or is already
/// compacted and this is not an emergency pass).
pub fn compact(encoding: Encoding, text: &str, opts: &CompactOptions) -> Option<Compacted> {
    let original_tokens = tokens::count(encoding, text);
    if original_tokens <= opts.limit {
        return None;
    }
    // A compacted output is left alone even when a later pass gives it a smaller limit (the
    // prefix stays byte-stable for prompt caches) — but only within twice the limit: a tool
    // output that merely imitates the marker cannot use it to escape compaction.
    if is_compacted(text) && !opts.emergency && original_tokens <= opts.limit.saturating_mul(2) {
        return None;
    }
    let text_out = compact_json(encoding, text, original_tokens, opts)
        .unwrap_or_else(|| compact_lines(encoding, text, original_tokens, opts));
    let tokens = tokens::count(encoding, &text_out);
    Some(Compacted { text: text_out, original_tokens, tokens })
}

fn hint(opts: &CompactOptions) -> String {
    match (&opts.retrieval_tool, &opts.call_id) {
        (Some(tool), Some(id)) => format!(
            " Full output: call `{tool}` with {{\"id\": {}}}.",
            crate::base::json_text::text(&Value::String(id.clone()))
        ),
        (Some(tool), None) => format!(" Full output: call `{tool}`."),
        _ => String::new(),
    }
}

fn line_count(text: &str) -> usize {
    if text.is_empty() {
        0
    } else {
        text.matches('\n').count() + usize::from(!text.ends_with('\n'))
    }
}

/// Head and tail at line boundaries around one marker line.
fn compact_lines(encoding: Encoding, text: &str, original_tokens: usize, opts: &CompactOptions) -> String {
    let total_lines = line_count(text);
    let chars = text.chars().count();
    let mut keep = opts.limit.saturating_sub(MARKER_RESERVE);
    loop {
        let head_budget = keep / 2;
        let tail_budget = keep - head_budget;
        let head_end = cut_head(encoding, text, head_budget);
        let tail_start = cut_tail(encoding, text, tail_budget).max(head_end);
        let head = text.get(..head_end).unwrap_or("");
        let tail = text.get(tail_start..).unwrap_or("");
        let omitted = text.get(head_end..tail_start).unwrap_or("");
        let head_lines = line_count(head);
        let omitted_lines = if omitted.is_empty() { 0 } else { line_count(omitted) };
        let omitted_tokens = tokens::count(encoding, omitted);
        let marker = format!(
            "{MARKER} original {original_tokens} tokens, {chars} chars, {total_lines} lines; \
             omitted {omitted_lines} lines after line {head_lines} ({omitted_tokens} tokens).{}",
            hint(opts)
        );
        let mut out = String::with_capacity(head.len() + marker.len() + tail.len() + 2);
        out.push_str(head);
        if !head.is_empty() && !head.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&marker);
        out.push('\n');
        out.push_str(tail);
        let n = tokens::count(encoding, &out);
        if n <= opts.limit || keep == 0 {
            return out;
        }
        // Line sums and cut pieces can overshoot slightly: shrink by the excess and retry.
        keep = keep.saturating_sub((n - opts.limit).max(8));
    }
}

/// JSON outputs stay valid JSON: long strings and arrays are shortened, each with a note of what
/// was dropped, at the largest scale that fits the limit.
fn compact_json(encoding: Encoding, text: &str, original_tokens: usize, opts: &CompactOptions) -> Option<String> {
    let trimmed = text.trim();
    if !(trimmed.starts_with('{') || trimmed.starts_with('[')) {
        return None;
    }
    let value: Value = serde_json::from_str(trimmed).ok()?;
    let pretty = trimmed.contains('\n');
    let chars = text.chars().count();
    let note = format!(
        "{MARKER} original {original_tokens} tokens, {chars} chars; long strings and arrays shortened.{}",
        hint(opts)
    );
    let render = |scale: usize| -> Option<String> {
        let shrunk = shrink(&value, scale);
        let with_note = match shrunk {
            Value::Object(mut map) => {
                map.insert("_ctxguard".to_string(), Value::String(note.clone()));
                Value::Object(map)
            }
            Value::Array(mut items) => {
                items.push(Value::String(note.clone()));
                Value::Array(items)
            }
            other => other,
        };
        if pretty {
            serde_json::to_string_pretty(&with_note).ok()
        } else {
            serde_json::to_string(&with_note).ok()
        }
    };
    // Binary search the largest scale (items kept per array, chars kept per string / 8) that fits.
    let (mut lo, mut hi) = (1usize, 4096usize);
    let mut best: Option<String> = None;
    while lo <= hi {
        let mid = lo + (hi - lo) / 2;
        let out = render(mid)?;
        if tokens::count_till_limit(encoding, &out, opts.limit).is_some() {
            best = Some(out);
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    best
}

/// Keep at most `scale` items of each array (two thirds from the start, the rest from the end)
/// and `8 * scale` chars of each string, noting what was dropped.
fn shrink(value: &Value, scale: usize) -> Value {
    match value {
        Value::String(s) => {
            let cap = scale.saturating_mul(8);
            let n = s.chars().count();
            if n <= cap {
                value.clone()
            } else {
                let kept: String = s.chars().take(cap).collect();
                Value::String(format!("{kept}…[+{} chars]", n - cap))
            }
        }
        Value::Array(items) => {
            if items.len() <= scale {
                return Value::Array(items.iter().map(|v| shrink(v, scale)).collect());
            }
            let head = (scale * 2).div_ceil(3);
            let tail = scale - head;
            let dropped = items.len() - head - tail;
            let mut out: Vec<Value> = items.iter().take(head).map(|v| shrink(v, scale)).collect();
            out.push(Value::String(format!("[… {dropped} items omitted …]")));
            out.extend(items.iter().skip(items.len() - tail).map(|v| shrink(v, scale)));
            Value::Array(out)
        }
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), shrink(v, scale))).collect()),
        other => other.clone(),
    }
}
