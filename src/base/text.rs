//! [`Text`]: an immutable, shared string for message bodies. A conversation's text is copied
//! between the store, layer 1's output and the pipeline's steps on every call; with shared
//! bodies a copy of a message costs a reference count per string instead of a copy of its
//! text (docs/performance-notes.md: `prepare` after one new message on a 5 MB conversation).

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An immutable string whose clones share one allocation. Reads as `&str` (`Deref`); build one
/// from a `String` or `&str` with `into()`; to change it, make a new one.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Text(Arc<str>);

impl Text {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for Text {
    /// The empty text, shared: no allocation (messages are taken out of vectors by
    /// `std::mem::take`, which leaves a default one behind, thousands of times per call).
    fn default() -> Self {
        static EMPTY: OnceLock<Text> = OnceLock::new();
        EMPTY.get_or_init(|| Text(Arc::from(""))).clone()
    }
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Text {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<String> for Text {
    fn from(s: String) -> Self {
        Text(Arc::from(s))
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Self {
        Text(Arc::from(s))
    }
}

impl From<&String> for Text {
    fn from(s: &String) -> Self {
        Text(Arc::from(s.as_str()))
    }
}

impl From<Text> for String {
    fn from(t: Text) -> Self {
        t.0.as_ref().to_owned()
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        &*self.0 == other.as_str()
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(Text::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_and_read_as_str() {
        let a = Text::from("héllo wörld".to_string());
        let b = a.clone();
        assert!(Arc::ptr_eq(&a.0, &b.0));
        assert_eq!(&*b, "héllo wörld");
        assert_eq!(a, "héllo wörld");
        assert_eq!(String::from(b), "héllo wörld");
        assert_eq!(Text::default().len(), 0);
        assert_eq!(serde_json::to_string(&a).unwrap(), "\"héllo wörld\"");
        assert_eq!(serde_json::from_str::<Text>("\"x\\u00e9\"").unwrap(), "xé");
        assert_eq!(format!("{a:?}"), "\"héllo wörld\"");
    }
}
