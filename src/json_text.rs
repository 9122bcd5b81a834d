//! JSON text as it arrives from JS.

use std::borrow::Cow;

/// Replace `\uD800`-`\uDFFF` escapes that are not part of a valid surrogate pair with `\uFFFD`
/// (serde_json rejects them; JSON.stringify emits them for lone surrogates).
pub fn repair_lone_surrogates(json: &str) -> Cow<'_, str> {
    if !crate::scan::contains_any(json, &["\\ud", "\\uD"]) {
        return Cow::Borrowed(json);
    }
    let bytes = json.as_bytes();
    let mut out = String::with_capacity(json.len());
    let mut i = 0;
    let mut last = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'\\' {
            if let Some(unit) = escape_unit(bytes, i) {
                if (0xD800..0xDC00).contains(&unit) {
                    if matches!(escape_unit(bytes, i + 6), Some(low) if (0xDC00..0xE000).contains(&low)) {
                        i += 12;
                        continue;
                    }
                    out.push_str(json.get(last..i).unwrap_or(""));
                    out.push_str("\\ufffd");
                    i += 6;
                    last = i;
                    continue;
                }
                if (0xDC00..0xE000).contains(&unit) {
                    out.push_str(json.get(last..i).unwrap_or(""));
                    out.push_str("\\ufffd");
                    i += 6;
                    last = i;
                    continue;
                }
            }
            // Skip the escaped character (so `\\` followed by `ud800` text is not misread).
            i += 2;
            continue;
        }
        i += 1;
    }
    out.push_str(json.get(last..).unwrap_or(""));
    Cow::Owned(out)
}

/// The code unit of a `\uXXXX` escape starting at `at`, if there is one.
fn escape_unit(bytes: &[u8], at: usize) -> Option<u32> {
    let esc = bytes.get(at..at + 6)?;
    if esc.first() != Some(&b'\\') || !matches!(esc.get(1), Some(b'u')) {
        return None;
    }
    let hex = std::str::from_utf8(esc.get(2..6)?).ok()?;
    u32::from_str_radix(hex, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fix(s: &str) -> String {
        repair_lone_surrogates(s).into_owned()
    }

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        assert_eq!(fix(r#""a\ud800b""#), r#""a\ufffdb""#);
        assert_eq!(fix(r#""\udc00""#), r#""\ufffd""#);
        assert_eq!(fix(r#""x\ud83d""#), r#""x\ufffd""#);
        // a valid pair is kept
        assert_eq!(fix(r#""\ud83d\ude00""#), r#""\ud83d\ude00""#);
        // an escaped backslash followed by text that looks like an escape is not an escape
        assert_eq!(fix(r#""\\ud800""#), r#""\\ud800""#);
        // the fixed text parses
        let v: serde_json::Value = serde_json::from_str(&fix(r#"{"t":"\ud800\ud800\udfff"}"#)).unwrap();
        assert_eq!(v["t"], "\u{fffd}\u{103ff}");
    }

    #[test]
    fn untouched_when_clean() {
        assert!(matches!(repair_lone_surrogates(r#"{"a":"b"}"#), Cow::Borrowed(_)));
    }
}
