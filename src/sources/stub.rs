//! What a cleared tool output becomes (see `clearing.rs`): a one-line stub that names the tool,
//! its key arguments and its size, and says how to get the full output back. Deterministic:
//! the same output and options give the same stub, byte for byte.

use serde_json::Value;

/// The marker every stub starts with; recognizing it makes clearing idempotent.
pub const CLEARED_MARKER: &str = "[ctxguard:cleared-tool-output]";
/// Each key argument's value is clipped to this many characters.
const ARG_CHARS: usize = 60;

/// Quoted text without markup that ctxguard's own guards would act on: attachment blocks become
/// `[attachment]` and stray tags are defused, so the note stays stable under layer 1.
pub fn defuse(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for (start, end) in crate::count::attachment::blocks(s) {
        out.push_str(s.get(last..start).unwrap_or(""));
        out.push_str("[attachment]");
        last = end;
    }
    out.push_str(s.get(last..).unwrap_or(""));
    defuse_tags(&out)
}

/// Text with its attachment tags defused (`‹attachment`): kept as it is, but never read as an
/// attachment block by layer 1 (a summary that quotes one must stay byte-stable, and sealed).
pub fn defuse_tags(s: &str) -> String {
    s.replace("<attachment", "‹attachment").replace("</attachment>", "‹/attachment›")
}

pub fn clip(s: &str, n: usize) -> String {
    let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= n {
        one_line
    } else {
        let mut t: String = one_line.chars().take(n).collect();
        t.push('…');
        t
    }
}

/// `key=value` pairs of a JSON-object argument string (first four keys), else the text clipped.
pub fn key_args(arguments: &str) -> String {
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(map)) => map
            .iter()
            .take(4)
            .map(|(k, v)| {
                let s = match v {
                    Value::String(s) => s.clone(),
                    other => crate::base::json_text::text(other),
                };
                format!("{k}={}", clip(&s, ARG_CHARS))
            })
            .collect::<Vec<_>>()
            .join(", "),
        _ => clip(arguments, ARG_CHARS * 2),
    }
}

/// The stub of a cleared output of `tool` called with `arguments` (JSON text), `tokens` long.
pub fn stub_text(
    tool: Option<&str>,
    arguments: Option<&str>,
    tokens: usize,
    retrieval_tool: Option<&str>,
    call_id: Option<&str>,
) -> String {
    let name = tool.map_or_else(|| "a tool".to_string(), |t| clip(&defuse(t), ARG_CHARS));
    let args = arguments.map(|a| defuse(&key_args(a))).unwrap_or_default();
    let back = match (retrieval_tool, call_id) {
        (Some(tool), Some(id)) => format!(
            "Full output: call `{tool}` with {{\"id\": {}}}.",
            crate::base::json_text::text(&Value::String(id.to_string()))
        ),
        (Some(tool), None) => format!("Full output: call `{tool}`."),
        _ => "Call the tool again if it is needed.".to_string(),
    };
    format!("{CLEARED_MARKER} {name}({args}) returned {tokens} tokens; cleared as an older tool output. {back}")
}

/// Whether a text is a stub (a cleared output).
pub fn is_stub(text: &str) -> bool {
    text.starts_with(CLEARED_MARKER)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stub_names_the_tool_its_arguments_and_the_way_back() {
        let s = stub_text(
            Some("read_file"),
            Some(r#"{"path":"src/main.rs","lines":[1,200]}"#),
            2850,
            Some("get_output"),
            Some("call_7"),
        );
        assert_eq!(s, "[ctxguard:cleared-tool-output] read_file(path=src/main.rs, lines=[1,200]) returned 2850 tokens; cleared as an older tool output. Full output: call `get_output` with {\"id\": \"call_7\"}.");
        assert!(is_stub(&s));
        let plain = stub_text(None, None, 10, None, None);
        assert!(plain.ends_with("Call the tool again if it is needed."), "{plain}");
        // Markup in arguments is defused: a stub never carries an attachment block.
        let odd = stub_text(Some("t"), Some(r#"{"q":"<attachment id=\"x\">a</attachment>"}"#), 1, None, None);
        assert!(!odd.contains("<attachment"), "{odd}");
    }
}
