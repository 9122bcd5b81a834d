//! The committed vocabulary files (`src/tokens/data/*.bin`) are exactly what tiktoken-rs produces,
//! and the character-class file what its regex engine gives.
//!
//! Regenerate them after upgrading tiktoken-rs with
//!
//! ```sh
//! CTXGUARD_WRITE_VOCAB=1 cargo test --release --test tokens vocab_data::
//! ```
//!
//! Without the variable this test fails when a committed file is stale.

use std::path::PathBuf;

use ctxguard::tokens::{self, vocab_file as data, Encoding};

/// Ranks above the last ordinary token probed before concluding the table has ended (o200k has
/// special tokens a few ranks past its last ordinary one).
const RANK_PROBE_SLACK: usize = 4096;

/// Token bytes of every rank from tiktoken-rs (empty for special tokens and unused ranks), up to
/// the last ordinary token.
fn reference_tokens(enc: Encoding) -> Vec<Vec<u8>> {
    let core = match enc {
        Encoding::O200kBase => tiktoken_rs::o200k_base(),
        Encoding::Cl100kBase => tiktoken_rs::cl100k_base(),
        other => panic!("{other:?} is checked elsewhere (tests/gemini/vocab_data.rs, tests/tokens/vocab_loaded.rs)"),
    }
    .unwrap();
    let specials: Vec<Vec<u8>> = core.special_tokens().into_iter().map(|s| s.as_bytes().to_vec()).collect();
    let mut tokens: Vec<Vec<u8>> = Vec::new();
    let mut last_ordinary = 0usize;
    let mut misses = 0usize;
    let mut rank = 0u32;
    while misses < RANK_PROBE_SLACK {
        match core.decode_bytes(&[rank]) {
            Ok(t) if !t.is_empty() && !specials.contains(&t) => {
                tokens.push(t);
                misses = 0;
                last_ordinary = tokens.len();
            }
            _ => {
                tokens.push(Vec::new());
                misses += 1;
            }
        }
        rank += 1;
    }
    tokens.truncate(last_ordinary);
    tokens
}

fn data_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/tokens/data").join(name)
}

fn path(enc: Encoding) -> PathBuf {
    data_path(&format!("{}.bin", enc.as_str()))
}

/// Class bits of every code point, block by block, computed with tiktoken-rs's regex engine:
/// bit `i` is set when `data::CLASS_PATTERNS[i]` matches the character (the regexes run over the
/// whole block as one string; none of them depends on context).
fn reference_classes() -> Vec<[u8; 256]> {
    let regexes: Vec<fancy_regex::Regex> =
        data::CLASS_PATTERNS.iter().map(|p| fancy_regex::Regex::new(p).unwrap()).collect();
    (0..data::CLASS_BLOCKS as u32)
        .map(|block| {
            let mut table = [0u8; 256];
            let s: String = (0..256u32).filter_map(|low| char::from_u32((block << 8) | low)).collect();
            for (bit, re) in regexes.iter().enumerate() {
                for m in re.find_iter(&s) {
                    for c in m.unwrap().as_str().chars() {
                        table[(c as u32 & 0xFF) as usize] |= 1 << bit;
                    }
                }
            }
            table
        })
        .collect()
}

#[test]
fn committed_class_file_equals_the_regex_engine() {
    let expected = data::write_classes(&reference_classes()).unwrap();
    let p = data_path("classes.bin");
    if std::env::var_os("CTXGUARD_WRITE_VOCAB").is_some() {
        std::fs::write(&p, &expected).unwrap();
        println!("wrote {} ({} bytes)", p.display(), expected.len());
        return;
    }
    let committed = std::fs::read(&p).unwrap();
    assert!(
        committed == expected,
        "{} is stale; regenerate with CTXGUARD_WRITE_VOCAB=1 cargo test --release --test tokens vocab_data::",
        p.display()
    );
    assert!(data::class_file() == &committed[..], "embedded class file differs");
    let (index, blocks) = data::parse_classes(&committed).unwrap();
    assert_eq!(index.len(), 2 * data::CLASS_BLOCKS);
    assert!(data::parse_classes(&committed[..committed.len() - 1]).is_err());
    let _ = blocks;
}

#[test]
fn committed_vocabulary_files_equal_tiktoken_rs() {
    let write = std::env::var_os("CTXGUARD_WRITE_VOCAB").is_some();
    for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
        let expected = data::write(&reference_tokens(enc)).unwrap();
        if write {
            std::fs::write(path(enc), &expected).unwrap();
            println!("wrote {} ({} bytes)", path(enc).display(), expected.len());
            continue;
        }
        let committed = std::fs::read(path(enc)).unwrap();
        assert!(
            committed == expected,
            "{} is stale ({} bytes, tiktoken-rs gives {}); regenerate with \
             CTXGUARD_WRITE_VOCAB=1 cargo test --release --test tokens vocab_data::",
            path(enc).display(),
            committed.len(),
            expected.len()
        );
        // And the library embeds that file (not an older copy).
        assert!(data::file(enc) == Some(&committed[..]), "{} embedded differs", enc.as_str());
    }
}

