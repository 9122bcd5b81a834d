//! Decoding errors in a JavaScript caller's terms. serde names Rust types ("expected f64",
//! "invalid type: string \"128000\"") and lists every field of an options struct; a JS caller
//! wants "expected a number, got the string \"128000\"" and, for a typo, the field it meant.
//! [`js_terms`] rewrites serde's messages; [`closest`] is the one "did you mean" rule (the
//! counting builds' options use it too).

/// The candidate `name` most likely meant: the same name in another case, else the nearest by
/// edit distance (insertions, deletions, substitutions and swaps of two neighbours, compared
/// in lower case) within a third of the name's length (at least 1, at most 3). Ties go to the
/// first candidate.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = name.to_lowercase();
    let limit = (lower.chars().count() / 3).clamp(1, 3);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c == name {
            continue;
        }
        let d = distance(&lower, &c.to_lowercase());
        if d <= limit && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// Optimal string alignment distance between two strings, by chars.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows: the one two back (for swaps), the previous one, the current one.
    let mut back: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur: Vec<usize> = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        if let Some(first) = cur.first_mut() {
            *first = i + 1;
        }
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            let del = prev.get(j + 1).map_or(usize::MAX, |v| v + 1);
            let ins = cur.get(j).map_or(usize::MAX, |v| v + 1);
            let sub = prev.get(j).map_or(usize::MAX, |v| v + cost);
            let mut d = del.min(ins).min(sub);
            let swapped = i > 0 && j > 0 && a.get(i - 1) == Some(cb) && b.get(j - 1) == Some(ca);
            if swapped {
                d = d.min(back.get(j - 1).map_or(usize::MAX, |v| v + 1));
            }
            if let Some(slot) = cur.get_mut(j + 1) {
                *slot = d;
            }
        }
        std::mem::swap(&mut back, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev.last().copied().unwrap_or(0)
}

/// The names between backticks in `list` ("`a`, `b` or `c`").
fn quoted(list: &str) -> Vec<&str> {
    list.split('`').skip(1).step_by(2).collect()
}

/// serde's name of a type, as a JS caller says it.
fn expected_in_js(expected: &str) -> String {
    let e = expected.trim();
    let js = match e {
        "f64" | "f32" => "a number",
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a whole number (0 or more)",
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "a whole number",
        "a boolean" | "bool" => "true or false",
        "a string" | "a borrowed string" | "string" => "a string",
        "a sequence" => "an array",
        "a map" => "an object",
        "unit" => "null",
        _ if e.starts_with("struct ") => "an object",
        _ if e.starts_with("a sequence") || e.starts_with("a tuple") => "an array",
        _ => return e.to_string(),
    };
    js.to_string()
}

/// serde's description of the value it got (`string "128000"`, `integer `5``, `map`...), in JS
/// terms; `Some(number)` too when it is a string that holds a number.
fn got_in_js(got: &str) -> (String, Option<String>) {
    let g = got.trim();
    if let Some(s) = g.strip_prefix("string ") {
        let inner = s.trim_matches('"');
        let numeric = !inner.trim().is_empty() && inner.trim().parse::<f64>().is_ok_and(f64::is_finite);
        return (format!("the string {s}"), numeric.then(|| inner.trim().to_string()));
    }
    let unticked = |rest: &str| rest.trim().trim_matches('`').to_string();
    if let Some(n) = g.strip_prefix("integer ").or_else(|| g.strip_prefix("floating point ")) {
        return (format!("the number {}", unticked(n)), None);
    }
    if let Some(b) = g.strip_prefix("boolean ") {
        return (unticked(b), None);
    }
    let js = match g {
        "map" => "an object",
        "sequence" => "an array",
        "unit value" | "null" => "null",
        "string" => "a string",
        _ => g,
    };
    (js.to_string(), None)
}

