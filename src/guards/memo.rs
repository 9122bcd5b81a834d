//! Layer 1 runs before every model call over the whole conversation; its work per tool output
//! (count it, compact it) depends only on the text and the options, so a guard remembers the
//! results by content. On the 2,000-message benchmark conversation that takes a repeated
//! `guardSources` / `prepare` from ~0.6 s (every output tokenized and compacted again) to the
//! cost of hashing the text.
//!
//! Entries unused by the latest pass are dropped once a map holds more than twice the entries
//! that pass used (as `CountCache` does), so memory follows the live conversation.

use std::hash::{Hash, Hasher};

use rustc_hash::{FxHashMap, FxHasher};

use crate::tokens::{self, Encoding};

use super::tool_output::{self, CompactOptions, Compacted};

#[derive(Debug, Default)]
pub struct SourceMemo {
    counts: FxHashMap<u64, (usize, u64)>,
    compacted: FxHashMap<u64, (Option<Compacted>, u64)>,
    pass: u64,
    used: usize,
}

fn text_key(enc: Encoding, text: &str) -> u64 {
    let mut h = FxHasher::default();
    enc.as_str().hash(&mut h);
    text.hash(&mut h);
    h.finish()
}

impl SourceMemo {
    /// Start a pass over a request.
    pub fn begin(&mut self) {
        self.pass += 1;
        self.used = 0;
    }

    /// Drop what the pass did not use, once the maps are more than twice its size.
    pub fn end(&mut self) {
        let (pass, keep) = (self.pass, 2 * self.used + 64);
        if self.counts.len() > keep {
            self.counts.retain(|_, (_, p)| *p == pass);
        }
        if self.compacted.len() > keep {
            self.compacted.retain(|_, (_, p)| *p == pass);
        }
    }

    /// `tokens::count`, remembered.
    pub fn count(&mut self, enc: Encoding, text: &str) -> usize {
        self.used += 1;
        let pass = self.pass;
        let e = self.counts.entry(text_key(enc, text)).or_insert_with(|| (tokens::count(enc, text), pass));
        e.1 = pass;
        e.0
    }

    /// `tool_output::compact`, remembered per text and options.
    pub fn compact(&mut self, enc: Encoding, text: &str, opts: &CompactOptions) -> Option<Compacted> {
        self.used += 1;
        let mut h = FxHasher::default();
        text_key(enc, text).hash(&mut h);
        opts.limit.hash(&mut h);
        opts.emergency.hash(&mut h);
        opts.retrieval_tool.hash(&mut h);
        opts.call_id.hash(&mut h);
        let pass = self.pass;
        let e = self.compacted.entry(h.finish()).or_insert_with(|| (tool_output::compact(enc, text, opts), pass));
        e.1 = pass;
        e.0.clone()
    }
}

/// The limit a fair share becomes: rounded down to a ladder of eight steps per doubling (32, 36,
/// 40, … 60, 64, 72, …; at most 11 % below the share), so that a share moving by a few tokens as
/// the conversation grows does not rewrite every older output. Byte-stable compacted outputs keep
/// the provider's prompt cache and this memo valid across turns. Shares under 32 stay as they are.
pub fn ladder(share: usize) -> usize {
    if share < 32 {
        return share;
    }
    let top = 1usize << (usize::BITS - 1 - share.leading_zeros());
    let step = top / 8;
    share / step * step
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ladder_rounds_down_to_stable_steps() {
        assert_eq!(ladder(0), 0);
        assert_eq!(ladder(31), 31);
        assert_eq!(ladder(32), 32);
        assert_eq!(ladder(35), 32);
        assert_eq!(ladder(36), 36);
        assert_eq!(ladder(446), 416);
        assert_eq!(ladder(447), 416);
        assert_eq!(ladder(448), 448);
        assert_eq!(ladder(512), 512);
        assert_eq!(ladder(8_000), 7_680);
        for s in 0..50_000 {
            assert!(ladder(s) <= s && ladder(s) as f64 >= s as f64 * 0.888, "{s}");
        }
    }
}
