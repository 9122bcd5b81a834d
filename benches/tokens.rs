//! The tokenizer's speed, natively (never part of `cargo test`: tests assert work counters, this
//! file measures time). Moved here from `tests/tokens_bench.rs` and from the printed timings of
//! `tests/tokens/linear.rs` and `tests/gemini/linear.rs`.
//!
//!   cargo bench --bench tokens                         throughput, first-use, long-piece, adversarial
//!   cargo bench --bench tokens -- throughput           ours vs tiktoken-rs's `encode_ordinary`, MB/s
//!   cargo bench --bench tokens -- first-use            building each encoding's table
//!   cargo bench --bench tokens -- long-piece           time per MB of long single pieces ÷ prose
//!   cargo bench --bench tokens -- adversarial          megabyte adversarial inputs: ms, MB/s, ÷ prose,
//!                                                      and the work counters; `--features gemini`
//!                                                      adds gemma3
//!   cargo bench --bench tokens -- ours-only            ours alone on the throughput inputs (profiling)
//!   CTXGUARD_BENCH_FILES=a.txt,b.txt cargo bench --bench tokens -- files
//!                                                      counts each file once (`CTXGUARD_BENCH_RUNS`
//!                                                      times), no timing: for `valgrind --tool=callgrind
//!                                                      --toggle-collect='*count_files*'`, whose instruction
//!                                                      counts do not depend on the machine's load
//!   CTXGUARD_BENCH_DUMP=f.json cargo bench --bench tokens -- dump-inputs
//!                                                      the throughput inputs as JSON {name: text}, to
//!                                                      measure the same texts through the wasm build
//!
//! `CTXGUARD_BENCH_RUNS` sets the runs per measurement (medians; default 5, long-piece 9,
//! ours-only 20), `CTXGUARD_BENCH_ONLY` keeps the inputs whose name contains it,
//! `CTXGUARD_BENCH_ENC=o200k_base|cl100k_base` picks ours-only's encoding.
//! Times are this thread's on-CPU time (Linux `schedstat`), because the machines are shared;
//! each sample repeats the count for at least 0.2 s of CPU time.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

#[path = "../tests/tokens/common.rs"]
mod tokens_common;

use std::time::Instant;

use ctxguard::tokens::Encoding;
use tokens_common::*;

const MODES: [(&str, fn()); 7] = [
    ("throughput", throughput),
    ("first-use", first_use_cost),
    ("long-piece", long_piece_ratio),
    ("adversarial", adversarial),
    ("ours-only", ours_only),
    ("dump-inputs", dump_inputs),
    ("files", files),
];

fn main() {
    // `cargo bench` passes `--bench`; other flags are cargo's too.
    let asked: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    if asked.is_empty() {
        for (name, f) in MODES.iter().take(4) {
            println!("\n## {name}");
            f();
        }
        return;
    }
    for a in &asked {
        match MODES.iter().find(|(name, _)| name == a) {
            Some((name, f)) => {
                println!("\n## {name}");
                f();
            }
            None => {
                eprintln!("unknown benchmark {a:?}; one of: {}", MODES.map(|(n, _)| n).join(", "));
                std::process::exit(2);
            }
        }
    }
}

/// Nanoseconds this thread has spent on a CPU (Linux), so that other processes competing for the
/// cores do not count; wall-clock time elsewhere.
struct Clock(Option<u64>, Instant);

fn on_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

impl Clock {
    fn start() -> Self {
        Clock(on_cpu_ns(), Instant::now())
    }
    fn secs(&self) -> f64 {
        match (self.0, on_cpu_ns()) {
            (Some(a), Some(b)) => (b - a) as f64 / 1e9,
            _ => self.1.elapsed().as_secs_f64(),
        }
    }
}

