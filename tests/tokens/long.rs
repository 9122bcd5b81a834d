//! Long single pieces (no whitespace, no punctuation: the pre-tokenizer gives one piece) against
//! tiktoken-rs token for token, on lengths around the long-piece thresholds of `src/tokens/bpe.rs`
//! (32 bytes: scan merge → heap merge; 256 bytes: pieces are cut into segments at byte pairs no
//! token contains), for both encodings.

use crate::common::*;

fn cases(rng: &mut Rng, len: usize) -> Vec<(String, String)> {
    let mixed: Vec<char> = ('a'..='z').chain('A'..='Z').collect();
    // Lowercase pairs that occur in no o200k / cl100k token ("qg", "jv", ...) cut the piece; these
    // letters make such pairs common.
    let rare: Vec<char> = "qgjvxzkw".chars().collect();
    let mut v = vec![
        ("letters".to_string(), random_letters(rng, len)),
        ("'a'".to_string(), "a".repeat(len)),
        ("'ab'".to_string(), "ab".repeat(len).chars().take(len).collect()),
        ("'abc'".to_string(), "abc".repeat(len).chars().take(len).collect()),
        ("mixed case".to_string(), (0..len).map(|_| rng.pick(&mixed)).collect()),
        ("rare letters".to_string(), (0..len).map(|_| rng.pick(&rare)).collect()),
        ("CJK".to_string(), random_cjk(rng, len.div_ceil(3))),
    ];
    // A word repeated, with a cut ("qg") now and then.
    let mut s = String::new();
    while s.len() < len {
        s.push_str(if rng.below(4) == 0 { "qg" } else { "tokenization" });
    }
    s.truncate(len);
    v.push(("words with cuts".to_string(), s));
    v
}

#[test]
fn long_single_pieces_match_tiktoken() {
    let mut rng = Rng::new(77);
    let lengths = [2, 3, 31, 32, 33, 63, 64, 65, 255, 256, 257, 511, 512, 513, 1000, 4099];
    for enc in ENCODINGS {
        let t = ours(enc);
        let r = reference(enc);
        for &len in &lengths {
            for (name, text) in cases(&mut rng, len) {
                // Mixed case is cut before each capital (a piece per word); the others are one piece.
                let pieces = t.pieces(&text);
                assert!(name == "mixed case" || pieces.len() == 1, "{name}: {} pieces", pieces.len());
                let want = r.encode_ordinary(&text);
                let got = t.encode(&text);
                assert_eq!(got, want, "{} {name} len {len}", enc.as_str());
                assert_eq!(t.count(&text), want.len(), "{} {name} len {len}", enc.as_str());
                let mut offsets = Vec::new();
                t.for_each_token(&text, |_, s, e| offsets.push((s, e)));
                let mut at = 0;
                for (s, e) in offsets {
                    assert!(s == at && e > s, "{} {name} len {len}: offsets not contiguous", enc.as_str());
                    at = e;
                }
                assert_eq!(at, text.len());
            }
        }
    }
}
