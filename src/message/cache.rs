//! Per-message count cache keyed by content (docs/design.md, "Token counting"): measuring a conversation that grew by one
//! message tokenizes only that message.
//!
//! The key is a 64-bit hash of the message's canonical serialization (everything that can change
//! its count: role, content, tool calls, name) streamed into the hasher without building the JSON
//! text. Entries not used by the latest pass are evicted once the cache holds more than twice the
//! messages of that pass, so memory follows the live conversation, not its history.

use std::hash::Hasher;
use std::io;

use rustc_hash::{FxHashMap, FxHasher};
use serde::Serialize;

use crate::message::{Content, ImageSource, Markers, Message, Part, ToolCall, Wire};

/// Streams serialized bytes into a hasher.
struct HashWriter<H: Hasher>(H);

impl<H: Hasher> io::Write for HashWriter<H> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Hash of a value's JSON serialization, mixed with a salt (the counting profile).
pub fn content_key<T: Serialize + ?Sized>(value: &T, salt: u64) -> u64 {
    let mut w = HashWriter(FxHasher::default());
    w.0.write_u64(salt);
    // Serializing our own types into a writer that never fails cannot fail; if it somehow did,
    // the key would still be deterministic for the bytes written so far.
    let _ = serde_json::to_writer(&mut w, value);
    w.0.finish()
}

/// The key of a message (its facts and count cache entries): every field its serialization holds,
/// hashed without JSON — strings as raw bytes with a length, no escaping — so a new message's key
/// costs one pass over its text (it is computed for every message a guard first sees: `measure`
/// from cold hashes the whole conversation). Unknown wire fields and unknown parts are hashed
/// as JSON, as [`content_key`] does. The destructuring below lists every field: a field added to
/// the message model without being hashed here does not compile. Keys live in memory only.
pub fn message_key(m: &Message, salt: u64) -> u64 {
    let mut h = FxHasher::default();
    h.write_u64(salt);
    hash_message(&mut h, m);
    h.finish()
}

/// A key of a message's content that stays the same across processes, platforms (the `.wasm` and
/// native builds) and models: SipHash-2-4 with fixed keys over what [`message_key`] hashes. For
/// what is persisted (the messages a checkpoint's summary covers, `checkpoint::Covers`).
pub fn stable_key(m: &Message) -> u64 {
    let mut h = Stable::default();
    hash_message(&mut h, m);
    h.finish()
}

