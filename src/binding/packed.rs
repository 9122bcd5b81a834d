//! JSON values handed over as a skeleton and their long strings (docs/performance-notes.md: `measure` from cold).
//!
//! Passing 5 MB of messages into wasm as one JSON text costs a `JSON.stringify` (escaping every
//! string), a pass over the text for lone surrogates and a full JSON parse of every string. The
//! binding (`src/js/memo.js`, `pack`) sends instead:
//!
//! - a *skeleton*: the JSON text of the values in which every string value that is long, or that
//!   starts with U+0000, is replaced by the placeholder `"\u0000"` (a string holding one NUL);
//! - the replaced strings, UTF-8-encoded one after the other, in the order their placeholders
//!   appear in the skeleton (document order; object keys in their written order).
//!
//! Both travel in one byte buffer: the skeleton first, then the strings; `lens[0]` is the
//! skeleton's length in bytes and `lens[1..]` the strings'. A string value that is exactly one
//! NUL can only be a placeholder (a real string starting with NUL is always sent out of line);
//! object keys are never placeholders. [`unpack`] gives the same values `serde_json` reads from
//! the JSON text of the original data.

use serde_json::Value;

/// The placeholder a replaced string leaves in the skeleton.
const PLACEHOLDER: &str = "\u{0}";

/// Rebuild the values of a packed transfer (see the module doc): the skeleton must be a JSON
/// array; each of its placeholders takes the next string. An error (never a panic) when the
/// skeleton is not JSON, a length overruns the buffer or splits a character, the strings are
/// not UTF-8, or placeholders and strings do not pair up exactly.
pub fn unpack(bytes: &[u8], lens: &[u32]) -> Result<Vec<Value>, String> {
    let (&skeleton_len, string_lens) = lens.split_first().ok_or("no skeleton length")?;
    let skeleton_len = skeleton_len as usize;
    let skeleton = bytes.get(..skeleton_len).ok_or("the skeleton overruns the buffer")?;
    // Each string is validated on its own as it is put back (`Fill`), not the whole buffer in
    // one call: V8 runs a WebAssembly call that is in its baseline code (Liftoff) to its end, so
    // one 5 MB validation ran entirely there on a cold `measure`; per string, the validation is
    // compiled with TurboFan after a few hundred and the rest use that (docs/performance-notes.md).
    let text = bytes.get(skeleton_len..).unwrap_or(&[]);
    // `from_str` (not `from_slice`): the one serde_json reader the rest of the crate already
    // instantiates; a second (SliceRead) would add ~17 KB of parser code to the .wasm. The
    // binding writes the skeleton with TextEncoder, so it is always UTF-8.
    let skeleton = std::str::from_utf8(skeleton).map_err(|e| format!("the skeleton is not a JSON array: {e}"))?;
    let values: Vec<Value> =
        serde_json::from_str(skeleton).map_err(|e| format!("the skeleton is not a JSON array: {e}"))?;
    let mut fill = Fill { text, at: 0, lens: string_lens.iter() };
    let mut values = values;
    for v in &mut values {
        fill.value(v)?;
    }
    if fill.lens.next().is_some() {
        return Err("more strings than placeholders".into());
    }
    if fill.at != text.len() {
        return Err("the string lengths do not cover the buffer".into());
    }
    Ok(values)
}

/// Puts the strings back, in document order.
struct Fill<'a, I> {
    text: &'a [u8],
    at: usize,
    lens: I,
}

