//! Chat templates of the open-weight families (docs/vocabularies.md, "Chat templates"): the
//! tokens a model's own template adds around the messages, counted exactly.
//!
//! A template renders the conversation into one text with special tokens between the turns
//! (`<|start_header_id|>`, `<|im_start|>`, `<｜User｜>`...). Those are added tokens of the
//! vocabulary, so the tokenizer cuts the rendered text at each of them first: the count of the
//! whole is the count of each stretch between them, plus one per special token. Each message is
//! rendered here as its template renders it (`count_message`, cached by content like every
//! message count); what depends on the other messages — the system header, where the tools go,
//! runs of tool results merged into one turn, Qwen 3 keeping the reasoning of the turns after
//! the last user query, DeepSeek's first tool call and output, the generation prompt — is a
//! request-level sum (`overhead`) over each message's role and a few figures its count carries
//! (`TemplateFacts`), so that a guard that only kept the messages' counts gets the same total.
//!
//! Templates (as `@huggingface/jinja` renders them with `add_generation_prompt: true`; checked in
//! tests/js/templates.test.mjs against the templates themselves):
//! - `llama3.1`: Meta's Llama 3.1 template (also 3.2 / 3.3 with `date_string` "26 Jul 2024"):
//!   BOS, a system header with "Cutting Knowledge Date" and "Today Date: 26 Jul 2024", tools in
//!   the first user message, tool results as `ipython` turns, one tool call per turn.
//! - `qwen3`: Qwen 3's template (Qwen 2.5's differs in its tool preamble; counted as Qwen 3).
//! - `deepseek-v3`, `deepseek-r1`: DeepSeek's templates, quirks included (the first tool call and
//!   the first tool output of the conversation differ from later ones).
//! - `harmony`: gpt-oss's harmony format as openai-harmony renders a conversation for completion
//!   with the default system message; tools are counted as OpenAI's namespace (not checked).
//!
//! Message content is the text of the message (parts joined with newlines, as servers join
//! them); images and files are counted by the profile's rules and not rendered.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::message::{Message, MessageCount, Role, TemplateFacts, ToolCall, ToolDef};
use crate::tokens::{self, Encoding};

/// Which chat template a profile counts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Template {
    /// Llama 3.0's: every message a turn of its own, no system header, no tools.
    #[serde(rename = "llama3")]
    Llama3,
    #[serde(rename = "llama3.1")]
    Llama31,
    #[serde(rename = "qwen3")]
    Qwen3,
    #[serde(rename = "deepseek-v3")]
    DeepseekV3,
    #[serde(rename = "deepseek-r1")]
    DeepseekR1,
    #[serde(rename = "harmony")]
    Harmony,
}

/// Renders stretches of text and special tokens and counts them.
struct Render {
    enc: Encoding,
    tokens: usize,
    text: String,
    /// Special tokens and the template's own words, counted alone (the message's framing in
    /// its breakdown; the rest is its text).
    framing: usize,
}

impl Render {
    fn new(enc: Encoding) -> Render {
        Render { enc, tokens: 0, text: String::new(), framing: 0 }
    }

    /// A special token of the template (one token; it cuts the text around it).
    fn special(&mut self) -> &mut Self {
        self.flush();
        self.tokens += 1;
        self.framing += 1;
        self
    }

    /// The message's own text (content, names, arguments).
    fn text(&mut self, s: &str) -> &mut Self {
        self.text.push_str(s);
        self
    }

    /// The template's own words around it.
    fn lit(&mut self, s: &str) -> &mut Self {
        self.framing += tokens::count(self.enc, s);
        self.text.push_str(s);
        self
    }

    fn flush(&mut self) {
        if !self.text.is_empty() {
            self.tokens += tokens::count(self.enc, &self.text);
            self.text.clear();
        }
    }

    fn total(mut self) -> usize {
        self.flush();
        self.tokens
    }

    /// `(total, framing)`.
    fn finish(mut self) -> (usize, usize) {
        self.flush();
        (self.tokens, self.framing.min(self.tokens))
    }
}