#[test]
fn vocabulary_matches_tiktoken_rs_rank_by_rank() {
    for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
        let ours = tokens::tokenizer(enc).unwrap();
        let reference = reference_tokens(enc);
        assert_eq!(ours.vocab_size(), reference.len());
        let distinct: std::collections::HashSet<&Vec<u8>> = reference.iter().filter(|t| !t.is_empty()).collect();
        assert_eq!(distinct.len(), reference.iter().filter(|t| !t.is_empty()).count(), "duplicate tokens");
        for (rank, t) in reference.iter().enumerate() {
            let got = ours.decode_bytes(&[rank as u32]);
            if t.is_empty() {
                assert_eq!(got, "\u{FFFD}".as_bytes(), "rank {rank}");
            } else {
                assert_eq!(&got, t, "rank {rank}");
            }
        }
    }
}

#[test]
fn vocabulary_files_round_trip_and_reject_damage() {
    // Ranks: "a", none, "b", "c", "bc" (pair), "abc" (pair: "a" + "bc"), "cb" (pair), "x", "ax".
    let tokens: Vec<Vec<u8>> =
        [&b"a"[..], b"", b"b", b"c", b"bc", b"abc", b"cb", b"x", b"ax"].iter().map(|t| t.to_vec()).collect();
    let file = data::write(&tokens).unwrap();
    let decoded = data::decode(&file).unwrap();
    assert_eq!(decoded.bytes, b"abcbcabccbxax");
    assert_eq!(decoded.starts, [0, 1, 1, 2, 3, 5, 8, 10, 11, 13]);
    // Kinds: byte, none, byte, byte, pair, pair, pair, byte, pair ("ax" = "a" + "x": BPE builds it).
    assert_eq!(&file[data::HEADER_LEN..data::HEADER_LEN + 9], &[1, 0, 1, 1, 2, 2, 2, 1, 2]);
    // The pair is the last merge of BPE on the token's bytes: in "bcx", where "cx" has a lower
    // rank than "bc", "b" + "cx". A token BPE leaves in three parts or more is a literal.
    let toks = |ts: &[&[u8]]| ts.iter().map(|t| t.to_vec()).collect::<Vec<_>>();
    let split = data::write(&toks(&[b"b", b"c", b"x", b"cx", b"bc", b"bcx"])).unwrap();
    assert_eq!(&split[data::HEADER_LEN..data::HEADER_LEN + 6], &[1, 1, 1, 2, 2, 2]);
    let lit = data::write(&toks(&[b"x", b"y", b"z", b"xyz"])).unwrap();
    assert_eq!(&lit[data::HEADER_LEN..data::HEADER_LEN + 4], &[1, 1, 1, 3]);
    assert_eq!(data::decode(&lit).unwrap().bytes, b"xyzxyz");
    // Every truncation fails, and so does anything left over.
    for cut in 0..file.len() {
        assert!(data::decode(&file[..cut]).is_err(), "cut at {cut}");
    }
    let mut extra = file.clone();
    extra.push(0);
    assert!(data::decode(&extra).is_err());
    let mut bad = file.clone();
    bad[0] = b'X';
    assert!(data::decode(&bad).is_err());
    for version in [1, 2, 3] {
        let mut old = file.clone();
        old[4] = version;
        assert!(data::decode(&old).is_err(), "format {version} is not read as format 4");
    }
    // A pair naming its own rank or a later one, or a rank that is not a token, is refused.
    let pair_file = data::write(&[b"a".to_vec(), Vec::new(), b"aa".to_vec()]).unwrap();
    assert_eq!(data::decode(&pair_file).unwrap().bytes, b"aaa");
    assert_eq!(data::write_parts(&[1, 0, 2], b"a", &[], &[0], &[0]).unwrap(), pair_file);
    for (left, what) in [(2u32, "itself"), (3, "a later rank"), (1, "an empty rank"), (200_000, "out of range")] {
        let forged = data::write_parts(&[1, 0, 2, 1], b"ab", &[], &[left], &[0]).unwrap();
        assert!(data::decode(&forged).is_err(), "pair naming {what}");
    }
    // Damage inside the pair section (tables, low bits, stream) never panics; a table that does
    // not sum to 2^14 is refused.
    let big = data::write(&tokens.iter().chain([b"ab".to_vec(), b"abcb".to_vec()].iter()).cloned().collect::<Vec<_>>())
        .unwrap();
    for at in data::HEADER_LEN..big.len() {
        for flip in [1u8, 0x80] {
            let mut damaged = big.clone();
            damaged[at] ^= flip;
            let _ = data::decode(&damaged);
        }
    }
    let tables = data::HEADER_LEN + 3 + 1; // after the kinds and the one single byte
    let mut table = pair_file.clone();
    table[tables] ^= 1;
    assert!(data::decode(&table).is_err(), "table sum");
    // Unknown kinds, too many ranks, over-long literals.
    let mut kind = pair_file.clone();
    kind[data::HEADER_LEN] = 9;
    assert!(data::decode(&kind).is_err());
    let mut huge = pair_file.clone();
    huge[5..9].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(data::decode(&huge).is_err());
    assert!(data::write(&[vec![7u8; 256]]).is_err());
    assert!(data::write(&vec![Vec::new(); (1 << 18) + 1]).is_err());
}

#[test]
fn o200k_pattern_is_tiktoken_rs_own() {
    // The library keeps a copy so that tiktoken-rs is only a dev-dependency.
    assert_eq!(tokens::O200K_PATTERN, tiktoken_rs::O200K_BASE_PAT_STR);
}
