//! The paged attachment reader: pages of arbitrary text concatenate to the whole text and the
//! walk ends.
#![no_main]
use ctxguard::sources::reader::read;
use ctxguard::tokens::Encoding;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((head, rest)) = data.split_first_chunk::<3>() else { return };
    let limit = usize::from(u16::from_le_bytes([head[0], head[1]])) % 9000;
    let enc = if head[2] & 1 == 0 { Encoding::O200kBase } else { Encoding::Cl100kBase };
    let text = String::from_utf8_lossy(rest);
    // Any offset: errors are fine, panics are not.
    let _ = read(enc, "id", &text, usize::from(head[2]) * 7, Some(limit));
    let Ok(first) = read(enc, "id", &text, 0, Some(limit)) else { return };
    let mut whole = first.text.clone();
    let mut next = first.next_offset;
    let mut pages = 1usize;
    while let Some(off) = next {
        let p = read(enc, "id", &text, off as usize, Some(limit)).expect("nextOffset is readable");
        assert!(p.offset == off);
        whole.push_str(&p.text);
        next = p.next_offset;
        pages += 1;
        assert!(pages <= text.len() + 2, "the walk does not end");
    }
    assert_eq!(whole, text, "pages concatenate to the whole text");
});
