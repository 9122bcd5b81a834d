//! A SentencePiece model file (`*.model`, the protobuf `sentencepiece_model.proto`) read into the
//! [`Spec`] that `spm_file` stores, after checking that the model is of the kind `spm.rs`
//! reproduces: BPE with byte fallback, an identity normalizer that keeps extra whitespace, spaces
//! escaped as U+2581 in front of pieces, and merge priorities that follow the ids (scores falling
//! strictly with the id), except for one group of pieces tied at the lowest score, merged last,
//! leftmost first (Mistral's runs of spaces). Used at build time: `examples/vocab` (Mistral's
//! models) and `tests/gemini/vocab_data.rs` (Gemma 3's); never in the `.wasm`.

use super::spm_file::Spec;

/// SentencePiece piece types.
pub const NORMAL: u64 = 1;
pub const UNKNOWN: u64 = 2;
pub const CONTROL: u64 = 3;
pub const USER_DEFINED: u64 = 4;
pub const BYTE: u64 = 6;

/// A piece of the model, by id.
#[derive(Debug, Clone)]
pub struct Piece {
    /// As the model has it (U+2581 for a space).
    pub text: String,
    pub score: f32,
    /// One of the piece types above.
    pub kind: u64,
}

/// A model's pieces and the normalizer facts the encoder needs.
#[derive(Debug, Clone)]
pub struct Model {
    pub pieces: Vec<Piece>,
    /// The normalizer puts U+2581 in front of the text (`add_dummy_prefix`).
    pub dummy_prefix: bool,
}

enum Field<'a> {
    Varint(u64),
    Fixed32(u32),
    Bytes(&'a [u8]),
    Other,
}

fn varint(b: &[u8], i: &mut usize) -> Result<u64, String> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let x = *b.get(*i).ok_or("truncated varint")?;
        *i += 1;
        v |= u64::from(x & 0x7F) << shift;
        if x < 0x80 {
            return Ok(v);
        }
    }
    Err("varint too long".to_string())
}

fn fields(b: &[u8]) -> Result<Vec<(u64, Field<'_>)>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let key = varint(b, &mut i)?;
        let f = match key & 7 {
            0 => Field::Varint(varint(b, &mut i)?),
            1 => {
                i += 8;
                Field::Other
            }
            2 => {
                let n = usize::try_from(varint(b, &mut i)?).map_err(|_| "length")?;
                let v = b.get(i..i.saturating_add(n)).ok_or("truncated field")?;
                i += n;
                Field::Bytes(v)
            }
            5 => {
                let v = b.get(i..i + 4).ok_or("truncated field")?;
                i += 4;
                Field::Fixed32(u32::from_le_bytes(v.try_into().map_err(|_| "fixed32")?))
            }
            w => return Err(format!("wire type {w}")),
        };
        out.push((key >> 3, f));
    }
    Ok(out)
}

fn varint_field(msg: &[u8], number: u64) -> Result<Option<u64>, String> {
    Ok(fields(msg)?.into_iter().rev().find_map(|(n, f)| match f {
        Field::Varint(v) if n == number => Some(v),
        _ => None,
    }))
}

fn bytes_field(msg: &[u8], number: u64) -> Result<Option<&[u8]>, String> {
    Ok(fields(msg)?.into_iter().rev().find_map(|(n, f)| match f {
        Field::Bytes(v) if n == number => Some(v),
        _ => None,
    }))
}

