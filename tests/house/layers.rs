//! The core's modules form layers (docs/architecture.md): a module may use the modules of the
//! layers below its own, never one above. This test reads `src/` and fails when a top-level
//! module names one of a higher layer (`crate::x`, `use crate::{x, ...}`), when a new top-level
//! module is not placed in a layer, or when the modules of one folder (`src/sources/*.rs`, ...)
//! use each other in a cycle. Unit tests at the end of a file (`#[cfg(test)]`) are not read.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The layers, lowest first: the folders of `src/`. A module uses only folders of its own layer
/// or lower ones.
const LAYERS: &[&[&str]] = &[
    &["base"],
    &["tokens"],
    &["message"],
    &["count"],
    &["format"],
    &["provider"],
    &["report"],
    &["sources"],
    &["guard"],
    &["pipeline"],
    &["binding"],
    &["wasm"],
];

/// Every `.rs` file under `dir` (shared with `shape.rs`).
pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file before its first `#[cfg(test)]`, without `//` comments.
fn code(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap();
    let body = text.split("#[cfg(test)]").next().unwrap_or("");
    body.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

fn ident_at(s: &str) -> Option<&str> {
    let end = s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(s.len());
    let id = &s[..end];
    (!id.is_empty() && id.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')).then_some(id)
}

/// The names a file reaches through `prefix` (`crate::` or `super::`): `prefix name` and the
/// first names of a `prefix{a, b::c}` group.
fn names_after(code: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find(prefix) {
        let after = &rest[i + prefix.len()..];
        if let Some(group) = after.strip_prefix('{') {
            let mut depth = 1;
            let mut item_start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => item_start = true,
                    c if c.is_whitespace() => {}
                    _ if depth == 1 && item_start => {
                        item_start = false;
                        if let Some(id) = ident_at(&group[j..]) {
                            out.insert(id.to_string());
                        }
                    }
                    _ => {}
                }
            }
        } else if let Some(id) = ident_at(after) {
            out.insert(id.to_string());
        }
        rest = after;
    }
    out
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// A cycle in `edges`, if any (as the path that closes it).
fn cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(n) {
            Some(1) => {
                let from = path.iter().position(|p| p == n).unwrap_or(0);
                let mut c = path[from..].to_vec();
                c.push(n.to_string());
                return Some(c);
            }
            Some(2) => return None,
            _ => {}
        }
        state.insert(n.to_string(), 1);
        path.push(n.to_string());
        for m in edges.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, edges, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    edges.keys().find_map(|n| visit(n, edges, &mut state, &mut Vec::new()))
}

struct Crate {
    /// Top-level module -> the top-level modules it uses.
    top: BTreeMap<String, BTreeSet<String>>,
    /// Folder module -> (its file modules -> the sibling file modules they use).
    folders: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
    /// The crate root's own items (functions in lib.rs), which every layer may use.
    root_items: BTreeSet<String>,
}