/// One serde decoding message (without its "at line … column …"), in a JS caller's terms:
/// a typo'd field or variant gets "did you mean `x`?", a wrong type says what was given and
/// what is expected as JS names them (`contextWindow: '128000'` reads "expected a number, got
/// the string \"128000\" (write 128000, without quotes)"). Other messages are returned as they
/// are.
pub fn js_terms(message: &str) -> String {
    for (head, what) in [("unknown field `", "field"), ("unknown variant `", "value")] {
        if let Some(rest) = message.strip_prefix(head) {
            let Some((name, tail)) = rest.split_once('`') else { break };
            let names = match tail.split_once("expected ") {
                Some((_, list)) => quoted(list),
                None => Vec::new(),
            };
            if let Some(c) = closest(name, names.iter().copied()) {
                return format!("unknown {what} `{name}`; did you mean `{c}`?");
            }
            let known = match tail.split_once("expected ") {
                Some((_, list)) => format!(" (known: {})", list.trim_start_matches("one of ")),
                None if tail.contains("there are no fields") => " (this object takes no fields)".to_string(),
                None => String::new(),
            };
            return format!("unknown {what} `{name}`{known}");
        }
    }
    for head in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = message.strip_prefix(head) {
            let Some((got, expected)) = rest.rsplit_once(", expected ") else { break };
            let (got, number) = got_in_js(got);
            let expected = expected_in_js(expected);
            let hint = match number {
                Some(n) if expected.contains("number") => format!(" (write {n}, without quotes)"),
                _ => String::new(),
            };
            return format!("expected {expected}, got {got}{hint}");
        }
    }
    message.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_find_the_field_meant() {
        let fields = ["model", "contextWindow", "summarize", "onProgress", "onTrace"];
        assert_eq!(closest("summarise", fields), Some("summarize"));
        assert_eq!(closest("onprogress", fields), Some("onProgress"));
        assert_eq!(closest("contextWindw", fields), Some("contextWindow"));
        assert_eq!(closest("modle", fields), Some("model"));
        assert_eq!(closest("temperature", fields), None);
        assert_eq!(closest("x", fields), None);
    }

    #[test]
    fn distance_counts_swaps_once() {
        assert_eq!(distance("modle", "model"), 1);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("abc", "abc"), 0);
        assert_eq!(distance("kitten", "sitting"), 3);
    }

    #[test]
    fn unknown_fields_name_the_one_meant() {
        let m = js_terms("unknown field `summarise`, expected one of `system`, `tools`, `summarize`");
        assert_eq!(m, "unknown field `summarise`; did you mean `summarize`?");
        let m = js_terms("unknown field `encodnig`, expected `encoding` or `model`");
        assert_eq!(m, "unknown field `encodnig`; did you mean `encoding`?");
        let m = js_terms("unknown field `temperature`, expected `encoding` or `model`");
        assert_eq!(m, "unknown field `temperature` (known: `encoding` or `model`)");
        let m = js_terms("unknown field `zzz`, there are no fields");
        assert_eq!(m, "unknown field `zzz` (this object takes no fields)");
        let m = js_terms("unknown variant `antropic`, expected one of `openai`, `anthropic`, `gemini`");
        assert_eq!(m, "unknown value `antropic`; did you mean `anthropic`?");
    }

    #[test]
    fn wrong_types_in_js_terms() {
        assert_eq!(
            js_terms("invalid type: string \"128000\", expected f64"),
            "expected a number, got the string \"128000\" (write 128000, without quotes)"
        );
        assert_eq!(
            js_terms("invalid type: string \"lots\", expected u32"),
            "expected a whole number (0 or more), got the string \"lots\""
        );
        assert_eq!(js_terms("invalid type: map, expected a string"), "expected a string, got an object");
        assert_eq!(js_terms("invalid type: boolean `true`, expected f64"), "expected a number, got true");
        assert_eq!(
            js_terms("invalid value: integer `-1`, expected u32"),
            "expected a whole number (0 or more), got the number -1"
        );
        assert_eq!(
            js_terms("invalid type: sequence, expected struct ClearSetting"),
            "expected an object, got an array"
        );
        assert_eq!(js_terms("a number of tokens or { usd: number }"), "a number of tokens or { usd: number }");
    }
}
