//! SessionState: the structured summary shared by mid-run compaction and end-of-run settlement
//! (docs/design.md, "Session settlement"). Validated, then rendered deterministically into one summary message.

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use crate::message::checkpoint::SUMMARY_MARKER;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanStep {
    pub description: String,
    pub status: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub status: String,
    #[serde(default)]
    pub steps: Vec<PlanStep>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionState {
    pub summary: String,
    #[serde(default)]
    pub key_facts: Vec<String>,
    #[serde(default)]
    pub decisions: Vec<String>,
    #[serde(default)]
    pub plan: Option<Plan>,
    #[serde(default)]
    pub open_questions: Vec<String>,
}

/// The JSON schema the summarizer is asked to follow, as JSON text: parsing it at run time takes
/// far less .wasm code (~11 KB less) than building it with `json!` (the unit test
/// `schema_text_is_the_built_schema` checks it is the same value, key order included).
const SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "summary": { "type": "string", "description": "What happened so far and the user's current goal, in the user's language." },
    "key_facts": { "type": "array", "items": { "type": "string" } },
    "decisions": { "type": "array", "items": { "type": "string" } },
    "plan": {
      "type": "object",
      "properties": {
        "status": { "type": "string", "enum": ["active", "done", "blocked", "none"] },
        "steps": { "type": "array", "items": {
          "type": "object",
          "properties": {
            "description": { "type": "string" },
            "status": { "type": "string", "enum": ["pending", "in_progress", "done", "blocked"] }
          },
          "required": ["description", "status"],
          "additionalProperties": false
        } }
      },
      "required": ["status", "steps"],
      "additionalProperties": false
    },
    "open_questions": { "type": "array", "items": { "type": "string" } }
  },
  "required": ["summary", "key_facts", "decisions", "plan", "open_questions"],
  "additionalProperties": false
}"#;

/// The JSON schema the summarizer is asked to follow.
pub fn schema() -> Value {
    // A constant text that parses (unit test); `Null` is unreachable.
    serde_json::from_str(SCHEMA).unwrap_or(Value::Null)
}

/// Why an answer was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invalid {
    Empty,
    Malformed,
}

/// A summarizer's answer, validated: plain text or a SessionState.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Text(String),
    State(SessionState),
}

fn clean(s: &str) -> String {
    s.trim().to_string()
}

fn clean_list(v: &[String]) -> Vec<String> {
    v.iter().map(|s| clean(s)).filter(|s| !s.is_empty()).collect()
}

impl SessionState {
    /// Trimmed, empty entries removed; an empty summary is invalid.
    pub fn validated(self) -> Result<SessionState, Invalid> {
        let s = SessionState {
            summary: clean(&self.summary),
            key_facts: clean_list(&self.key_facts),
            decisions: clean_list(&self.decisions),
            plan: self.plan.map(|p| Plan {
                status: clean(&p.status),
                steps: p
                    .steps
                    .into_iter()
                    .map(|st| PlanStep { description: clean(&st.description), status: clean(&st.status) })
                    .filter(|st| !st.description.is_empty())
                    .collect(),
            }),
            open_questions: clean_list(&self.open_questions),
        };
        if s.summary.is_empty() {
            return Err(Invalid::Empty);
        }
        Ok(s)
    }
}

/// Validate what the summarizer returned: a non-empty string (JSON text that parses as a
/// SessionState is taken as one), or a SessionState object (fields the schema does not name are
/// ignored; a field of the wrong type is malformed). Anything else is malformed.
pub fn parse_answer(value: &Value) -> Result<Answer, Invalid> {
    match value {
        Value::String(s) => {
            let t = s.trim();
            if t.is_empty() {
                return Err(Invalid::Empty);
            }
            let unfenced = t
                .strip_prefix("```json")
                .or_else(|| t.strip_prefix("```"))
                .and_then(|r| r.strip_suffix("```"))
                .map(str::trim)
                .unwrap_or(t);
            if unfenced.starts_with('{') {
                if let Ok(state) = serde_json::from_str::<SessionState>(unfenced) {
                    return state.validated().map(Answer::State);
                }
            }
            Ok(Answer::Text(t.to_string()))
        }
        // Through the JSON text (not `from_value`): the one deserializer the crate instantiates
        // for its types (a second, over `Value`, would add its code again); the same result, as
        // the fields are strings, lists and objects.
        Value::Object(_) => serde_json::from_str::<SessionState>(&crate::base::json_text::text(value))
            .map_err(|_| Invalid::Malformed)?
            .validated()
            .map(Answer::State),
        Value::Null => Err(Invalid::Empty),
        _ => Err(Invalid::Malformed),
    }
}

