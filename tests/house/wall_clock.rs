//! No test asserts on wall-clock time: tests assert behaviour, work counters, the number of
//! callback calls, the pauses the pipeline chose and the order of events; speed is measured in
//! `benches/`. A timed assert fails on a loaded machine for no change of the code (a 200 ms bound
//! on a page's longest task measured 216 ms on one run and 141 ms on another).
//!
//! This test reads every test source (`tests/**/*.{rs,mjs,js,cjs,ts,html}`, and the
//! `#[cfg(test)]` part of `src/**/*.rs`) and fails on
//! 1. a clock read: `Instant::now`, `SystemTime::now`, `.elapsed()`, `performance.now()`,
//!    `Date.now()`, `process.hrtime`, `console.time`, a `longtask` observer;
//! 2. a duration compared with a bound: `a < b`, `a <= b`, `a > b`, `a >= b` (spaced, as the
//!    formatters write comparisons) where one operand names a duration (`…Ms`, `…_ms`,
//!    `elapsed…`, `duration…`, `as_secs…`, `as_millis…`) and the other does not, unless the
//!    bound is `0` (a time is never negative). Two durations compared (elapsed grows) are an
//!    ordering, which is fine.
//!
//! What it cannot see: a race between a sleep and a timeout (a summarizer answering after 130 ms
//! under a 150 ms timeout), or a fixed sleep that stands for "long enough". Tests wait for the
//! event itself instead (a heartbeat, the summarizer being called); timeouts that only stop a
//! hung test (`waitForFunction(…, { timeout })`, `readyTimeoutMs` of a worker that never
//! serves) take no clock reading and are not flagged.
//!
//! `ALLOWED` lists the exceptions, each with its reason; an entry that no longer matches fails,
//! so the list stays what the suite holds.

use std::fs;
use std::path::{Path, PathBuf};

/// Reading the clock.
const CLOCK_READS: &[&str] = &[
    "Instant::now",
    "SystemTime::now",
    ".elapsed()",
    "performance.now(",
    "Date.now(",
    "process.hrtime",
    "console.time(",
    "console.timeEnd(",
    "'longtask'",
    "\"longtask\"",
];

/// Exceptions: (file under the repository, text on the line, why it is not a timed assert).
const ALLOWED: &[(&str, &str, &str)] = &[];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn walk(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for e in entries {
        let p = e.unwrap().path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_dir() {
            // Installed packages, build output, fuzz inputs and screenshots are not test code.
            if !matches!(name, "node_modules" | "dist" | "target" | "corpus" | "artifacts" | "results") {
                walk(&p, exts, out);
            }
        } else if exts.iter().any(|x| name.ends_with(&format!(".{x}"))) {
            out.push(p);
        }
    }
}

/// The lines of test code of `path` (numbered from 1): whole files under `tests/`, the part of a
/// `src/` file from its first `#[cfg(test)]` on. Comment lines are left out.
fn test_lines(path: &Path) -> Vec<(usize, String)> {
    let text = fs::read_to_string(path).unwrap_or_default();
    let from = if path.starts_with(root().join("src")) {
        match text.find("#[cfg(test)]") {
            Some(i) => text[..i].lines().count(),
            None => return Vec::new(),
        }
    } else {
        0
    };
    text.lines()
        .enumerate()
        .skip(from)
        .filter(|(_, l)| {
            let t = l.trim_start();
            !(t.starts_with("//") || t.starts_with("* ") || t.starts_with("/*") || t == "*")
        })
        .map(|(i, l)| (i + 1, l.to_string()))
        .collect()
}

const DURATION_WORDS: &[&str] =
    &["elapsed", "duration", "as_secs", "as_millis", "as_micros", "as_nanos", "_ms", "millis"];

/// Does this operand name a measured duration? `fooMs`, `foo_ms`, `elapsed`, `durationMs`,
/// `….as_secs()`... A constant built from a literal (`Duration::from_millis(500)`) is a bound.
fn is_duration(operand: &str) -> bool {
    if operand.starts_with("Duration::from") || operand.starts_with("std::time::Duration::from") {
        return false;
    }
    let lower = operand.to_ascii_lowercase();
    if DURATION_WORDS.iter().any(|w| lower.contains(w)) {
        return true;
    }
    // camelCase `…Ms` at the end of an identifier: a lowercase letter, then `Ms`, then no letter.
    let b = operand.as_bytes();
    (1..b.len().saturating_sub(1)).any(|i| {
        b[i - 1].is_ascii_lowercase()
            && b[i] == b'M'
            && b[i + 1] == b's'
            && !b.get(i + 2).is_some_and(|c| c.is_ascii_alphanumeric())
    })
}

/// The operand on one side of the operator at `at..at + len`, up to a delimiter at bracket depth
/// 0 (`,`, `;`, `&&`, `||`, `?`, `:` but not `::`, `=`, `!`, an unbalanced bracket, a quote).
fn operand(line: &str, at: usize, len: usize, forward: bool) -> String {
    let chars: Vec<char> =
        if forward { line[at + len..].chars().collect() } else { line[..at].chars().rev().collect() };
    let (open, close) = if forward { (['(', '['], [')', ']']) } else { ([')', ']'], ['(', '[']) };
    let mut depth = 0i32;
    let mut out = String::new();
    for (k, &c) in chars.iter().enumerate() {
        if open.contains(&c) {
            depth += 1;
        } else if close.contains(&c) {
            if depth == 0 {
                break;
            }
            depth -= 1;
        } else if depth == 0 {
            let next = chars.get(k + 1).copied();
            let prev = k.checked_sub(1).and_then(|p| chars.get(p)).copied();
            let path = c == ':' && (next == Some(':') || prev == Some(':'));
            let stop = (!path && matches!(c, ',' | ';' | '?' | ':' | '=' | '!' | '{' | '}' | '\'' | '"' | '`'))
                || (c == '&' && next == Some('&'))
                || (c == '|' && next == Some('|'))
                || (c == '<' || c == '>');
            if stop {
                break;
            }
        }
        out.push(c);
    }
    let out = if forward { out } else { out.chars().rev().collect() };
    out.trim().to_string()
}

