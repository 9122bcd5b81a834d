//! Per-message count cache keyed by content (SPEC §3): measuring a conversation that grew by one
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

/// Streams serialized bytes into a hasher.
struct HashWriter(FxHasher);

impl io::Write for HashWriter {
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