/// JavaScript's `String.prototype.trim` (what `@huggingface/jinja`'s `trim` filter does).
pub fn js_trim(s: &str) -> &str {
    let ws = |c: char| {
        matches!(
            c,
            '\u{9}' | '\u{a}' | '\u{b}' | '\u{c}' | '\u{d}' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
                ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}'
        )
    };
    s.trim_matches(ws)
}

/// `@huggingface/jinja`'s `tojson`: Python's separators (`", "`, `": "`; `","` with an indent),
/// strings as `JSON.stringify` writes them, integral numbers without a fraction.
pub fn tojson(v: &Value, indent: Option<usize>) -> String {
    let mut out = String::new();
    write_json(v, indent, 0, &mut out);
    out
}

fn write_json(v: &Value, indent: Option<usize>, depth: usize, out: &mut String) {
    let pad = |d: usize| indent.map(|n| format!("\n{}", " ".repeat(n * d))).unwrap_or_default();
    let item_sep = if indent.is_some() { "," } else { ", " };
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => out.push_str(&i.to_string()),
            (_, Some(u), _) => out.push_str(&u.to_string()),
            (_, _, Some(f)) if f.fract() == 0.0 && f.abs() < 1e21 => out.push_str(&format!("{f:.0}")),
            _ => out.push_str(&n.to_string()),
        },
        Value::String(s) => out.push_str(&serde_json::to_string(s).unwrap_or_default()),
        Value::Array(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                out.push_str(&pad(depth + 1));
                write_json(x, indent, depth + 1, out);
            }
            if !items.is_empty() {
                out.push_str(&pad(depth));
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, x)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                out.push_str(&pad(depth + 1));
                out.push_str(&serde_json::to_string(k).unwrap_or_default());
                out.push_str(": ");
                write_json(x, indent, depth + 1, out);
            }
            if !map.is_empty() {
                out.push_str(&pad(depth));
            }
            out.push('}');
        }
    }
}

/// A tool definition as chat clients send it: `{"type": "function", "function": {"name",
/// "description", "parameters"}}`.
fn tool_value(t: &ToolDef) -> Value {
    let mut f = serde_json::Map::new();
    f.insert("name".into(), Value::String(t.name.clone()));
    if let Some(d) = &t.description {
        f.insert("description".into(), Value::String(d.clone()));
    }
    f.insert("parameters".into(), t.parameters.clone());
    let mut out = serde_json::Map::new();
    out.insert("type".into(), Value::String("function".into()));
    out.insert("function".into(), Value::Object(f));
    Value::Object(out)
}

/// A tool call's arguments as the template receives them: the JSON they hold (servers parse
/// them), else the text.
fn arguments(c: &ToolCall) -> Value {
    serde_json::from_str(&c.arguments).unwrap_or_else(|_| Value::String(c.arguments.to_string()))
}

/// Python's `s.split(sep)[-1]` and `s.split(sep)[0]`.
fn after_last<'a>(s: &'a str, sep: &str) -> &'a str {
    s.rsplit_once(sep).map_or(s, |(_, b)| b)
}
fn before_first<'a>(s: &'a str, sep: &str) -> &'a str {
    s.split_once(sep).map_or(s, |(a, _)| a)
}

