//! What a guard remembers of the conversation (docs/design.md, "Remembered work"): every summary
//! it made, or restored from a checkpoint, with exactly which messages it replaced — the first
//! messages of the conversation that are not system messages, known by their content
//! (`checkpoint::Covers`), so that rebuilt message objects still match. A host that passes its
//! whole display history on every call gets the same model input as one that passes the
//! checkpoint chain, without the summarizer being asked again; an edit or a deletion inside the
//! replaced range makes the summary no longer match (an older one may, else the guard compacts
//! again). Its last mechanical fallback is kept the same way, never persisted, and applied only
//! while the summarizer's breaker is open (`pipeline/start.rs`).
//!
//! Applying a summary to a history: the system messages of the replaced range (except earlier
//! summaries) stay first, then the summary, the retained user messages, the messages of the
//! replaced range the compaction kept (`Covers::keep`), then everything after the range, as it
//! is. This is the order a compaction writes its checkpoint in, so the two always agree.

use crate::message::checkpoint::Covers;
use crate::message::{Message, Role};
use crate::report::metrics::{AheadState, MemoryMetrics};

/// Summaries kept (the newest; older ones serve when an edit invalidates a newer one).
pub const MAX_SUMMARIES: usize = 4;

/// A summary and what it replaced.
#[derive(Debug, Clone)]
pub struct Summary {
    pub covers: Covers,
    /// This guard's content keys of the covered messages, once known (made here, or matched
    /// once by digest after a restore): later calls compare keys instead of hashing again.
    keys: Option<Vec<u64>>,
    /// The summary message (sealed, with its covers) and the retained user messages after it.
    pub summary: Message,
    pub retained: Vec<Message>,
    /// Made ahead of time and not used yet: applied only once the trigger is crossed.
    pub ahead: bool,
}

impl Summary {
    pub fn new(
        covers: Covers,
        keys: Option<Vec<u64>>,
        summary: Message,
        retained: Vec<Message>,
        ahead: bool,
    ) -> Summary {
        Summary { covers, keys, summary, retained, ahead }
    }

    /// Whether the first non-system messages of `history` (at `non_system`) are the ones this
    /// summary covers: by this guard's keys once known, else by the covers' digest (which makes
    /// the keys known).
    fn matches(&mut self, history: &[Message], non_system: &[usize], key: &mut dyn FnMut(&Message) -> u64) -> bool {
        let n = self.covers.messages as usize;
        let Some(covered) = non_system.get(..n).filter(|c| n > 0 && c.len() == n) else {
            return false;
        };
        match &self.keys {
            Some(keys) => {
                keys.len() == n && covered.iter().zip(keys).all(|(&i, k)| history.get(i).is_some_and(|m| key(m) == *k))
            }
            None => {
                let digest = Covers::of(covered.iter().filter_map(|&i| history.get(i)), Vec::new()).digest;
                let ok = digest == self.covers.digest;
                if ok {
                    self.keys = Some(covered.iter().filter_map(|&i| history.get(i)).map(&mut *key).collect());
                }
                ok
            }
        }
    }
}

fn non_system_indices(history: &[Message]) -> Vec<usize> {
    history.iter().enumerate().filter(|(_, m)| m.role != Role::System).map(|(i, _)| i).collect()
}

/// A history with a remembered summary applied.
#[derive(Debug, Clone)]
pub struct Applied {
    pub messages: Vec<Message>,
    /// Each message's place among the history's non-system messages (`None`: a system message,
    /// the summary, a retained clone).
    pub ordinals: Vec<Option<u32>>,
    /// Non-system messages of the history the summary replaced (`Covers::messages`).
    pub covered: u32,
    /// The summary was made ahead of time (this call is the one that uses it).
    pub ahead: bool,
}

#[derive(Debug, Default)]
pub struct Memory {
    summaries: Vec<Summary>,
    pub ahead: AheadState,
    /// Why the last summary made ahead of time failed, when the summarizer failed it (the
    /// next call over the trigger falls back with it instead of asking on the send path).
    pub ahead_failure: Option<&'static str>,
    /// Background summaries started (the running one's number).
    pub ahead_runs: u64,
    /// Messages covered by the summary the last call applied (metrics).
    last_covered: u32,
    /// A checkpoint was restored and no call has applied a summary since: the next call that
    /// applies none reports it (the checkpoint is another conversation's, or an edited one's).
    restored_unchecked: bool,
    /// The last compaction's record (metrics).
    pub last_compaction: Option<crate::report::metrics::CompactionRecord>,
    /// Set after an ineffective compaction: the next call goes to layer 3 instead (anti-thrash).
    pub skip_next_compaction: bool,
    /// The last mechanical fallback (its evidence note as the summary): applied again while the
    /// breaker is open so that its prefix stays the same from call to call; never persisted,
    /// forgotten once a summary is written.
    fallback: Option<Summary>,
}