/// The spaced comparisons of a line whose one side is a duration and the other a bound other
/// than 0: `(operator, left, right)`.
fn timed_comparisons(line: &str) -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    for op in [" <= ", " >= ", " < ", " > "] {
        let mut from = 0;
        while let Some(k) = line[from..].find(op) {
            let at = from + k;
            from = at + op.len();
            // ` > ` inside ` >= `, ` => `: the patterns above are spaced, so `=>` never matches.
            let left = operand(line, at, 0, false);
            let right = operand(line, at, op.len(), true);
            if left.is_empty() || right.is_empty() {
                continue;
            }
            let (l, r) = (is_duration(&left), is_duration(&right));
            let zero = |s: &str| s.parse::<f64>() == Ok(0.0);
            if l != r && !(l && zero(&right)) && !(r && zero(&left)) {
                found.push((op.trim().to_string(), left, right));
            }
        }
    }
    found
}

/// Every finding: (file, line number, what, the line).
fn findings() -> Vec<(String, usize, String, String)> {
    let root = root();
    let mut files = Vec::new();
    walk(&root.join("tests"), &["rs", "mjs", "js", "cjs", "ts", "html"], &mut files);
    walk(&root.join("src"), &["rs"], &mut files);
    files.sort();
    let me = root.join(file!());
    let mut out = Vec::new();
    for f in files.iter().filter(|f| **f != me) {
        let rel = f.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
        for (n, line) in test_lines(f) {
            for needle in CLOCK_READS.iter().filter(|x| line.contains(*x)) {
                out.push((rel.clone(), n, format!("reads the clock ({needle})"), line.trim().to_string()));
            }
            for (op, l, r) in timed_comparisons(&line) {
                out.push((
                    rel.clone(),
                    n,
                    format!("compares a duration with a bound ({l} {op} {r})"),
                    line.trim().to_string(),
                ));
            }
        }
    }
    out
}

#[test]
fn no_test_asserts_on_wall_clock_time() {
    let all = findings();
    let excused = |file: &str, line: &str| ALLOWED.iter().any(|(f, needle, _)| *f == file && line.contains(needle));
    let bad: Vec<String> = all
        .iter()
        .filter(|(file, _, _, line)| !excused(file, line))
        .map(|(file, n, what, line)| format!("{file}:{n}: {what}\n    {line}"))
        .collect();
    assert!(
        bad.is_empty(),
        "tests must not assert on wall-clock time (assert what the code does: work counters, \
         callback counts, the pauses it chose, the order of events; measure speed in benches/):\n{}",
        bad.join("\n")
    );
    for (file, needle, why) in ALLOWED {
        assert!(
            all.iter().any(|(f, _, _, line)| f == file && line.contains(needle)),
            "ALLOWED entry no longer needed, remove it: {file}: {needle:?} ({why})"
        );
    }
    for (file, n, what, _) in all.iter().filter(|(file, _, _, line)| excused(file, line)) {
        println!("excused: {file}:{n}: {what}");
    }
}

/// The scan itself: what it flags and what it leaves alone.
#[test]
fn the_scan_flags_timed_asserts_and_leaves_orderings_alone() {
    let flagged = |l: &str| !timed_comparisons(l).is_empty();
    for l in [
        "assert!(elapsed < Duration::from_millis(500), \"took {elapsed:?}\");",
        "assert!(start.elapsed().as_secs() < 5);",
        "assert.ok(record.durationMs >= 1000, 'the duration includes the summarizer delay');",
        "assert.ok(r.compaction.durationMs >= announced[0] + announced[1] - 5, 'x');",
        "assert.ok(firstMs < 50);",
        "assert!(stats.closes_in_ms > 100);",
        "assert.ok(5000 > r.elapsedMs);",
    ] {
        assert!(flagged(l), "{l}");
    }
    // Gaps between clock readings name no duration: the readings are what is flagged.
    for l in ["const t0 = performance.now();", "let start = Instant::now();", "calls.push(Date.now());"] {
        assert!(CLOCK_READS.iter().any(|x| l.contains(x)), "{l}");
    }
    for l in [
        "for (let i = 1; i < beats.length; i++) assert.ok(beats[i].elapsed >= beats[i - 1].elapsed, 'elapsed grows');",
        "assert.ok(t.durationMs >= 0);",
        "assert.ok(r.metrics.breaker.closesInMs > 0);",
        "assert.ok(announced[0] >= 50 && announced[0] <= 100, String(announced));",
        "let x: Vec<Option<Duration>> = Vec::new();",
        "fn f() -> Option<u64> {",
        "const f = (x) => x > 1;",
        "assert.ok(beats.length >= 2 && beats.every((b) => b.elapsedMs >= 0));",
        "assert!(stats.queue_ops <= 4 * len);",
    ] {
        assert!(!flagged(l), "{l}: {:?}", timed_comparisons(l));
    }
}
