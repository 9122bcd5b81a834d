//! Added tokens found in text, as Hugging Face tokenizers find them before pre-tokenizing (the
//! special-token policy: docs/vocabularies.md).
//!
//! A Hugging Face `tokenizer.json` lists `added_tokens` (special or not); its tokenizer cuts the
//! text at every occurrence of one of them first — the leftmost occurrence, the longest one
//! where several start at the same place — and each occurrence is one token. The matcher is a
//! byte trie walked from each position whose byte can start a token, so the work per position is
//! at most the length of the longest added token.

/// The added tokens of one vocabulary.
pub(crate) struct AddedTokens {
    /// Trie nodes: `edges[node]` sorted by byte, `(byte, child)`.
    edges: Vec<Vec<(u8, u32)>>,
    /// The token id that ends at each node, if any.
    ids: Vec<Option<u32>>,
    /// Bytes that start some added token.
    first: [bool; 256],
    longest: usize,
}

impl AddedTokens {
    /// A matcher for `(content, id)` pairs (empty contents are skipped).
    pub(crate) fn new<'a>(tokens: impl IntoIterator<Item = (&'a [u8], u32)>) -> AddedTokens {
        let mut m = AddedTokens { edges: vec![Vec::new()], ids: vec![None], first: [false; 256], longest: 0 };
        for (content, id) in tokens {
            let Some(&b0) = content.first() else { continue };
            if let Some(f) = m.first.get_mut(b0 as usize) {
                *f = true;
            }
            m.longest = m.longest.max(content.len());
            let mut node = 0usize;
            for &b in content {
                let next = m.edges.get(node).and_then(|e| e.binary_search_by_key(&b, |&(x, _)| x).ok());
                node = match next.and_then(|k| m.edges.get(node).and_then(|e| e.get(k))) {
                    Some(&(_, child)) => child as usize,
                    None => {
                        let child = m.edges.len();
                        m.edges.push(Vec::new());
                        m.ids.push(None);
                        if let Some(e) = m.edges.get_mut(node) {
                            let at = e.partition_point(|&(x, _)| x < b);
                            e.insert(at, (b, child as u32));
                        }
                        child
                    }
                };
            }
            // The first entry of a content listed twice wins (the lower id, as they are listed).
            if let Some(slot) = m.ids.get_mut(node) {
                slot.get_or_insert(id);
            }
        }
        m
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.edges.iter().map(|e| 8 * e.capacity() + 24).sum::<usize>() + 8 * self.ids.capacity()
    }

    /// The longest added token starting at `at`: `(end, id)`.
    #[inline]
    fn longest_at(&self, text: &[u8], at: usize) -> Option<(usize, u32)> {
        let mut node = 0usize;
        let mut found = None;
        for (i, &b) in text.get(at..)?.iter().enumerate().take(self.longest) {
            let edges = self.edges.get(node)?;
            let Ok(k) = edges.binary_search_by_key(&b, |&(x, _)| x) else { break };
            node = edges.get(k)?.1 as usize;
            if let Some(Some(id)) = self.ids.get(node) {
                found = Some((at + i + 1, *id));
            }
        }
        found
    }

    /// The leftmost-longest added token in `text[from..]`: `(start, end, id)`.
    pub(crate) fn find(&self, text: &[u8], from: usize) -> Option<(usize, usize, u32)> {
        let rest = text.get(from..)?;
        for (k, &b) in rest.iter().enumerate() {
            if !self.first.get(b as usize).copied().unwrap_or(false) {
                continue;
            }
            if let Some((end, id)) = self.longest_at(text, from + k) {
                return Some((from + k, end, id));
            }
        }
        None
    }
}