/// Reads a model and checks that it is of the kind `spm.rs` reproduces (module doc).
pub fn read(model: &[u8]) -> Result<Model, String> {
    let trainer = bytes_field(model, 2)?.ok_or("no trainer_spec")?;
    let normalizer = bytes_field(model, 3)?.ok_or("no normalizer_spec")?;
    let check = |ok: bool, what: &str| if ok { Ok(()) } else { Err(format!("not supported: {what}")) };
    check(varint_field(trainer, 3)? == Some(2), "model_type other than BPE")?;
    check(varint_field(trainer, 35)? == Some(1), "no byte_fallback")?;
    check(varint_field(trainer, 24)? != Some(1), "treat_whitespace_as_suffix")?;
    check(bytes_field(normalizer, 1)? == Some(&b"identity"[..]), "a normalizer other than identity")?;
    check(bytes_field(normalizer, 2)?.is_none_or(|m| m.is_empty()), "a precompiled charsmap")?;
    check(varint_field(normalizer, 4)? == Some(0), "remove_extra_whitespaces")?;
    check(varint_field(normalizer, 5)? != Some(0), "escape_whitespaces off")?;
    // add_dummy_prefix defaults to true in the proto.
    let dummy_prefix = varint_field(normalizer, 3)? != Some(0);
    let mut pieces = Vec::new();
    for (n, f) in fields(model)? {
        let Field::Bytes(p) = f else { continue };
        if n != 1 {
            continue;
        }
        let text = String::from_utf8(bytes_field(p, 1)?.ok_or("piece without text")?.to_vec())
            .map_err(|_| "piece is not UTF-8")?;
        let score = fields(p)?
            .into_iter()
            .find_map(|(n, f)| match f {
                Field::Fixed32(v) if n == 2 => Some(f32::from_bits(v)),
                _ => None,
            })
            .unwrap_or(0.0);
        pieces.push(Piece { text, score, kind: varint_field(p, 3)?.unwrap_or(NORMAL) });
    }
    if pieces.iter().any(|p| p.kind == NORMAL && p.text.contains(' ')) {
        return Err("a piece holds a plain space".to_string());
    }
    Ok(Model { pieces, dummy_prefix })
}

/// The [`Spec`] of a model: pieces by kind (spaces for U+2581), and the pieces tied at the
/// lowest score. Fails when the ordinary pieces' scores do not fall strictly with the id apart
/// from that group (`spm.rs` merges by id then).
pub fn spec(model: &Model, name: &str, source: &str) -> Result<Spec, String> {
    let pieces = &model.pieces;
    let mut s = Spec {
        count: u32::try_from(pieces.len()).map_err(|_| "too many pieces")?,
        unk: u32::MAX,
        byte_base: u32::MAX,
        normal: vec![],
        user_defined: vec![],
        dummy_prefix: model.dummy_prefix,
        lowest: vec![],
        name: name.to_string(),
        source: source.to_string(),
    };
    let lowest_score = pieces.iter().filter(|p| p.kind == NORMAL).map(|p| p.score).fold(f32::INFINITY, f32::min);
    let tied = pieces.iter().filter(|p| p.kind == NORMAL && p.score == lowest_score).count() > 1;
    let spaced = |t: &str| t.replace('\u{2581}', " ").into_bytes();
    let mut last_score = f32::INFINITY;
    for (id, p) in (0u32..).zip(pieces) {
        match p.kind {
            NORMAL => {
                if tied && p.score == lowest_score {
                    s.lowest.push(id);
                } else if p.score >= last_score {
                    return Err(format!("scores do not fall with the id at piece {id}"));
                } else {
                    last_score = p.score;
                }
                s.normal.push((id, spaced(&p.text)));
            }
            USER_DEFINED => s.user_defined.push((id, spaced(&p.text))),
            UNKNOWN => s.unk = id,
            BYTE => {
                let hex = p.text.trim_start_matches("<0x").trim_end_matches('>');
                let b = u32::from_str_radix(hex, 16).map_err(|_| format!("byte piece {:?}", p.text))?;
                if b == 0 {
                    s.byte_base = id;
                }
                if id != s.byte_base.wrapping_add(b) {
                    return Err("byte pieces out of order".to_string());
                }
            }
            CONTROL => {}
            k => return Err(format!("piece type {k} at {id}")),
        }
    }
    if s.unk == u32::MAX || s.byte_base == u32::MAX {
        return Err("no <unk> or no byte pieces".to_string());
    }
    Ok(s)
}
