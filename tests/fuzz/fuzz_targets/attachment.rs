//! Attachment previews on arbitrary text: `preview` on its own and the request-level guard over
//! a user message with `<attachment>` markup. No panic; previews stay within their share when
//! the share leaves room for the footer.
#![no_main]
use ctxguard::message::{Message, Role};
use ctxguard::sources::attachment::{apply, find, preview, Found};
use ctxguard::sources::remembered::{Remembered, Unknown};
use ctxguard::tokens::{count, Encoding};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((head, rest)) = data.split_first_chunk::<3>() else { return };
    let share = usize::from(u16::from_le_bytes([head[0], head[1]])) % 8192;
    let enc = if head[2] & 1 == 0 { Encoding::O200kBase } else { Encoding::Cl100kBase };
    let text = String::from_utf8_lossy(rest);
    let f = Found::standalone(
        "a".into(),
        Some("a.pdf".into()),
        Some("application/pdf".into()),
        count(enc, &text),
        text.chars().count(),
    );
    let p = preview(enc, &text, &f, share);
    assert!(!p.is_empty());
    // The same text as message content, where it may hold attachment blocks of its own.
    let mut msgs = vec![
        Message::text(Role::User, text.to_string()),
        Message::text(Role::User, format!("x <attachment id=\"b\">{text}</attachment> y")),
    ];
    let before = find(&msgs, enc, &mut Remembered::default(), &Unknown).len();
    let r = apply(&mut msgs, enc, share, &mut Remembered::default(), &Unknown);
    assert_eq!(r.blocks, before);
    assert!(r.truncated <= r.blocks);
    let _ = find(&msgs, enc, &mut Remembered::default(), &Unknown);
});