fn read_crate() -> Crate {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<String> = files
        .iter()
        .filter_map(|p| {
            let rel = p.strip_prefix(&src).ok()?;
            let first = rel.components().next()?.as_os_str().to_str()?.trim_end_matches(".rs").to_string();
            (first != "lib").then_some(first)
        })
        .collect();
    let mut top: BTreeMap<String, BTreeSet<String>> = modules.iter().map(|m| (m.clone(), BTreeSet::new())).collect();
    let mut folders: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    let mut root_items = BTreeSet::new();
    for p in &files {
        let rel = p.strip_prefix(&src).unwrap();
        let parts: Vec<String> =
            rel.components().map(|c| c.as_os_str().to_str().unwrap().trim_end_matches(".rs").to_string()).collect();
        let code = code(p);
        if parts == ["lib"] {
            root_items.extend(
                code.lines()
                    .filter_map(|l| {
                        l.trim_start().strip_prefix("pub fn ").or_else(|| l.trim_start().strip_prefix("pub(crate) fn "))
                    })
                    .filter_map(|r| ident_at(r).map(str::to_string)),
            );
            continue;
        }
        let module = &parts[0];
        let used = names_after(&code, "crate::");
        top.get_mut(module).unwrap().extend(used.iter().filter(|n| *n != module && modules.contains(*n)).cloned());
        // A file directly inside a folder module: its uses of sibling files.
        if parts.len() == 2 && parts[1] != "mod" {
            let siblings: BTreeSet<String> = files
                .iter()
                .filter_map(|q| {
                    let r = q.strip_prefix(&src).ok()?;
                    let c: Vec<&str> = r.components().filter_map(|c| c.as_os_str().to_str()).collect();
                    (c.len() == 2 && c[0] == module && c[1] != "mod.rs")
                        .then(|| c[1].trim_end_matches(".rs").to_string())
                })
                .collect();
            let mut sib_used = names_after(&code, "super::");
            sib_used.extend(names_after(&code, &format!("crate::{module}::")));
            let entry = folders.entry(module.clone()).or_default().entry(parts[1].clone()).or_default();
            entry.extend(sib_used.into_iter().filter(|n| *n != parts[1] && siblings.contains(n)));
        }
    }
    Crate { top, folders, root_items }
}

#[test]
fn no_module_uses_a_higher_layer() {
    let c = read_crate();
    let mut wrong = Vec::new();
    for (m, used) in &c.top {
        let Some(own) = layer_of(m) else {
            wrong.push(format!(
                "src/{m}: not placed in a layer (add it to LAYERS in tests/house/layers.rs and docs/architecture.md)"
            ));
            continue;
        };
        for u in used {
            match layer_of(u) {
                Some(l) if l <= own => {}
                Some(_) => {
                    wrong.push(format!("{m} (layer {own}) uses {u} (layer {}), a higher layer", layer_of(u).unwrap()))
                }
                None if c.root_items.contains(u) => {}
                None => wrong.push(format!("{m} uses {u}, which is in no layer")),
            }
        }
    }
    assert!(wrong.is_empty(), "layering broken:\n{}", wrong.join("\n"));
}

#[test]
fn src_holds_lib_rs_and_layer_folders_and_one_module_convention() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut stray = Vec::new();
    for e in fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        if p.is_file() && name != "lib.rs" {
            stray.push(format!("src/{name}: src/ holds lib.rs and folders only"));
        }
    }
    // `mod.rs` inside a folder, never `foo.rs` beside `foo/` (clippy's self_named_module_files).
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    for f in &files {
        if f.with_extension("").is_dir() && f.file_name().unwrap() != "lib.rs" {
            stray.push(format!("{}: a module file beside its folder (use the folder's mod.rs)", f.display()));
        }
    }
    assert!(stray.is_empty(), "{}", stray.join("\n"));
}

#[test]
fn no_cycle_between_top_level_modules() {
    let c = read_crate();
    assert_eq!(cycle(&c.top), None);
}

#[test]
fn no_cycle_between_the_files_of_a_folder() {
    let c = read_crate();
    for (folder, edges) in &c.folders {
        assert_eq!(cycle(edges), None, "src/{folder}/: its files use each other in a cycle");
    }
}

#[test]
fn the_scanner_sees_grouped_and_nested_uses() {
    let code = "use crate::{a::b, c, d::{e, f}};\nlet x = crate::g::h();\nuse super::{i, j::k};";
    assert_eq!(names_after(code, "crate::"), ["a", "c", "d", "g"].iter().map(|s| s.to_string()).collect());
    assert_eq!(names_after(code, "super::"), ["i", "j"].iter().map(|s| s.to_string()).collect());
    let mut edges = BTreeMap::new();
    edges.insert("x".to_string(), BTreeSet::from(["y".to_string()]));
    edges.insert("y".to_string(), BTreeSet::from(["x".to_string()]));
    assert!(cycle(&edges).is_some(), "a two-module loop is a cycle");
    // The real crate: every layer below `wasm` is used by something above it.
    let c = read_crate();
    assert!(c.top["pipeline"].contains("guard") && c.top["guard"].contains("sources"));
}