/// Each message's place among the non-system messages of `messages`.
pub fn ordinals(messages: &[Message]) -> Vec<Option<u32>> {
    let mut n = 0u32;
    messages
        .iter()
        .map(|m| {
            (m.role != Role::System).then(|| {
                n += 1;
                n - 1
            })
        })
        .collect()
}

/// `history` with its first `covers.messages` non-system messages replaced by `summary` and
/// `retained` (the system messages of that range that `kept_system` keeps stay first, the
/// messages of the range at `covers.keep` follow the summary): the chain a compaction writes,
/// and what a remembered summary gives. `None` when the history is shorter than the range.
pub fn replace(
    history: &[Message],
    covers: &Covers,
    summary: Option<&Message>,
    retained: &[Message],
    kept_system: &dyn Fn(&Message) -> bool,
) -> Option<Applied> {
    let ords = ordinals(history);
    let non_system: Vec<usize> = ords.iter().enumerate().filter_map(|(i, o)| o.map(|_| i)).collect();
    let n = covers.messages as usize;
    let last = if n == 0 { None } else { Some(*non_system.get(n - 1)?) };
    let end = last.map_or(0, |l| l + 1);
    let mut messages = Vec::with_capacity(history.len() + retained.len() + 1);
    let mut ordinals = Vec::with_capacity(messages.capacity());
    let mut push = |m: &Message, o: Option<u32>| {
        messages.push(m.clone());
        ordinals.push(o);
    };
    for m in history.iter().take(end).filter(|m| m.role == Role::System && kept_system(m)) {
        push(m, None);
    }
    if let Some(s) = summary {
        push(s, None);
    }
    for r in retained {
        push(r, None);
    }
    for &k in &covers.keep {
        if let Some(m) = non_system.get(k as usize).filter(|_| (k as usize) < n).and_then(|&i| history.get(i)) {
            push(m, Some(k));
        }
    }
    for (m, o) in history.iter().zip(&ords).skip(end) {
        push(m, *o);
    }
    Some(Applied { messages, ordinals, covered: covers.messages, ahead: false })
}

impl Memory {
    /// Remember a summary (it replaces one with the same covers; the oldest beyond
    /// [`MAX_SUMMARIES`] go).
    pub fn remember(&mut self, s: Summary) {
        self.fallback = None;
        self.summaries.retain(|o| o.covers != s.covers);
        self.summaries.push(s);
        if self.summaries.len() > MAX_SUMMARIES {
            self.summaries.remove(0);
        }
    }

    /// Remember a summary restored from a checkpoint (`guard.restore`).
    pub fn restored(&mut self, s: Summary) {
        self.remember(s);
        self.restored_unchecked = true;
    }

    /// Whether this call, which applied a summary or not (`applied`), is the first since a
    /// restore and applied none: the restored checkpoint does not match the history it was given.
    pub fn unmatched_restore(&mut self, applied: bool) -> bool {
        std::mem::take(&mut self.restored_unchecked) && !applied
    }

    /// Forget every summary (and the one made ahead of time).
    pub fn clear(&mut self) {
        self.summaries.clear();
        self.fallback = None;
        self.ahead = AheadState::Idle;
        self.last_covered = 0;
        self.restored_unchecked = false;
    }

    /// The newest remembered summary that matches `history`, applied (summaries made ahead of
    /// time only `with_ahead`). `kept_system` says which system messages of the replaced range
    /// stay (not earlier summaries); `key` is this guard's content key of a message.
    pub fn apply(
        &mut self,
        history: &[Message],
        with_ahead: bool,
        kept_system: &dyn Fn(&Message) -> bool,
        key: &mut dyn FnMut(&Message) -> u64,
    ) -> Option<Applied> {
        let non_system = non_system_indices(history);
        let found = self.summaries.iter_mut().rev().find_map(|s| {
            if s.ahead && !with_ahead {
                return None;
            }
            s.matches(history, &non_system, key).then(|| s.clone())
        });
        let applied = found.and_then(|s| {
            replace(history, &s.covers, Some(&s.summary), &s.retained, kept_system)
                .map(|a| Applied { ahead: s.ahead, ..a })
        });
        self.last_covered = applied.as_ref().map_or(0, |a| a.covered);
        applied
    }

    /// Remember the mechanical fallback of this call (it replaces the previous one).
    pub fn remember_fallback(&mut self, s: Summary) {
        self.fallback = Some(s);
    }

    /// The last mechanical fallback applied to `history`, when it still matches it.
    pub fn apply_fallback(
        &mut self,
        history: &[Message],
        kept_system: &dyn Fn(&Message) -> bool,
        key: &mut dyn FnMut(&Message) -> u64,
    ) -> Option<Applied> {
        let non_system = non_system_indices(history);
        let s = self.fallback.as_mut()?;
        if !s.matches(history, &non_system, key) {
            return None;
        }
        replace(history, &s.covers, Some(&s.summary), &s.retained, kept_system)
    }