fn section(out: &mut String, title: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    out.push_str("\n\n## ");
    out.push_str(title);
    for i in items {
        out.push_str("\n- ");
        out.push_str(&i.replace('\n', " "));
    }
}

/// Render an answer into the summary message text, deterministically.
pub fn render(answer: &Answer) -> String {
    let mut out = String::from(SUMMARY_MARKER);
    out.push_str(" Summary of the earlier conversation (written when the context was compacted).");
    match answer {
        Answer::Text(t) => {
            out.push_str("\n\n");
            out.push_str(t);
        }
        Answer::State(s) => {
            out.push_str("\n\n## Summary\n");
            out.push_str(&s.summary);
            section(&mut out, "Key facts", &s.key_facts);
            section(&mut out, "Decisions", &s.decisions);
            if let Some(p) = &s.plan {
                if !p.steps.is_empty() || !p.status.is_empty() {
                    out.push_str("\n\n## Plan");
                    if !p.status.is_empty() {
                        out.push_str(" (");
                        out.push_str(&p.status);
                        out.push(')');
                    }
                    for st in &p.steps {
                        out.push_str(&format!("\n- [{}] {}", st.status, st.description.replace('\n', " ")));
                    }
                }
            }
            section(&mut out, "Open questions", &s.open_questions);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_are_validated() {
        assert_eq!(parse_answer(&json!("  ")), Err(Invalid::Empty));
        assert_eq!(parse_answer(&json!(null)), Err(Invalid::Empty));
        assert_eq!(parse_answer(&json!(42)), Err(Invalid::Malformed));
        assert_eq!(parse_answer(&json!([1])), Err(Invalid::Malformed));
        assert_eq!(parse_answer(&json!({"summary": 3})), Err(Invalid::Malformed));
        // A field the schema does not name (models add `confidence`, `title`...) is ignored.
        assert!(
            matches!(parse_answer(&json!({"summary": "x", "confidence": 0.9})), Ok(Answer::State(s)) if s.summary == "x")
        );
        assert_eq!(parse_answer(&json!({"summary": "  "})), Err(Invalid::Empty));
        assert_eq!(parse_answer(&json!(" plain ")), Ok(Answer::Text("plain".into())));
        let fenced = "```json\n{\"summary\":\"s\",\"key_facts\":[\"a\",\" \"]}\n```";
        match parse_answer(&json!(fenced)).unwrap() {
            Answer::State(s) => assert_eq!(s.key_facts, vec!["a".to_string()]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn rendering_is_deterministic_and_complete() {
        let v = json!({
            "summary": "用户正在重构 UserService，已完成接口分析",
            "key_facts": ["UserService 有 12 个公开方法"],
            "decisions": ["使用 Repository 模式"],
            "plan": {"status": "active", "steps": [{"description": "分析接口", "status": "done"}, {"description": "拆分逻辑", "status": "in_progress"}]},
            "open_questions": []
        });
        let a = parse_answer(&v).unwrap();
        let r = render(&a);
        assert_eq!(r, render(&parse_answer(&v).unwrap()));
        assert!(r.starts_with(SUMMARY_MARKER));
        assert!(r.contains("## Key facts\n- UserService 有 12 个公开方法"));
        assert!(r.contains("## Plan (active)\n- [done] 分析接口\n- [in_progress] 拆分逻辑"));
        assert!(!r.contains("Open questions"));
    }

    #[test]
    fn schema_names_every_field() {
        let s = schema();
        for f in ["summary", "key_facts", "decisions", "plan", "open_questions"] {
            assert!(s["properties"][f].is_object(), "{f}");
        }
    }

    /// The schema as it was built with `json!` before it became a text.
    fn built_schema() -> Value {
        let strings = json!({ "type": "array", "items": { "type": "string" } });
        json!({
            "type": "object",
            "properties": {
                "summary": { "type": "string", "description": "What happened so far and the user's current goal, in the user's language." },
                "key_facts": strings,
                "decisions": strings,
                "plan": {
                    "type": "object",
                    "properties": {
                        "status": { "type": "string", "enum": ["active", "done", "blocked", "none"] },
                        "steps": { "type": "array", "items": {
                            "type": "object",
                            "properties": {
                                "description": { "type": "string" },
                                "status": { "type": "string", "enum": ["pending", "in_progress", "done", "blocked"] }
                            },
                            "required": ["description", "status"],
                            "additionalProperties": false
                        } }
                    },
                    "required": ["status", "steps"],
                    "additionalProperties": false
                },
                "open_questions": strings
            },
            "required": ["summary", "key_facts", "decisions", "plan", "open_questions"],
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
