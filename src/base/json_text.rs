//! JSON text as it arrives from JS.

use std::borrow::Cow;

/// Replace `\uD800`-`\uDFFF` escapes that are not part of a valid surrogate pair with `\uFFFD`
/// (serde_json rejects them; JSON.stringify emits them for lone surrogates).
pub fn repair_lone_surrogates(json: &str) -> Cow<'_, str> {
    if !crate::base::scan::contains_any(json, &["\\ud", "\\uD"]) {
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

/// The largest integer a JS number holds exactly (2^53 - 1).
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// The compact JSON text of `value`: exactly what `value.to_string()` (its `Display`) gives, but
/// through serde_json's `Vec<u8>` writer, which the crate has anyway; `Display` instantiates the
/// serializer twice more (compact and pretty, over a `fmt::Write` adapter). With no `Display`
/// of a `Value` left in the crate (`format!("{v}")` included), those instances are not linked.
/// Serializing a `Value` cannot fail (its keys are strings, its numbers finite).
pub fn text(value: &serde_json::Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// Turn every integer of magnitude 2^53 or more in `v` into the double nearest to it. Such an
/// integer came from a JS number (JSON.stringify writes `1.2345678901234567e19` as
/// `12345678901234567000`), and that double is the number it was: the round trip is exact.
/// serde-wasm-bindgen refuses to pass the integer back to JS (it is not a safe integer), so every
/// written wire message goes through this (`format::write_request`).
pub fn doubles_for_unsafe_integers(v: &mut serde_json::Value) {
    use serde_json::{Number, Value};
    match v {
        Value::Number(n) => {
            let unsafe_int = n
                .as_u64()
                .map(|u| u > MAX_SAFE_INTEGER)
                .or_else(|| n.as_i64().map(|i| i.unsigned_abs() > MAX_SAFE_INTEGER));
            if unsafe_int == Some(true) {
                if let Some(d) = n.as_f64().and_then(Number::from_f64) {
                    *n = d;
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(doubles_for_unsafe_integers),
        Value::Object(map) => map.values_mut().for_each(doubles_for_unsafe_integers),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn unsafe_integers_become_the_doubles_they_were() {
        let mut v: serde_json::Value = serde_json::from_str(r#"{"a":12345678901234567000,"b":[-9007199254740992,9007199254740991,-9007199254740991],"c":1.5,"d":"12345678901234567000"}"#).unwrap();
        doubles_for_unsafe_integers(&mut v);
        assert_eq!(v["a"].as_f64(), Some(12345678901234567000.0));
        assert!(v["a"].is_f64());
        assert!(v["b"][0].is_f64());
        assert_eq!(v["b"][0].as_f64(), Some(-9007199254740992.0));
        assert!(v["b"][1].is_u64() && v["b"][2].is_i64(), "safe integers stay integers");
        assert_eq!(v["c"].as_f64(), Some(1.5));
        assert_eq!(v["d"], "12345678901234567000");
    }

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