impl<'a, I: Iterator<Item = &'a u32>> Fill<'a, I> {
    /// Depth is bounded by the skeleton's parse (serde_json's recursion limit).
    fn value(&mut self, v: &mut Value) -> Result<(), String> {
        match v {
            Value::String(s) if s == PLACEHOLDER => {
                let len = *self.lens.next().ok_or("more placeholders than strings")? as usize;
                let end = self.at.checked_add(len).ok_or("a string length overflows")?;
                let piece = self.text.get(self.at..end).ok_or("a string length overruns the buffer")?;
                let piece = std::str::from_utf8(piece)
                    .map_err(|e| format!("a string is not UTF-8 or a length splits a character: {e}"))?;
                *s = piece.to_owned();
                self.at = end;
            }
            Value::Array(items) => {
                for x in items {
                    self.value(x)?;
                }
            }
            Value::Object(map) => {
                for (_, x) in map.iter_mut() {
                    self.value(x)?;
                }
            }
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What the binding sends for `values`, replacing every string of at least `long` bytes
    /// (and every string starting with NUL).
    fn pack(values: &[Value], long: usize) -> (Vec<u8>, Vec<u32>) {
        fn walk(v: &Value, long: usize, out: &mut Vec<String>) -> Value {
            match v {
                Value::String(s) if s.len() >= long || s.starts_with('\0') => {
                    out.push(s.clone());
                    Value::String(PLACEHOLDER.into())
                }
                Value::Array(a) => Value::Array(a.iter().map(|x| walk(x, long, out)).collect()),
                Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), walk(x, long, out))).collect()),
                other => other.clone(),
            }
        }
        let mut strings = Vec::new();
        let skeleton: Vec<Value> = values.iter().map(|v| walk(v, long, &mut strings)).collect();
        let mut bytes = serde_json::to_vec(&skeleton).unwrap();
        let mut lens = vec![bytes.len() as u32];
        for s in &strings {
            bytes.extend_from_slice(s.as_bytes());
            lens.push(s.len() as u32);
        }
        (bytes, lens)
    }

    fn sample() -> Vec<Value> {
        vec![
            json!({"role": "user", "content": "hello there, a long enough string", "\u{0}": "key like a placeholder"}),
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\":\"\\u0000\"}"}}]}),
            json!({"role": "tool", "tool_call_id": "c1", "content": "日本語のテキスト 🎉 \u{0}\"\\\n\t", "x": ["", "\u{0}", "\u{0}abc", 1.5, -0.0, true, null, {"k": ""}]}),
        ]
    }

    #[test]
    fn round_trip_at_every_threshold() {
        let values = sample();
        for long in [0, 1, 2, 5, 16, 1000] {
            let (bytes, lens) = pack(&values, long);
            assert_eq!(unpack(&bytes, &lens).unwrap(), values, "threshold {long}");
        }
    }

    #[test]
    fn no_strings_out_of_line() {
        let values = vec![json!({"a": 1}), json!([])];
        let bytes = serde_json::to_vec(&values).unwrap();
        assert_eq!(unpack(&bytes, &[bytes.len() as u32]).unwrap(), values);
        assert_eq!(unpack(b"[]", &[2]).unwrap(), Vec::<Value>::new());
    }

    #[test]
    fn bad_input_is_an_error_not_a_panic() {
        let (bytes, lens) = pack(&sample(), 4);
        // No lengths at all, a skeleton longer than the buffer.
        assert!(unpack(&bytes, &[]).is_err());
        assert!(unpack(&bytes, &[bytes.len() as u32 + 1]).is_err());
        assert!(unpack(&bytes, &[u32::MAX]).is_err());
        // Malformed skeletons: cut short, not an array, not JSON.
        assert!(unpack(&bytes, &[lens[0] - 1]).is_err());
        assert!(unpack(b"{}", &[2]).is_err());
        assert!(unpack(b"[1,", &[3]).is_err());
        assert!(unpack(b"\xff", &[1]).is_err());
        // A string length that overruns, one too many, one too few, a huge one.
        let mut more = lens.clone();
        *more.last_mut().unwrap() += 1;
        assert!(unpack(&bytes, &more).is_err());
        let mut extra = lens.clone();
        extra.push(0);
        assert!(unpack(&bytes, &extra).is_err());
        assert!(unpack(&bytes, &lens[..lens.len() - 1]).is_err());
        let mut huge = lens.clone();
        huge[1] = u32::MAX;
        assert!(unpack(&bytes, &huge).is_err());
        // Lengths that cover the buffer but split a multi-byte character.
        let values = vec![json!(["é and more"])];
        let (bytes, lens) = pack(&values, 1);
        assert_eq!(unpack(&bytes, &lens).unwrap(), values);
        let mut skeleton = bytes[..lens[0] as usize].to_vec();
        skeleton.splice(1..1, b"\"\\u0000\",".iter().copied());
        let mut split = skeleton.clone();
        split.extend_from_slice(&bytes[lens[0] as usize..]);
        assert!(unpack(&split, &[skeleton.len() as u32, 1, lens[1] - 1]).is_err());
        // Invalid UTF-8 among the strings.
        let mut bad = bytes.clone();
        bad.push(0xff);
        let mut bad_lens = lens.clone();
        *bad_lens.last_mut().unwrap() += 1;
        assert!(unpack(&bad, &bad_lens).is_err());
        // A deep skeleton: serde_json's recursion limit, an error.
        let deep = format!("[{}{}]", "[".repeat(10_000), "]".repeat(10_000));
        assert!(unpack(deep.as_bytes(), &[deep.len() as u32]).is_err());
    }
}
