//! The `read_attachment` tool: its JSON schema for the model and a paged reader (by token offset
//! and limit) over attachment text the host keeps.

use serde::Serialize;
use serde_json::Value;

use crate::base::error::{Error, ErrorCode, Result};
use crate::format::Format;
use crate::tokens::{self, Encoding};

use super::attachment::READ_TOOL;

/// Largest page the reader hands out, so one call cannot flood the context.
pub const MAX_PAGE_TOKENS: usize = 8_000;
/// Page size when the model does not ask for one.
pub const DEFAULT_PAGE_TOKENS: usize = 2_000;

const DESCRIPTION: &str = "Read the full text of an attachment the user provided, page by page. \
Attachments appear in the conversation as bounded previews marked [ctxguard:attachment-preview]; \
the preview names the attachment id and the offset to continue from. Returns the text of the page \
and nextOffset (null at the end).";

/// The tool's parameters schema as JSON text (parsed at run time: far less .wasm code than
/// `json!`; the unit test checks it against the `json!` value, `maximum` = [`MAX_PAGE_TOKENS`]).
const PARAMETERS: &str = r#"{
  "type": "object",
  "properties": {
    "id": { "type": "string", "description": "The attachment id shown in its preview." },
    "offset": { "type": "integer", "minimum": 0, "description": "Token offset to start from (0 = beginning)." },
    "limit": { "type": "integer", "minimum": 1, "maximum": 8000, "description": "Maximum tokens to return." }
  },
  "required": ["id"],
  "additionalProperties": false
}"#;

/// An object of `entries`, in their order.
fn object<const N: usize>(entries: [(&str, Value); N]) -> Value {
    Value::Object(entries.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// The tool definition in the wire format of `format`.
pub fn tool_definition(format: Format) -> Value {
    // A constant text that parses (unit test); `Null` is unreachable.
    let parameters: Value = serde_json::from_str(PARAMETERS).unwrap_or(Value::Null);
    let text = |s: &str| Value::String(s.to_string());
    match format {
        Format::Openai => object([
            ("type", text("function")),
            (
                "function",
                object([("name", text(READ_TOOL)), ("description", text(DESCRIPTION)), ("parameters", parameters)]),
            ),
        ]),
        Format::Anthropic => {
            object([("name", text(READ_TOOL)), ("description", text(DESCRIPTION)), ("input_schema", parameters)])
        }
        // A ToolSet entry; hosts wrap it: `tool({ description, inputSchema: jsonSchema(inputSchema), execute })`.
        Format::AiSdk | Format::AiSdkUi => {
            object([(READ_TOOL, object([("description", text(DESCRIPTION)), ("inputSchema", parameters)]))])
        }
        // Flat; not strict: `offset` and `limit` are optional, which strict mode does not allow.
        Format::OpenaiResponses => object([
            ("type", text("function")),
            ("name", text(READ_TOOL)),
            ("description", text(DESCRIPTION)),
            ("parameters", parameters),
            ("strict", Value::Bool(false)),
        ]),
        // A Tool holding one declaration; `parametersJsonSchema` takes the JSON schema as it is
        // (`parameters` takes Gemini's OpenAPI subset).
        Format::Gemini => object([(
            "functionDeclarations",
            Value::Array(vec![object([
                ("name", text(READ_TOOL)),
                ("description", text(DESCRIPTION)),
                ("parametersJsonSchema", parameters),
            ])]),
        )]),
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Page {
    pub id: String,
    pub text: String,
    pub offset: u32,
    /// Token offset of the next page, `None` at the end.
    pub next_offset: Option<u32>,
    pub total_tokens: u32,
}

fn floor_char(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The page of `text` from token `offset`, at most `limit` tokens (default and cap above). Pages
/// are contiguous: the text of consecutive pages concatenates to the whole text. A token that
/// ends inside a character moves the cut back to the character's start.
pub fn read(encoding: Encoding, id: &str, text: &str, offset: usize, limit: Option<usize>) -> Result<Page> {
    let limit = limit.unwrap_or(DEFAULT_PAGE_TOKENS);
    if limit == 0 || limit > MAX_PAGE_TOKENS {
        return Err(Error::new(
            ErrorCode::InvalidOptions,
            format!("limit must be between 1 and {MAX_PAGE_TOKENS}, got {limit}"),
        ));
    }
    let tok = tokens::tokenizer(encoding)?;
    // Byte start of every token boundary we need: token `offset` and token `offset + limit`.
    let mut total = 0usize;
    let mut start = None;
    let mut end = None;
    tok.for_each_token(text, |_, s, _| {
        if total == offset {
            start = Some(s);
        }
        if total == offset + limit {
            end = Some(s);
        }
        total += 1;
    });
    if offset > total || (offset == total && total > 0) {
        return Err(Error::new(
            ErrorCode::InvalidOptions,
            format!("offset {offset} is past the end of attachment {id:?} ({total} tokens)"),
        ));
    }
    let start = floor_char(text, start.unwrap_or(text.len()));
    let end = floor_char(text, end.unwrap_or(text.len()));
    let next = offset + limit;
    let to_u32 = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    Ok(Page {
        id: id.to_string(),
        text: text.get(start..end).unwrap_or("").to_string(),
        offset: to_u32(offset),
        next_offset: (next < total).then(|| to_u32(next)),
        total_tokens: to_u32(total),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The definition as it was built with `json!`.
    fn built_definition(format: Format) -> Value {
        let parameters = json!({
            "type": "object",
            "properties": {
                "id": { "type": "string", "description": "The attachment id shown in its preview." },
                "offset": { "type": "integer", "minimum": 0, "description": "Token offset to start from (0 = beginning)." },
                "limit": { "type": "integer", "minimum": 1, "maximum": MAX_PAGE_TOKENS, "description": "Maximum tokens to return." }
            },
            "required": ["id"],
            "additionalProperties": false
        });
        match format {
            Format::Openai => json!({
                "type": "function",
                "function": { "name": READ_TOOL, "description": DESCRIPTION, "parameters": parameters }
            }),
            Format::Anthropic => json!({ "name": READ_TOOL, "description": DESCRIPTION, "input_schema": parameters }),
            // A ToolSet entry; hosts wrap it: `tool({ description, inputSchema: jsonSchema(inputSchema), execute })`.
            Format::AiSdk | Format::AiSdkUi => {
                let mut set = serde_json::Map::new();
                set.insert(READ_TOOL.into(), json!({ "description": DESCRIPTION, "inputSchema": parameters }));
                Value::Object(set)
            }
            Format::OpenaiResponses => {
                json!({ "type": "function", "name": READ_TOOL, "description": DESCRIPTION, "parameters": parameters, "strict": false })
            }
            Format::Gemini => json!({
                "functionDeclarations": [{ "name": READ_TOOL, "description": DESCRIPTION, "parametersJsonSchema": parameters }]
            }),
        }
    }

    #[test]
    fn definition_is_the_built_one() {
        for format in
            [Format::Openai, Format::Anthropic, Format::AiSdk, Format::AiSdkUi, Format::OpenaiResponses, Format::Gemini]
        {
            let (ours, built) = (tool_definition(format), built_definition(format));
            assert_eq!(ours, built);
            assert_eq!(ours.to_string(), built.to_string(), "same key order");
        }
    }
}
