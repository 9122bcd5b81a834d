//! The shape of `src/` that docs/architecture.md promises, beside the layers (`layers.rs`): the
//! guard's `impl` blocks in the guard's own folder; no function so wide that it needs clippy's
//! `too_many_arguments` allowed (a context value instead).

use std::fs;
use std::path::{Path, PathBuf};

use super::layers::rust_files;

fn sources() -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    rust_files(Path::new("src"), &mut files);
    files.sort();
    files.into_iter().map(|p| (p.clone(), fs::read_to_string(&p).unwrap())).collect()
}

#[test]
fn the_guard_is_implemented_in_its_folder() {
    let outside: Vec<String> = sources()
        .into_iter()
        .filter(|(p, text)| {
            !p.starts_with("src/guard") && text.lines().any(|l| l.trim_start().starts_with("impl Guard"))
        })
        .map(|(p, _)| p.display().to_string())
        .collect();
    assert!(outside.is_empty(), "`impl Guard` outside src/guard/: {outside:?}");
}

#[test]
fn no_function_needs_too_many_arguments() {
    let wide: Vec<String> = sources()
        .into_iter()
        .filter(|(_, text)| text.contains("clippy::too_many_arguments"))
        .map(|(p, _)| p.display().to_string())
        .collect();
    assert!(wide.is_empty(), "too_many_arguments allowed in {wide:?}: pass one context value instead");
}