    /// The summary made ahead of time was used: it is an ordinary remembered summary from now on.
    pub fn commit_ahead(&mut self) {
        for s in &mut self.summaries {
            s.ahead = false;
        }
        self.ahead = AheadState::Idle;
    }

    /// Whether a summary made ahead of time is waiting to be used.
    pub fn has_ahead(&self) -> bool {
        self.summaries.iter().any(|s| s.ahead)
    }

    /// Forget a summary made ahead of time that no longer matches the conversation.
    pub fn drop_ahead(&mut self) {
        self.summaries.retain(|s| !s.ahead);
        if self.ahead == AheadState::Ready {
            self.ahead = AheadState::Idle;
        }
    }

    pub fn metrics(&self) -> MemoryMetrics {
        MemoryMetrics {
            summaries: u32::try_from(self.summaries.iter().filter(|s| !s.ahead).count()).unwrap_or(u32::MAX),
            covered_messages: self.last_covered,
            ahead: self.ahead,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(role: Role, t: &str) -> Message {
        Message::text(role, t)
    }

    fn key(m: &Message) -> u64 {
        crate::message::cache::message_key(m, 1)
    }

    fn summary_over(history: &[Message], n: usize, keep: Vec<u32>) -> Summary {
        let covered: Vec<&Message> = history.iter().filter(|m| m.role != Role::System).take(n).collect();
        let covers = Covers::of(covered.iter().copied(), keep);
        Summary::new(
            covers,
            None,
            text(Role::System, "[ctxguard:summary] S"),
            vec![text(Role::User, "retained")],
            false,
        )
    }

    #[test]
    fn a_summary_applies_to_rebuilt_messages_and_not_after_an_edit() {
        let history = vec![
            text(Role::System, "sys"),
            text(Role::User, "a"),
            text(Role::Assistant, "b"),
            text(Role::User, "c"),
            text(Role::Assistant, "d"),
        ];
        let mut mem = Memory::default();
        mem.remember(summary_over(&history, 2, vec![]));
        let rebuilt: Vec<Message> = history.iter().map(|m| Message::text(m.role, m.content.text())).collect();
        let mut calls = 0;
        let a = mem.apply(&rebuilt, false, &|_| true, &mut |m| {
            calls += 1;
            key(m)
        });
        let a = a.unwrap();
        let texts: Vec<String> = a.messages.iter().map(|m| m.content.text()).collect();
        assert_eq!(texts, ["sys", "[ctxguard:summary] S", "retained", "c", "d"]);
        assert_eq!(a.ordinals, vec![None, None, None, Some(2), Some(3)]);
        assert_eq!((a.covered, mem.metrics().covered_messages), (2, 2));
        // Matched once by digest, then by this guard's keys.
        assert_eq!(calls, 2);
        let mut calls = 0;
        assert!(mem
            .apply(&rebuilt, false, &|_| true, &mut |m| {
                calls += 1;
                key(m)
            })
            .is_some());
        assert_eq!(calls, 2);
        // An edit inside the range: no match; after it: still a match.
        let mut edited = rebuilt.clone();
        edited[2] = text(Role::Assistant, "B");
        assert!(mem.apply(&edited, false, &|_| true, &mut key).is_none());
        assert_eq!(mem.metrics().covered_messages, 0);
        let mut later = rebuilt.clone();
        later[4] = text(Role::Assistant, "D");
        assert!(mem.apply(&later, false, &|_| true, &mut key).is_some());
        // A shorter history than the range: no match.
        assert!(mem.apply(&rebuilt[..2], false, &|_| true, &mut key).is_none());
    }

    #[test]
    fn kept_messages_of_the_range_follow_the_summary_and_ahead_ones_wait() {
        let history = vec![
            text(Role::User, "a"),
            text(Role::Assistant, "b"),
            text(Role::User, "run"),
            text(Role::Assistant, "step"),
            text(Role::Tool, "out"),
            text(Role::Assistant, "last"),
        ];
        let mut mem = Memory::default();
        let mut s = summary_over(&history, 5, vec![2]);
        s.ahead = true;
        mem.remember(s);
        assert!(mem.apply(&history, false, &|_| true, &mut key).is_none(), "made ahead: not applied under the trigger");
        let a = mem.apply(&history, true, &|_| true, &mut key).unwrap();
        let texts: Vec<String> = a.messages.iter().map(|m| m.content.text()).collect();
        assert_eq!(texts, ["[ctxguard:summary] S", "retained", "run", "last"]);
        assert!(a.ahead);
        mem.commit_ahead();
        assert!(mem.apply(&history, false, &|_| true, &mut key).is_some());
        for i in 0..6 {
            mem.remember(summary_over(&history, i % 5 + 1, vec![]));
        }
        assert_eq!(mem.metrics().summaries as usize, MAX_SUMMARIES);
    }
}