/// Runs `f` repeatedly until at least 0.2 s of CPU time has passed (the CPU clock advances in
/// scheduler ticks of a few ms) and returns MB/s for `bytes` per run, plus the last result.
fn rate<T>(bytes: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let clock = Clock::start();
    let mut runs = 0u32;
    loop {
        let out = std::hint::black_box(f());
        runs += 1;
        let secs = clock.secs();
        if secs >= 0.2 {
            return (bytes as f64 * runs as f64 / secs / 1e6, out);
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn runs(default: usize) -> usize {
    std::env::var("CTXGUARD_BENCH_RUNS").ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

fn only() -> String {
    std::env::var("CTXGUARD_BENCH_ONLY").unwrap_or_default()
}

fn inputs() -> Vec<(&'static str, String)> {
    let mut rng = Rng::new(2024);
    let mb = 1 << 20;
    vec![
        ("1 MB prose", repeat_to(PROSE, mb)),
        ("1 MB code", repeat_to(CODE, mb)),
        ("1 MB JSON", repeat_to(JSON, mb)),
        ("1 MB CJK text", repeat_to(CJK, mb)),
        ("1 MB mixed", mixed(&mut rng, mb)),
        ("1 MB no ws: 'a'", "a".repeat(mb)),
        ("1 MB no ws: letters", random_letters(&mut rng, mb)),
        ("1 MB no ws: CJK", random_cjk(&mut rng, mb / 3)),
        ("5 MB base64 URL", format!("data:image/png;base64,{}", random_base64(&mut rng, 5 * mb))),
    ]
}

/// Our counter against tiktoken-rs's `encode_ordinary`, MB/s (medians), the same counts.
fn throughput() {
    let runs = runs(5);
    let only = only();
    println!("{:12} {:22} {:>10} {:>10} {:>8}", "encoding", "input", "ours MB/s", "tiktoken", "ratio");
    for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
        let t = ours(enc);
        let r = reference(enc);
        t.count("warm up");
        r.encode_ordinary("warm up");
        for (name, text) in inputs() {
            if !name.contains(only.as_str()) {
                continue;
            }
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let mut counts = (0, 0);
            for _ in 0..runs {
                let (x, n) = rate(text.len(), || t.count(&text));
                a.push(x);
                counts.0 = n;
                let (x, n) = rate(text.len(), || r.encode_ordinary(&text).len());
                b.push(x);
                counts.1 = n;
            }
            assert_eq!(counts.0, counts.1, "{name}");
            let (a, b) = (median(a), median(b));
            println!("{:12} {name:22} {a:10.1} {b:10.1} {:7.2}x", enc.as_str(), a / b);
        }
    }
}

/// Building our table includes building (and dropping) a tiktoken-rs CoreBPE.
fn first_use_cost() {
    for enc in [Encoding::Cl100kBase, Encoding::O200kBase] {
        let s = Clock::start();
        let _ = ctxguard::tokens::tokenizer(enc).unwrap();
        let ours_ms = s.secs() * 1e3;
        let s = Clock::start();
        let core = match enc {
            Encoding::O200kBase => tiktoken_rs::o200k_base(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base(),
            _ => unreachable!(),
        }
        .unwrap();
        let tk_ms = s.secs() * 1e3;
        drop(core);
        println!("{:12} first use: ours {ours_ms:.0} ms (tiktoken-rs CoreBPE alone {tk_ms:.0} ms)", enc.as_str());
    }
}

/// Our counter alone on one input, for profiling.
fn ours_only() {
    let runs = runs(20);
    let only = only();
    let enc = Encoding::from_name(&std::env::var("CTXGUARD_BENCH_ENC").unwrap_or("o200k_base".into())).unwrap();
    let t = ours(enc);
    t.count("warm up");
    for (name, text) in inputs() {
        if !name.contains(only.as_str()) {
            continue;
        }
        t.count(&text);
        let v: Vec<f64> = (0..runs).map(|_| rate(text.len(), || t.count(&text)).0).collect();
        println!("{:12} {name:22} {:8.1} MB/s", enc.as_str(), median(v));
    }
}

/// Counts the files of `$CTXGUARD_BENCH_FILES` (comma-separated; `.json` files are read as
/// chats: the strings of each message counted one by one, as benches/run.mjs does).
fn files() {
    let enc = Encoding::from_name(&std::env::var("CTXGUARD_BENCH_ENC").unwrap_or("o200k_base".into())).unwrap();
    let t = ours(enc);
    t.count("warm up");
    let runs = runs(1);
    for path in std::env::var("CTXGUARD_BENCH_FILES").unwrap_or_default().split(',').filter(|p| !p.is_empty()) {
        let raw = std::fs::read_to_string(path).unwrap();
        let texts: Vec<String> = if path.ends_with(".json") { chat_strings(&raw) } else { vec![raw] };
        let bytes: usize = texts.iter().map(String::len).sum();
        let n = count_files(t, &texts, runs);
        println!("{:12} {path}: {bytes} bytes, {n} tokens", enc.as_str());
    }
}

/// The strings a chat client counts for each message of a chat (benches/lib/measure.mjs).
fn chat_strings(json: &str) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    let mut out = Vec::new();
    for m in v.as_array().unwrap() {
        match &m["content"] {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Array(parts) => out.extend(
                parts.iter().filter(|p| p["type"] == "text").filter_map(|p| p["text"].as_str().map(String::from)),
            ),
            _ => {}
        }
        for c in m["tool_calls"].as_array().into_iter().flatten() {
            out.extend(["name", "arguments"].iter().filter_map(|k| c["function"][k].as_str().map(String::from)));
        }
    }
    out
}

#[inline(never)]
fn count_files(t: &ctxguard::tokens::Tokenizer, texts: &[String], runs: usize) -> usize {
    let mut n = 0;
    for _ in 0..runs {
        n = texts.iter().map(|s| t.count(std::hint::black_box(s))).sum();
    }
    n
}

/// Writes the throughput inputs as a JSON object `{name: text}` to `$CTXGUARD_BENCH_DUMP`.
fn dump_inputs() {
    let Ok(path) = std::env::var("CTXGUARD_BENCH_DUMP") else {
        eprintln!("set CTXGUARD_BENCH_DUMP to the file to write");
        std::process::exit(2);
    };
    let map: serde_json::Map<String, serde_json::Value> =
        inputs().into_iter().map(|(k, v)| (k.to_string(), serde_json::Value::String(v))).collect();
    std::fs::write(&path, serde_json::to_string(&map).unwrap()).unwrap();
    println!("wrote {path}");
}

/// Time per MB of long single pieces ÷ time per MB of prose (adversarial input within 2× of
/// prose is the aim), ours only. Runs alternate prose and the long-piece input; the ratio is the
/// median of the per-round ratios.
fn long_piece_ratio() {
    let runs = runs(9);
    let only = only();
    let mut rng = Rng::new(7);
    let mb = 1 << 20;
    let prose = repeat_to(PROSE, mb);
    let long: Vec<(&str, String)> = vec![
        ("letters", random_letters(&mut rng, mb)),
        ("'a'", "a".repeat(mb)),
        ("'ab'", "ab".repeat(mb / 2)),
        ("CJK no ws", random_cjk(&mut rng, mb / 3)),
        ("base64 5 MB", format!("data:image/png;base64,{}", random_base64(&mut rng, 5 * mb))),
    ];
    for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
        let t = ours(enc);
        t.count("warm up");
        for (name, text) in &long {
            if !name.contains(only.as_str()) {
                continue;
            }
            t.count(text);
            let (mut ratios, mut ps, mut ls) = (Vec::new(), Vec::new(), Vec::new());
            for round in 0..runs {
                let (p, l) = if round % 2 == 0 {
                    let p = rate(prose.len(), || t.count(&prose)).0;
                    (p, rate(text.len(), || t.count(text)).0)
                } else {
                    let l = rate(text.len(), || t.count(text)).0;
                    (rate(prose.len(), || t.count(&prose)).0, l)
                };
                ratios.push(p / l);
                ps.push(p);
                ls.push(l);
            }
            println!(
                "{:12} {name:12} prose {:6.1} MB/s, {:6.1} MB/s, time per MB ÷ prose {:5.2}x",
                enc.as_str(),
                median(ps),
                median(ls),
                median(ratios)
            );
        }
    }
}

/// The megabyte adversarial inputs of `tests/tokens/linear.rs` and `tests/gemini/linear.rs`
/// (which assert their work counters), timed: runs of one character, random letters and base64,
/// CJK without spaces, a 5 MB data URL; for gemma3 also the inputs its symbol matcher walks into.
fn adversarial_inputs(enc: Encoding) -> Vec<(&'static str, String)> {
    let mut rng = Rng::new(1);
    let mb = 1 << 20;
    let mut v = vec![
        ("1 MB of 'a'", "a".repeat(mb)),
        ("1 MB of '7'", "7".repeat(mb)),
        ("1 MB of spaces", " ".repeat(mb)),
        ("1 MB of newlines", "\n".repeat(mb)),
        ("1 MB random letters", random_letters(&mut rng, mb)),
        ("1 MB random base64", random_base64(&mut rng, mb)),
        ("1 MB CJK, no spaces", random_cjk(&mut rng, mb / 3)),
        ("5 MB base64 data URL", format!("data:image/png;base64,{}", random_base64(&mut rng, 5 * mb))),
    ];
    if enc == Encoding::Gemma3 {
        v.push(("1 MB almost a symbol", "<start_of_tur".repeat(mb / 13)));
        v.push(("1 MB of U+2581", "\u{2581}".repeat(mb / 3)));
    }
    v
}

fn adversarial() {
    let runs = runs(5);
    let only = only();
    let mb = 1 << 20;
    let prose = repeat_to(PROSE, mb);
    let encodings = [Encoding::O200kBase, Encoding::Cl100kBase, Encoding::Gemma3];
    println!(
        "{:12} {:22} {:>8} {:>8} {:>9} {:>9} {:>8} {:>8} {:>7}",
        "encoding", "input", "tokens", "pieces", "longest B", "queue ops", "ms/MB", "MB/s", "÷ prose"
    );
    for enc in encodings.into_iter().filter(|e| e.is_available()) {
        let t = ours(enc);
        t.count("warm up");
        let prose_rate = median((0..runs).map(|_| rate(prose.len(), || t.count(&prose)).0).collect());
        let ms_per_mb = |rate: f64| mb as f64 / rate / 1e3;
        println!(
            "{:12} {:22} {:>37} {:8.1} {prose_rate:8.1} {:7.2}",
            enc.as_str(),
            "1 MB prose",
            "",
            ms_per_mb(prose_rate),
            1.0
        );
        for (name, text) in adversarial_inputs(enc) {
            if !name.contains(only.as_str()) {
                continue;
            }
            let stats = t.count_with_stats(&text);
            let r = median((0..runs).map(|_| rate(text.len(), || t.count(&text)).0).collect());
            println!(
                "{:12} {name:22} {:>8} {:>8} {:>9} {:>9} {:8.1} {r:8.1} {:7.2}",
                enc.as_str(),
                stats.tokens,
                stats.pieces,
                stats.longest_piece,
                stats.queue_ops,
                ms_per_mb(r),
                prose_rate / r
            );
        }
    }
}