/// The tokens of one message in its usual place (see the module doc), with the figures the
/// request-level sum needs.
pub fn count_message(template: Template, enc: Encoding, m: &Message) -> (MessageCount, TemplateFacts) {
    let content = m.content.text();
    let role = m.role;
    let mut facts = TemplateFacts::default();
    let mut r = Render::new(enc);
    let r = match template {
        Template::Llama3 => {
            let body = js_trim(&content).to_string();
            r.special().lit(role.as_str()).special().lit("\n\n").text(&body).special();
            r
        }
        Template::Llama31 => {
            let body = js_trim(&content).to_string();
            match role {
                // The leading system message sits in the system header (`overhead`).
                Role::System => {
                    r.text(&body);
                }
                Role::Tool => {
                    r.special()
                        .lit("ipython")
                        .special()
                        .lit("\n\n")
                        .text(&tojson(&Value::String(content.clone()), None));
                    r.special();
                }
                Role::Assistant if !m.tool_calls.is_empty() => {
                    r.special().lit("assistant").special().lit("\n\n");
                    for c in &m.tool_calls {
                        r.text(&format!(
                            "{{\"name\": \"{}\", \"parameters\": {}}}",
                            c.name,
                            tojson(&arguments(c), None)
                        ));
                    }
                    r.special();
                }
                _ => {
                    r.special().lit(role.as_str()).special().lit("\n\n").text(&body).special();
                }
            }
            r
        }
        Template::Qwen3 => {
            match role {
                Role::Tool => {
                    // In a run of tool results (the run's wrapper is in `overhead`).
                    r.lit("\n<tool_response>\n").text(&content).lit("\n</tool_response>");
                }
                Role::Assistant => {
                    let reasoning_field = m.extra.get("reasoning_content").and_then(Value::as_str);
                    let (shown, reasoning) = match reasoning_field {
                        Some(rc) => (content.clone(), rc.to_string()),
                        None if content.contains("</think>") => (
                            after_last(&content, "</think>").trim_start_matches('\n').to_string(),
                            after_last(before_first(&content, "</think>").trim_end_matches('\n'), "<think>")
                                .trim_start_matches('\n')
                                .to_string(),
                        ),
                        None => (content.clone(), String::new()),
                    };
                    let calls = qwen_calls(&m.tool_calls, !shown.is_empty());
                    let (plain, plain_framing) = {
                        let mut r = Render::new(enc);
                        r.special().lit("assistant\n").text(&shown).text(&calls).special().lit("\n");
                        r.finish()
                    };
                    let thinking = {
                        let mut r = Render::new(enc);
                        r.special()
                            .lit("assistant\n<think>\n")
                            .text(reasoning.trim_matches('\n'))
                            .lit("\n</think>\n\n")
                            .text(shown.trim_start_matches('\n'))
                            .text(&calls)
                            .special()
                            .lit("\n");
                        r.total()
                    };
                    facts.after_query = (if reasoning.is_empty() { plain } else { thinking }) as u32;
                    facts.after_query_last = thinking as u32;
                    r.tokens = plain;
                    r.framing = plain_framing;
                }
                _ => {
                    facts.tool_response_user = role == Role::User
                        && content.starts_with("<tool_response>")
                        && content.ends_with("</tool_response>");
                    r.special().lit(role.as_str()).lit("\n").text(&content).special().lit("\n");
                }
            }
            r
        }
        Template::DeepseekV3 | Template::DeepseekR1 => {
            let r1 = template == Template::DeepseekR1;
            match role {
                Role::System => {
                    r.text(&content);
                }
                Role::User => {
                    r.special().text(&content);
                }
                Role::Tool => {
                    // A later output (`overhead` adds the first one's difference).
                    if !r1 {
                        r.lit("\n");
                    }
                    r.special().text(&content).special();
                }
                Role::Assistant => {
                    let none = m.wire.content_was_null;
                    let calls_shown = !m.tool_calls.is_empty() && (r1 || none);
                    if calls_shown {
                        facts.calls = true;
                        // Later calls: "\n<｜tool▁call▁begin｜>type<｜tool▁sep｜>name\n```json\nargs\n```<｜tool▁call▁end｜>".
                        let call = |r: &mut Render, c: &ToolCall| {
                            r.special()
                                .lit("function")
                                .special()
                                .text(&c.name)
                                .lit("\n```json\n")
                                .text(&c.arguments)
                                .lit("\n```")
                                .special();
                        };
                        let mut later = Render::new(enc);
                        for c in &m.tool_calls {
                            later.lit("\n");
                            call(&mut later, c);
                            if !r1 {
                                later.special().special();
                            }
                        }
                        if r1 {
                            later.special().special();
                        }
                        let (later, later_framing) = later.finish();
                        // The first tool-calling message of a conversation: its first call opens
                        // with <｜Assistant｜><｜tool▁calls▁begin｜> (after the content for R1), and
                        // for V3 the closing pair follows only the later calls.
                        let mut first = Render::new(enc);
                        if r1 && !none {
                            first.special().text(&content).special();
                        } else {
                            first.special().special();
                        }
                        for (i, c) in m.tool_calls.iter().enumerate() {
                            if i > 0 {
                                first.lit("\n");
                            }
                            call(&mut first, c);
                            if !r1 && i > 0 {
                                first.special().special();
                            }
                        }
                        if r1 {
                            first.special().special();
                        }
                        let diff =
                            i64::try_from(first.total()).unwrap_or(i64::MAX) - i64::try_from(later).unwrap_or(i64::MAX);
                        facts.first_call_extra = i32::try_from(diff).unwrap_or(0);
                        r.tokens = later;
                        r.framing = later_framing;
                    } else {
                        let shown = if r1 && content.contains("</think>") {
                            after_last(&content, "</think>")
                        } else {
                            &content
                        };
                        r.special().text(shown).special();
                    }
                }
            }
            r
        }
        Template::Harmony => {
            match role {
                Role::System => {
                    r.special().lit("developer").special().lit("# Instructions\n\n").text(&content).special();
                }
                Role::Assistant if !m.tool_calls.is_empty() => {
                    for c in &m.tool_calls {
                        r.special()
                            .lit("assistant")
                            .special()
                            .text(&format!("commentary to=functions.{} ", c.name))
                            .special()
                            .lit("json")
                            .special()
                            .text(&c.arguments)
                            .special();
                    }
                }
                Role::Assistant => {
                    r.special().lit("assistant").special().lit("final").special().text(&content).special();
                }
                Role::Tool => {
                    let name = m.name.as_deref().unwrap_or("tool");
                    r.special()
                        .text(&format!("functions.{name} to=assistant"))
                        .special()
                        .lit("commentary")
                        .special()
                        .text(&content)
                        .special();
                }
                Role::User => {
                    r.special().lit("user").special().text(&content).special();
                }
            }
            r
        }
    };
    let (total, framing) = r.finish();
    (MessageCount { total, text: total - framing, framing, ..Default::default() }, facts)
}

