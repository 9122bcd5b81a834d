//! Tools that are sent but not in the model's context until loaded.

use serde_json::Value;

use crate::message::{Content, Message, Part, ToolDef};

/// Anthropic's tool search (docs/edits.md, "Provider artifacts"): a tool with `defer_loading:
/// true` is sent in `tools` but enters the context only once a `tool_reference` block in the
/// conversation names it. The tools in context, or `None` when no tool is deferred (all are).
pub fn in_context(tools: &[ToolDef], messages: &[Message]) -> Option<Vec<ToolDef>> {
    let deferred = |t: &ToolDef| t.extra.get("defer_loading") == Some(&Value::Bool(true));
    if !tools.iter().any(deferred) {
        return None;
    }
    let mut named = rustc_hash::FxHashSet::default();
    for m in messages {
        if let Content::Parts(parts) = &m.content {
            for p in parts {
                if let Part::Unknown { value } = p {
                    references(value, &mut named);
                }
            }
        }
    }
    Some(tools.iter().filter(|t| !deferred(t) || named.contains(t.name.as_str())).cloned().collect())
}

/// The `tool_name` of every `tool_reference` block in `v`, however deep.
fn references<'a>(v: &'a Value, out: &mut rustc_hash::FxHashSet<&'a str>) {
    match v {
        Value::Object(o) => {
            if o.get("type").and_then(|t| t.as_str()) == Some("tool_reference") {
                if let Some(name) = o.get("tool_name").and_then(|n| n.as_str()) {
                    out.insert(name);
                }
            }
            o.values().for_each(|x| references(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| references(x, out)),
        _ => {}
    }
}
