//! End-of-run settlement (docs/design.md, "Session settlement"): the conversation's own model writes the
//! SessionState plus memory entries, reflections and learnings. Same schema checks, attempts and
//! mechanical fallback as compaction; the output is data for the host, never an assistant message.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::guard::Guard;
use crate::message::Message;

use super::evidence::evidence_message;
use super::session_state::{self, SessionState};
use super::{FailureReason, SummaryRequest, DEFAULT_SUMMARY_MAX_TOKENS};

/// Fields the schema does not name are ignored (models add them); wrong types are invalid.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Settlement {
    pub session_state: SessionState,
    #[serde(default)]
    pub memory_entries: Vec<String>,
    #[serde(default)]
    pub reflections: Vec<String>,
    #[serde(default)]
    pub learnings: Vec<String>,
}

/// The settlement schema as JSON text (parsing it takes far less .wasm code than building it with
/// `json!`; unit test `schema_text_is_the_built_schema`); `session_state` is filled in by
/// [`schema`], in its place.
const SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "session_state": null,
    "memory_entries": { "type": "array", "items": { "type": "string" } },
    "reflections": { "type": "array", "items": { "type": "string" } },
    "learnings": { "type": "array", "items": { "type": "string" } }
  },
  "required": ["session_state", "memory_entries", "reflections", "learnings"],
  "additionalProperties": false
}"#;

pub fn schema() -> Value {
    // A constant text that parses (unit test); `Null` is unreachable.
    let mut v: Value = serde_json::from_str(SCHEMA).unwrap_or(Value::Null);
    if let Some(slot) = v.pointer_mut("/properties/session_state") {
        *slot = session_state::schema();
    }
    v
}

fn instructions(max_tokens: u32) -> String {
    format!(
        "The run is over. Settle it: write the session state that the next run will start from, plus what is \
worth remembering. Write in the user's language. session_state: the summary (the user's goal and where things \
stand), key facts, decisions, the plan with each step's status, open questions. memory_entries: durable facts \
and preferences about the user or the project. reflections: what went well or badly in this run. learnings: \
mistakes and how to avoid them. Answer with one JSON object following the schema. Stay under {max_tokens} tokens."
    )
}

/// The settlement request over the whole conversation, trimmed (newest kept) to the input budget.
pub fn request(guard: &mut Guard, messages: &[Message]) -> SummaryRequest {
    let max_tokens = DEFAULT_SUMMARY_MAX_TOKENS;
    let instructions = instructions(max_tokens);
    let budget = (guard.budget.usable_limit as usize)
        .saturating_sub(max_tokens as usize)
        .saturating_sub(guard.count_text(&instructions) + 512);
    let kept = super::trim_newest(guard, messages, budget);
    SummaryRequest { messages: kept, instructions, schema: schema(), max_tokens }
}

fn clean(v: Vec<String>) -> Vec<String> {
    v.into_iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
}

/// Validate an answer: a Settlement object (or JSON text of one).
pub fn validate(value: &Value) -> Result<Settlement, FailureReason> {
    let v = match value {
        Value::String(s) if s.trim().is_empty() => return Err(FailureReason::EmptyOutput),
        Value::String(s) => {
            let t = s.trim();
            let t = t
                .strip_prefix("```json")
                .or_else(|| t.strip_prefix("```"))
                .and_then(|r| r.strip_suffix("```"))
                .map_or(t, str::trim);
            serde_json::from_str::<Value>(t).map_err(|_| FailureReason::InvalidOutput)?
        }
        Value::Null => return Err(FailureReason::EmptyOutput),
        other => other.clone(),
    };
    // From the JSON text of the value, like `session_state::parse_answer` (one deserializer).
    let s: Settlement =
        serde_json::from_str(&crate::base::json_text::text(&v)).map_err(|_| FailureReason::InvalidOutput)?;
    let state = s.session_state.validated().map_err(|_| FailureReason::EmptyOutput)?;
    Ok(Settlement {
        session_state: state,
        memory_entries: clean(s.memory_entries),
        reflections: clean(s.reflections),
        learnings: clean(s.learnings),
    })
}

/// The mechanical fallback: a SessionState whose summary is the tool evidence and user requests.
pub fn fallback(guard: &Guard, messages: &[Message], reason: FailureReason) -> Settlement {
    let summary = evidence_message(messages, reason.as_str(), guard.model.encoding, super::EVIDENCE_TOKENS)
        .map(|m| m.content.text())
        .unwrap_or_else(|| {
            format!("{} The run left no evidence to keep ({}).", super::evidence::EVIDENCE_MARKER, reason.as_str())
        });
    Settlement { session_state: SessionState { summary, ..Default::default() }, ..Default::default() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn validation() {
        assert_eq!(validate(&json!(null)), Err(FailureReason::EmptyOutput));
        assert_eq!(validate(&json!("not json")), Err(FailureReason::InvalidOutput));
        assert_eq!(validate(&json!({"session_state": {"summary": " "}})), Err(FailureReason::EmptyOutput));
        assert!(validate(&json!({"session_state": {"summary": "s"}, "mood": 1})).is_ok(), "unknown fields are ignored");
        assert_eq!(
            validate(&json!({"session_state": {"summary": "s"}, "memory_entries": "one"})),
            Err(FailureReason::InvalidOutput)
        );
        let ok = validate(&json!(
            "```json\n{\"session_state\":{\"summary\":\"s\"},\"memory_entries\":[\"likes tea\",\"\"]}\n```"
        ))
        .unwrap();
        assert_eq!(ok.memory_entries, vec!["likes tea".to_string()]);
    }

    /// The schema as it was built with `json!` before it became a text.
    fn built_schema() -> Value {
        let strings = json!({ "type": "array", "items": { "type": "string" } });
        json!({
            "type": "object",
            "properties": {
                "session_state": session_state::schema(),
                "memory_entries": strings,
                "reflections": strings,
                "learnings": strings
            },
            "required": ["session_state", "memory_entries", "reflections", "learnings"],
            "additionalProperties": false
        })
    }

    #[test]
    fn schema_text_is_the_built_schema() {
        let text = schema();
        let built = built_schema();
        assert_eq!(text, built);
        assert_eq!(text.to_string(), built.to_string(), "same key order");
    }
}
