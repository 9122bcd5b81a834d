//! Tool (function) definitions as the model sees them.
//!
//! OpenAI does not put the JSON schemas into the prompt: it renders the functions as TypeScript
//! type declarations inside a `namespace functions { ... }` block appended to the system message.
//! The rendering below follows the one reverse-engineered and verified against the API's
//! `prompt_tokens` by hmarr/openai-chat-tokens (`src/functions.ts`, `formatFunctionDefinitions` /
//! `formatObjectProperties` / `formatType`):
//!
//! ```text
//! namespace functions {
//!
//! // <function description>
//! type <name> = (_: {
//! // <property description>          (nested ones: see below)
//! <prop>: <type>,                    (`<prop>?:` when not in `required`)
//! <obj>?: {
//!   <nested>?: "a" | "b",
//! },
//! }) => any;
//!
//! } // namespace functions
//! ```
//!
//! Types: `string`, `number` (also for `integer`), `boolean`, `null`, enums as `"a" | "b"`
//! (numbers unquoted), arrays as `<item type>[]` (`any[]` without `items`), objects as nested
//! braces indented by two spaces, `anyOf` as a `|` union. `const`, `minimum`,
//! `additionalProperties` and the parameters' own description do not appear.
//!
//! Descriptions of nested properties: the 2023 `functions` figures (gpt-3.5-turbo-0613) only match
//! without them, the 2024 `tools` figures (pamelafox/openai-messages-token-helper,
//! tests/functions.py) only come close with them (`// desc` lines indented like the property).
//! `nested_descriptions` chooses; `Profile::openai` renders them, which errs high on old models.
//!
//! Extrapolated (no published figure): `oneOf` is rendered like `anyOf`, a `type` array as a union
//! of its types, a property without a usable type as `any` (matches pamelafox's verified
//! `no_type` figure).

use std::cell::Cell;

use serde_json::{Map, Value};

use crate::message::ToolDef;

/// The `namespace functions { ... }` text OpenAI inserts for these tools.
pub fn render_openai_namespace(tools: &[ToolDef], nested_descriptions: bool) -> String {
    let r = Renderer { nested_descriptions, depth: Cell::new(0) };
    let mut lines: Vec<String> = vec!["namespace functions {".to_string(), String::new()];
    for tool in tools {
        if let Some(desc) = tool.description.as_deref().filter(|d| !d.is_empty()) {
            lines.push(format!("// {desc}"));
        }
        let has_props = tool.parameters.get("properties").and_then(Value::as_object).is_some_and(|p| !p.is_empty());
        if has_props {
            lines.push(format!("type {} = (_: {{", tool.name));
            lines.push(r.object_properties(&tool.parameters, 0));
            lines.push("}) => any;".to_string());
        } else {
            lines.push(format!("type {} = () => any;", tool.name));
        }
        lines.push(String::new());
    }
    lines.push("} // namespace functions".to_string());
    lines.join("\n")
}

/// Schemas nested deeper than this render as `any` (bounds recursion and output size for
/// hostile schemas; real tool schemas are a few levels deep).
const MAX_DEPTH: usize = 32;

struct Renderer {
    nested_descriptions: bool,
    depth: Cell<usize>,
}

impl Renderer {
    /// The properties of an object schema, one per line, prefixed by `indent` spaces.
    fn object_properties(&self, obj: &Value, indent: usize) -> String {
        let Some(props) = obj.get("properties").and_then(Value::as_object) else {
            return String::new();
        };
        let required: Vec<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let pad = " ".repeat(indent);
        let mut lines: Vec<String> = Vec::with_capacity(props.len() * 2);
        for (name, param) in props {
            if indent < 2 || self.nested_descriptions {
                if let Some(desc) = param.get("description").and_then(Value::as_str).filter(|d| !d.is_empty()) {
                    lines.push(format!("{pad}// {desc}"));
                }
            }
            let optional = if required.contains(&name.as_str()) { "" } else { "?" };
            lines.push(format!("{pad}{name}{optional}: {},", self.format_type(param, indent)));
        }
        lines.join("\n")
    }

    /// One property's type.
    fn format_type(&self, param: &Value, indent: usize) -> String {
        let d = self.depth.get();
        if d >= MAX_DEPTH {
            return "any".to_string();
        }
        self.depth.set(d + 1);
        let out = self.format_type_inner(param, indent);
        self.depth.set(d);
        out
    }

    fn format_type_inner(&self, param: &Value, indent: usize) -> String {
        let Some(obj) = param.as_object() else {
            return "any".to_string();
        };
        for key in ["anyOf", "oneOf"] {
            if let Some(variants) = obj.get(key).and_then(Value::as_array) {
                return variants.iter().map(|v| self.format_type(v, indent)).collect::<Vec<_>>().join(" | ");
            }
        }
        match obj.get("type") {
            Some(Value::String(t)) => self.format_named_type(t, obj, param, indent),
            Some(Value::Array(types)) => types
                .iter()
                .map(|t| match t.as_str() {
                    Some(t) => self.format_named_type(t, obj, param, indent),
                    None => "any".to_string(),
                })
                .collect::<Vec<_>>()
                .join(" | "),
            _ => {
                if obj.contains_key("properties") {
                    self.format_named_type("object", obj, param, indent)
                } else if let Some(values) = obj.get("enum").and_then(Value::as_array) {
                    enum_union(values, true)
                } else {
                    "any".to_string()
                }
            }
        }
    }

    fn format_named_type(&self, t: &str, obj: &Map<String, Value>, param: &Value, indent: usize) -> String {
        match t {
            "string" => match obj.get("enum").and_then(Value::as_array) {
                Some(values) => enum_union(values, true),
                None => "string".to_string(),
            },
            "number" | "integer" => match obj.get("enum").and_then(Value::as_array) {
                Some(values) => enum_union(values, false),
                None => "number".to_string(),
            },
            "boolean" => "boolean".to_string(),
            "null" => "null".to_string(),
            "object" => format!("{{\n{}\n}}", self.object_properties(param, indent + 2)),
            "array" => match obj.get("items") {
                Some(items) if items.is_object() => {
                    format!("{}[]", self.format_type(items, indent))
                }
                _ => "any[]".to_string(),
            },
            _ => "any".to_string(),
        }
    }
}

/// `"a" | "b"` (quoted) or `1 | 2` (unquoted). Strings are inserted as they are, like the
/// reference rendering (`"${v}"`), other values as their JSON text.
fn enum_union(values: &[Value], quote: bool) -> String {
    values
        .iter()
        .map(|v| {
            let s = match v {
                Value::String(s) => s.clone(),
                other => crate::base::json_text::text(other),
            };
            if quote {
                format!("\"{s}\"")
            } else {
                s
            }
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

/// Compact JSON of `{name, description, input_schema}` for one tool (what Anthropic-style APIs
/// receive), used by estimated profiles.
pub fn tool_json(tool: &ToolDef) -> String {
    let mut obj = Map::new();
    obj.insert("name".to_string(), Value::String(tool.name.clone()));
    if let Some(d) = tool.description.as_deref().filter(|d| !d.is_empty()) {
        obj.insert("description".to_string(), Value::String(d.to_string()));
    }
    obj.insert("input_schema".to_string(), tool.parameters.clone());
    crate::base::json_text::text(&Value::Object(obj))
}