/// Qwen 3's tool calls after an assistant message's content.
fn qwen_calls(calls: &[ToolCall], has_content: bool) -> String {
    let mut out = String::new();
    for (i, c) in calls.iter().enumerate() {
        if i > 0 || has_content {
            out.push('\n');
        }
        let args = match arguments(c) {
            Value::String(s) => s,
            _ => c.arguments.to_string(),
        };
        // A string is inserted as it is; an object would be `tojson`: arguments arrive as text.
        out.push_str(&format!("<tool_call>\n{{\"name\": \"{}\", \"arguments\": {}}}\n</tool_call>", c.name, args));
    }
    out
}

/// Template tokens outside the messages' own counts: BOS, headers, the generation prompt, and
/// what depends on where a message sits (see the module doc). `turns` are each message's role
/// and template figures, in order.
pub fn overhead(template: Template, enc: Encoding, turns: &[(Role, MessageCount, TemplateFacts)]) -> usize {
    let count = |s: &str| tokens::count(enc, s);
    match template {
        Template::Llama3 => 1 + 2 + count("assistant") + count("\n\n"),
        Template::Llama31 => {
            // BOS, the system header (with the date lines) and the generation prompt; every
            // system message but a leading one is a turn of its own.
            let header =
                3 + count("system") + count("\n\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n");
            let prompt = 2 + count("assistant") + count("\n\n");
            let extra_systems = turns.iter().enumerate().filter(|(i, t)| t.0 == Role::System && *i > 0).count();
            let system_turn = 3 + count("system") + count("\n\n");
            1 + header + prompt + extra_systems * system_turn
        }
        Template::Qwen3 => {
            let mut n = 1 + count("assistant\n");
            // Runs of tool results: one user turn around each run.
            let open = (1 + count("user\n")).saturating_sub(count("\n"));
            let close = 1 + count("\n");
            let mut prev_tool = false;
            for (role, _, _) in turns {
                let tool = *role == Role::Tool;
                if tool && !prev_tool {
                    n += open;
                }
                if !tool && prev_tool {
                    n += close;
                }
                prev_tool = tool;
            }
            if prev_tool {
                n += close;
            }
            // Assistant turns after the last user query keep their reasoning.
            let last_query = turns.iter().rposition(|(role, _, f)| *role == Role::User && !f.tool_response_user);
            let last = turns.len().saturating_sub(1);
            for (i, (role, c, f)) in turns.iter().enumerate() {
                if *role == Role::Assistant && last_query.is_some_and(|q| i > q) {
                    let alt = if i == last { f.after_query_last } else { f.after_query } as usize;
                    n = (n + alt).saturating_sub(c.total);
                }
            }
            n
        }
        Template::DeepseekV3 | Template::DeepseekR1 => {
            let r1 = template == Template::DeepseekR1;
            // BOS; the generation prompt (or, after tool outputs, their closing token).
            let ends_in_tool = turns
                .iter()
                .rev()
                .find(|t| matches!(t.0, Role::User | Role::Assistant | Role::Tool))
                .is_some_and(|t| t.0 == Role::Tool);
            let mut n = 1 + if ends_in_tool {
                1
            } else if r1 {
                1 + count("<think>\n")
            } else {
                1
            };
            // System messages are joined with a blank line.
            let systems = turns.iter().filter(|t| t.0 == Role::System).count();
            n += systems.saturating_sub(1) * count("\n\n");
            // The first tool call and the first tool output of the conversation.
            if let Some(f) = turns.iter().find(|t| t.2.calls) {
                n = n.saturating_add_signed(f.2.first_call_extra as isize);
            }
            // The first output opens with <｜tool▁outputs▁begin｜>; V3 writes a line break
            // before each later one, R1 does not.
            if turns.iter().any(|t| t.0 == Role::Tool) {
                n += if r1 { 1 } else { 1usize.saturating_sub(count("\n")) };
            }
            n
        }
        Template::Harmony => {
            let system = "You are ChatGPT, a large language model trained by OpenAI.\nKnowledge cutoff: 2024-06\n\nReasoning: medium\n\n# Valid channels: analysis, commentary, final. Channel must be included for every message.";
            3 + count("system") + count(system) + 1 + count("assistant")
        }
    }
}

