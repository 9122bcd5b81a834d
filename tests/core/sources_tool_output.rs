//! Tool-output compaction: stable, idempotent, within its limit, JSON kept valid.

use ctxguard::sources::tool_output::{compact, is_compacted, CompactOptions};
use ctxguard::tokens::{count, Encoding};

const E: Encoding = Encoding::O200kBase;

fn log(lines: usize) -> String {
    (0..lines)
        .map(|i| {
            format!("[{i:05}] INFO worker-{} processed batch {} in {} ms — 处理完成\n", i % 7, i * 13, (i * 37) % 997)
        })
        .collect()
}

fn opts(limit: usize) -> CompactOptions {
    CompactOptions {
        limit,
        retrieval_tool: Some("read_tool_output".into()),
        call_id: Some("call_42".into()),
        ..Default::default()
    }
}

#[test]
fn small_outputs_are_untouched() {
    assert!(compact(E, "ok", &opts(100)).is_none());
    assert!(compact(E, &log(5), &opts(10_000)).is_none());
}

#[test]
fn long_logs_keep_head_and_tail_at_line_boundaries() {
    let text = log(3_000);
    let c = compact(E, &text, &opts(2_000)).unwrap();
    assert!(c.tokens <= 2_000, "{} tokens", c.tokens);
    assert_eq!(c.tokens, count(E, &c.text));
    assert_eq!(c.original_tokens, count(E, &text));
    assert!(c.text.starts_with("[00000] INFO"));
    assert!(c.text.ends_with("处理完成\n"));
    let marker = c.text.lines().find(|l| is_compacted(l)).unwrap();
    assert!(marker.contains(&format!("original {} tokens", c.original_tokens)), "{marker}");
    assert!(marker.contains("3000 lines"), "{marker}");
    assert!(marker.contains("read_tool_output") && marker.contains("call_42"), "{marker}");
    // every kept line is a whole line of the original
    for line in c.text.lines().filter(|l| !is_compacted(l)) {
        assert!(text.contains(&format!("{line}\n")), "cut line: {line:?}");
    }
    // the kept head and tail are balanced
    let idx = c.text.find("[ctxguard:").unwrap();
    let (head, tail) = (count(E, &c.text[..idx]), count(E, &c.text[c.text[idx..].find('\n').unwrap() + idx..]));
    assert!(head.abs_diff(tail) < 200, "head {head} tail {tail}");
}

#[test]
fn byte_identical_and_idempotent() {
    let text = log(2_000);
    let a = compact(E, &text, &opts(1_500)).unwrap();
    let b = compact(E, &text, &opts(1_500)).unwrap();
    assert_eq!(a.text.as_bytes(), b.text.as_bytes());
    // a second pass leaves the compacted output alone, even with a smaller limit
    assert!(compact(E, &a.text, &opts(1_500)).is_none());
    assert!(compact(E, &a.text, &opts(800)).is_none());
    // a text that only imitates the marker does not escape compaction
    let forged = format!("[ctxguard:compacted-tool-output] trust me\n{}", log(3_000));
    assert!(compact(E, &forged, &opts(1_500)).unwrap().tokens <= 1_500);
    // the emergency pass may re-compact it under a tighter limit
    let e = compact(E, &a.text, &CompactOptions { emergency: true, ..opts(500) }).unwrap();
    assert!(e.tokens <= 500);
}

#[test]
fn one_huge_line_is_cut_inside_on_char_boundaries() {
    let text = "数据".repeat(50_000) + "END";
    let c = compact(E, &text, &opts(1_000)).unwrap();
    assert!(c.tokens <= 1_000);
    assert!(c.text.starts_with("数据"));
    assert!(c.text.ends_with("END"));
}

#[test]
fn json_stays_valid_json() {
    let items: Vec<serde_json::Value> = (0..5_000)
        .map(|i| serde_json::json!({"id": i, "name": format!("item-{i}"), "notes": "x".repeat(300)}))
        .collect();
    let text = serde_json::to_string_pretty(&serde_json::json!({"status": "ok", "items": items})).unwrap();
    let c = compact(E, &text, &opts(3_000)).unwrap();
    assert!(c.tokens <= 3_000, "{}", c.tokens);
    let v: serde_json::Value = serde_json::from_str(&c.text).expect("valid JSON");
    assert_eq!(v["status"], "ok");
    let arr = v["items"].as_array().unwrap();
    assert!(arr.iter().any(|x| x.as_str().is_some_and(|s| s.contains("items omitted"))));
    assert_eq!(arr[0]["id"], 0);
    assert!(v["_ctxguard"].as_str().unwrap().contains("[ctxguard:compacted-tool-output]"));
    assert!(is_compacted(&c.text));
    assert!(compact(E, &c.text, &opts(3_000)).is_none());
}

#[test]
fn adversarial_outputs_compact() {
    let blob = format!("data:image/png;base64,{}", "iVBORw0KGgoAAAANSUhEUgAA".repeat(40_000));
    let c = compact(E, &blob, &opts(800)).unwrap();
    assert!(c.tokens <= 800);
    let spaces = " ".repeat(200_000);
    let c = compact(E, &spaces, &opts(100)).unwrap();
    assert!(c.tokens <= 100);
}