/// SipHash-2-4 with fixed keys, every `usize` written as 8 bytes (the `.wasm`'s is 4).
struct Stable(#[allow(deprecated)] std::hash::SipHasher);

impl Default for Stable {
    fn default() -> Self {
        #[allow(deprecated)]
        Stable(std::hash::SipHasher::new_with_keys(0x6374_7867_636f_7665, 0x7273_2d6b_6579_7331))
    }
}

impl Hasher for Stable {
    fn finish(&self) -> u64 {
        self.0.finish()
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
    }
    fn write_usize(&mut self, n: usize) {
        self.0.write_u64(n as u64);
    }
}

/// Every field of `m` into `h`.
fn hash_message<H: Hasher + Default>(h: &mut H, m: &Message) {
    let Message {
        role,
        content,
        tool_calls,
        tool_call_id,
        name,
        id,
        markers,
        wire,
        extra,
        origin: _,
        facts: _,
        made: _,
    } = m;
    h.write_u8(*role as u8);
    match content {
        Content::Text(t) => {
            h.write_u8(0);
            text(h, t);
        }
        Content::Parts(parts) => {
            h.write_u8(1);
            h.write_usize(parts.len());
            for p in parts {
                part(h, p);
            }
        }
    }
    h.write_usize(tool_calls.len());
    for c in tool_calls {
        let ToolCall { id, name, arguments, extra } = c;
        text(h, id);
        text(h, name);
        text(h, arguments);
        map(h, extra);
    }
    opt(h, tool_call_id.as_deref());
    opt(h, name.as_deref());
    opt(h, id.as_deref());
    let Markers { summary_compacted, checkpoint_retained, pinned, compacted_tool_output } = markers;
    h.write_u8(
        u8::from(*summary_compacted)
            | u8::from(*checkpoint_retained) << 1
            | u8::from(*pinned) << 2
            | u8::from(*compacted_tool_output) << 3,
    );
    let Wire { role, legacy_function_call, group, block, content_was_string, content_was_null } = wire;
    opt(h, role.as_deref());
    h.write_u8(u8::from(*legacy_function_call) | u8::from(*content_was_string) << 1 | u8::from(*content_was_null) << 2);
    for n in [group, block] {
        match n {
            Some(n) => h.write_usize(n.wrapping_add(1)),
            None => h.write_usize(0),
        }
    }
    map(h, extra);
}

fn text<H: Hasher>(h: &mut H, s: &str) {
    h.write_usize(s.len());
    h.write(s.as_bytes());
}

fn opt<H: Hasher>(h: &mut H, s: Option<&str>) {
    match s {
        Some(s) => {
            h.write_u8(1);
            text(h, s);
        }
        None => h.write_u8(0),
    }
}

/// Unknown wire fields: their JSON serialization (none: one byte).
fn map<H: Hasher + Default>(h: &mut H, m: &crate::message::Extra) {
    if m.is_empty() {
        h.write_u8(0);
    } else {
        json(h, m);
    }
}

/// A JSON value (an unknown part, unknown fields) as its serialization.
fn json<H: Hasher + Default, T: Serialize + ?Sized>(h: &mut H, v: &T) {
    let mut w = HashWriter(std::mem::take(h));
    let _ = serde_json::to_writer(&mut w, v);
    *h = w.0;
}

fn part<H: Hasher + Default>(h: &mut H, p: &Part) {
    match p {
        Part::Text { text: t, extra } => {
            h.write_u8(0);
            text(h, t);
            map(h, extra);
        }
        Part::Image { source, detail, width, height, extra } => {
            h.write_u8(1);
            match source {
                ImageSource::Url(u) => {
                    h.write_u8(0);
                    text(h, u);
                }
                ImageSource::Base64 { media_type, data } => {
                    h.write_u8(1);
                    text(h, media_type);
                    text(h, data);
                }
                ImageSource::Other => h.write_u8(2),
            }
            opt(h, detail.as_deref());
            for n in [width, height] {
                h.write_u64(n.map_or(0, |n| u64::from(n) + 1));
            }
            map(h, extra);
        }
        Part::File { name, media_type, text: t, extra } => {
            h.write_u8(2);
            opt(h, name.as_deref());
            opt(h, media_type.as_deref());
            opt(h, t.as_deref());
            map(h, extra);
        }
        Part::Audio { extra } => {
            h.write_u8(3);
            map(h, extra);
        }
        Part::ToolCallRef { index } => {
            h.write_u8(4);
            h.write_usize(*index);
        }
        Part::Unknown { value } => {
            h.write_u8(5);
            json(h, value);
        }
    }
}

#[derive(Debug, Default)]
pub struct CountCache<V: Copy> {
    map: FxHashMap<u64, (V, u64)>,
    pass: u64,
    pass_len: usize,
    pub hits: u64,
    pub misses: u64,
}

impl<V: Copy> CountCache<V> {
    /// Start a measuring pass (entries used in it are kept at the next eviction).
    pub fn begin_pass(&mut self) {
        self.pass += 1;
        self.pass_len = 0;
    }

    pub fn get_or_insert_with(&mut self, key: u64, count: impl FnOnce() -> V) -> V {
        self.pass_len += 1;
        let pass = self.pass;
        if let Some(entry) = self.map.get_mut(&key) {
            entry.1 = pass;
            self.hits += 1;
            return entry.0;
        }
        self.misses += 1;
        let v = count();
        self.map.insert(key, (v, pass));
        v
    }

    /// Drop entries the latest pass did not use, once the cache is more than twice its size.
    pub fn end_pass(&mut self) {
        if self.map.len() > 2 * self.pass_len + 64 {
            let pass = self.pass;
            self.map.retain(|_, (_, used)| *used == pass);
        }
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_keys_follow_every_field_and_not_the_bookkeeping() {
        use crate::message::{Origin, Role};
        let base = Message {
            content: Content::Parts(vec![
                Part::Text { text: "look".into(), extra: Default::default() },
                Part::Image {
                    source: ImageSource::Base64 { media_type: "image/png".into(), data: "iVBOR".into() },
                    detail: None,
                    width: Some(2),
                    height: None,
                    extra: Default::default(),
                },
            ]),
            tool_calls: vec![ToolCall {
                id: "c1".into(),
                name: "grep".into(),
                arguments: "{}".into(),
                extra: Default::default(),
            }],
            ..Message::text(Role::Assistant, "")
        };
        let key = |m: &Message| message_key(m, 3);
        let mut same = base.clone();
        same.origin = Origin(Some(4));
        assert_eq!(key(&base), key(&same), "origin is bookkeeping");
        assert_ne!(key(&base), message_key(&base, 4), "the salt");
        #[allow(clippy::type_complexity)]
        let changes: Vec<Box<dyn Fn(&mut Message)>> = vec![
            Box::new(|m| m.role = Role::User),
            Box::new(|m| m.content = Content::Text("look".into())),
            Box::new(|m| {
                if let Content::Parts(p) = &mut m.content {
                    p.reverse()
                }
            }),
            Box::new(|m| {
                if let Content::Parts(p) = &mut m.content {
                    p[0] = Part::Text { text: "look!".into(), extra: Default::default() }
                }
            }),
            Box::new(|m| {
                if let Content::Parts(p) = &mut m.content {
                    if let Part::Image { width, .. } = &mut p[1] {
                        *width = Some(3)
                    }
                }
            }),
            Box::new(|m| {
                if let Content::Parts(p) = &mut m.content {
                    if let Part::Image { height, .. } = &mut p[1] {
                        *height = Some(2)
                    }
                }
            }),
            Box::new(|m| m.tool_calls[0].arguments = "{\"q\":1}".into()),
            Box::new(|m| {
                m.tool_calls[0].extra.insert("x".into(), serde_json::json!(1));
            }),
            Box::new(|m| m.tool_call_id = Some("c1".into())),
            Box::new(|m| m.name = Some("n".into())),
            Box::new(|m| m.id = Some("i".into())),
            Box::new(|m| m.markers.pinned = true),
            Box::new(|m| m.wire.role = Some("developer".into())),
            Box::new(|m| m.wire.group = Some(0)),
            Box::new(|m| m.wire.block = Some(0)),
            Box::new(|m| m.wire.content_was_null = true),
            Box::new(|m| {
                m.extra.insert("x".into(), serde_json::json!([1]));
            }),
        ];
        for (i, change) in changes.iter().enumerate() {
            let mut m = base.clone();
            change(&mut m);
            assert_ne!(key(&base), key(&m), "change {i}");
        }
        // Strings are delimited: moving a byte from one field to the next changes the key.
        let a = Message { tool_call_id: Some("ab".into()), name: Some("c".into()), ..base.clone() };
        let b = Message { tool_call_id: Some("a".into()), name: Some("bc".into()), ..base.clone() };
        assert_ne!(key(&a), key(&b));
    }

    #[test]
    fn keys_follow_content_and_salt() {
        assert_eq!(content_key("hello", 1), content_key("hello", 1));
        assert_ne!(content_key("hello", 1), content_key("hello!", 1));
        assert_ne!(content_key("hello", 1), content_key("hello", 2));
    }

    #[test]
    fn hits_misses_and_eviction() {
        let mut c: CountCache<u32> = CountCache::default();
        let mut calls = 0;
        c.begin_pass();
        for k in 0..100u64 {
            c.get_or_insert_with(k, || {
                calls += 1;
                k as u32
            });
        }
        c.end_pass();
        assert_eq!((c.hits, c.misses, calls), (0, 100, 100));
        c.begin_pass();
        for k in 0..101u64 {
            assert_eq!(c.get_or_insert_with(k, || 7), if k == 100 { 7 } else { k as u32 });
        }
        c.end_pass();
        assert_eq!((c.hits, c.misses), (100, 101));
        // a pass over other content evicts the old entries once the cache outgrows it
        c.begin_pass();
        for k in 1000..1010u64 {
            c.get_or_insert_with(k, || 0);
        }
        c.end_pass();
        assert_eq!(c.len(), 10);
    }
}