/// Tokens the tool definitions add (0 without tools). `first` is the conversation's first
/// message when it is a system message (Qwen 3 writes the tools into it).
pub fn tool_definition_tokens(
    template: Template,
    enc: Encoding,
    first_system: Option<&Message>,
    tools: &[ToolDef],
) -> usize {
    if tools.is_empty() {
        return 0;
    }
    let count = |s: &str| tokens::count(enc, s);
    match template {
        Template::Llama31 => {
            let mut block = String::from("\n\nGiven the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.\n\nRespond in the format {\"name\": function name, \"parameters\": dictionary of argument name and its value}.Do not use variables.\n\n");
            for t in tools {
                block.push_str(&tojson(&tool_value(t), Some(4)));
                block.push_str("\n\n");
            }
            let env =
                count("\n\nEnvironment: ipython\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n")
                    .saturating_sub(count("\n\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n"));
            (count(&block) + env).saturating_sub(count("\n\n"))
        }
        Template::Qwen3 => {
            let mut block = String::from("# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>");
            for t in tools {
                block.push('\n');
                block.push_str(&tojson(&tool_value(t), None));
            }
            block.push_str("\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>");
            match first_system {
                Some(s) => {
                    let content = s.content.text();
                    count(&format!("system\n{content}\n\n{block}")).saturating_sub(count(&format!("system\n{content}")))
                }
                None => 1 + count(&format!("system\n{block}")) + 1 + count("\n"),
            }
        }
        // Llama 3.0's and DeepSeek V3 / R1's templates do not render tool definitions.
        Template::Llama3 | Template::DeepseekV3 | Template::DeepseekR1 => 0,
        Template::Harmony => {
            let rendered = super::tools::render_openai_namespace(tools, true);
            count(&format!("# Tools\n\n## functions\n\n{rendered}")) + 3
        }
    }
}
