//! Which bucket tokens land in, request assembly, estimates, and cost of huge binary payloads.

use ctxguard::count::{
    count_message, count_request, count_request_from, count_request_with, tools, CountKind, ImageRule, MessageCount,
    Profile, ToolChoice,
};
use ctxguard::message::{Content, ImageSource, Message, Part, Role, ToolCall, ToolDef, Wire};
use ctxguard::tokens::{bytes_tokenized, count, Encoding};
use serde_json::json;

const O2: Encoding = Encoding::O200kBase;

fn gpt4o() -> Profile {
    Profile::openai(O2, ImageRule::GPT_4O)
}

fn text_part(t: &str) -> Part {
    Part::Text { text: t.into(), extra: Default::default() }
}

fn image_part(url: String, w: Option<u32>, h: Option<u32>, detail: Option<&str>) -> Part {
    Part::Image {
        source: ImageSource::Url(url),
        detail: detail.map(str::to_string),
        width: w,
        height: h,
        extra: Default::default(),
    }
}

fn parts(role: Role, parts: Vec<Part>) -> Message {
    Message { role, content: Content::Parts(parts), ..Default::default() }
}

fn call(name: &str, args: &str) -> ToolCall {
    ToolCall { id: "call_1".into(), name: name.into(), arguments: args.into(), extra: Default::default() }
}

fn assert_sum(c: &MessageCount) {
    assert_eq!(c.total, c.text + c.attachments + c.images + c.tool_calls + c.framing, "{c:?}");
}

#[test]
fn plain_text_message() {
    let m = Message::text(Role::User, "hello world");
    let c = count_message(&gpt4o(), &m);
    assert_eq!(c.text, count(O2, "hello world"));
    assert_eq!(c.framing, 3 + count(O2, "user"));
    assert_eq!((c.attachments, c.images, c.tool_calls), (0, 0, 0));
    assert_sum(&c);
}

#[test]
fn name_is_framing() {
    let mut m = Message::text(Role::User, "hi");
    m.name = Some("example_user".to_string());
    let c = count_message(&gpt4o(), &m);
    assert_eq!(c.framing, 3 + count(O2, "user") + count(O2, "example_user") + 1);
    assert_eq!(c.text, count(O2, "hi"));
    // Tool results do not render a name.
    let mut t = Message::text(Role::Tool, "42");
    t.name = Some("calculator".to_string());
    t.tool_call_id = Some("call_1".into());
    let c = count_message(&gpt4o(), &t);
    assert_eq!(c.framing, 3 + count(O2, "tool"));
    // Legacy `function` results do, and count 2 fewer.
    let mut f = Message::text(Role::Tool, "42");
    f.name = Some("calculator".to_string());
    f.wire = Wire { role: Some("function".to_string()), ..Default::default() };
    let c = count_message(&gpt4o(), &f);
    assert_eq!(c.framing, 3 + count(O2, "function") + count(O2, "calculator") + 1 - 2);
}

#[test]
fn developer_role_counts_its_wire_role() {
    let mut m = Message::text(Role::System, "Be brief.");
    m.wire = Wire { role: Some("developer".to_string()), ..Default::default() };
    let c = count_message(&gpt4o(), &m);
    assert_eq!(c.framing, 3 + count(O2, "developer"));
}

#[test]
fn attachment_blocks_in_text_are_attachments() {
    let block = "<attachment name=\"report.txt\">Quarterly revenue grew 12% while costs fell.</attachment>";
    let text = format!("Please summarize this file.\n{block}\nThanks!");
    let m = Message::text(Role::User, text.clone());
    let c = count_message(&gpt4o(), &m);
    assert_eq!(c.attachments, count(O2, block));
    // The message total stays the exact count of the whole text.
    assert_eq!(c.text + c.attachments, count(O2, &text));
    assert!(c.text > 0);
    assert_sum(&c);

    // Several blocks, also inside a text part.
    let two = format!("a {block} b <attachment>second</attachment> c");
    let m = parts(Role::User, vec![text_part(&two)]);
    let c = count_message(&gpt4o(), &m);
    assert_eq!(c.attachments, count(O2, block) + count(O2, "<attachment>second</attachment>"));
    assert_eq!(c.text + c.attachments, count(O2, &two));
}

#[test]
fn attachment_block_detection() {
    use ctxguard::count::attachment::blocks;
    assert_eq!(blocks("no tags here"), vec![]);
    let s = "x<attachment a=1>y</attachment>z";
    assert_eq!(blocks(s), vec![(1, s.len() - 1)]);
    // Unclosed: stays text.
    assert_eq!(blocks("x<attachment>never closed"), vec![]);
    // Another tag name is not an attachment.
    assert_eq!(blocks("<attachments>x</attachments>"), vec![]);
    assert_eq!(blocks("<attachmentfoo>x</attachment>"), vec![]);
    // A bad opening before a good one.
    let s = "<attachmentX> <attachment\n>ok</attachment>";
    assert_eq!(blocks(s), vec![(14, s.len())]);
    // Multi-byte text around blocks.
    let s = "é<attachment>ü</attachment>ß";
    let b = blocks(s);
    assert_eq!(b.len(), 1);
    assert_eq!(&s[b[0].0..b[0].1], "<attachment>ü</attachment>");
}

#[test]
fn file_parts_are_attachments() {
    let with_text = Part::File {
        name: Some("notes.md".to_string()),
        media_type: Some("text/markdown".to_string()),
        text: Some("# Notes\nBuy milk.".into()),
        extra: Default::default(),
    };
    let without_text = Part::File {
        name: Some("scan.pdf".to_string()),
        media_type: Some("application/pdf".to_string()),
        text: None,
        extra: Default::default(),
    };
    let p = gpt4o();
    let c = count_message(&p, &parts(Role::User, vec![text_part("see files"), with_text]));
    assert_eq!(c.attachments, count(O2, "notes.md") + count(O2, "# Notes\nBuy milk."));
    assert_eq!(c.text, count(O2, "see files"));
    let c = count_message(&p, &parts(Role::User, vec![without_text]));
    assert_eq!(c.attachments, count(O2, "scan.pdf") + p.opaque_file_tokens);
    assert_eq!(c.text, 0);
    assert_sum(&c);
}

#[test]
fn image_parts_are_images() {
    let m = parts(
        Role::User,
        vec![
            text_part("Describe this picture:"),
            image_part("https://example.com/a.png".to_string(), Some(1024), Some(1024), Some("high")),
            image_part("https://example.com/b.png".to_string(), None, None, Some("low")),
        ],
    );
    let c = count_message(&gpt4o(), &m);
    assert_eq!(c.images, 765 + 85);
    assert_eq!(c.text, count(O2, "Describe this picture:"));
    assert_sum(&c);
}

#[test]
fn huge_data_url_costs_the_formula_and_is_never_tokenized() {
    // 5 MB of base64 in a data URL: never tokenized (the tokenizer's byte counter, a debug-build
    // work counter, moves by the few bytes of role names and framing only).
    let mut url = String::with_capacity(5 * 1024 * 1024 + 32);
    url.push_str("data:image/png;base64,");
    while url.len() < 5 * 1024 * 1024 {
        url.push_str("iVBORw0KGgoAAAANSUhEUgAABGYAAAHoCAYAAAALy+n8AAAMPWlDQ1BJQ0MgUHJvZmlsZQAASImVVwdYU8kW");
    }
    let known = parts(Role::User, vec![image_part(url.clone(), Some(1126), Some(488), Some("auto"))]);
    let unknown = parts(Role::User, vec![image_part(url.clone(), None, None, None)]);
    let p = gpt4o();
    if cfg!(debug_assertions) {
        let before = bytes_tokenized();
        count(O2, "some text");
        assert_eq!(bytes_tokenized() - before, 9, "the counter counts what is tokenized");
    }
    let before = bytes_tokenized();
    let c1 = count_message(&p, &known);
    let c2 = count_message(&p, &unknown);
    let r = count_request(&p, &[known.clone(), unknown.clone()], &[]);
    let tokenized = bytes_tokenized() - before;
    assert_eq!(c1.images, 595);
    assert_eq!(c2.images, 1445);
    assert_eq!(c1.total, 3 + count(O2, "user") + 595);
    assert_eq!(r.total, c1.total + c2.total + 3);
    assert!(tokenized < 1000, "{tokenized} bytes tokenized for a {} byte URL", url.len());

    // Same for Anthropic-style base64 sources and estimated profiles.
    let b64 = parts(
        Role::User,
        vec![Part::Image {
            source: ImageSource::Base64 { media_type: "image/png".to_string(), data: url.into() },
            detail: None,
            width: Some(1000),
            height: Some(1000),
            extra: Default::default(),
        }],
    );
    let before = bytes_tokenized();
    let c = count_message(&Profile::anthropic_estimate(1.2), &b64);
    assert_eq!(c.images, 1334);
    assert!(bytes_tokenized() - before < 1000);
}

#[test]
fn tool_calls_bucket() {
    let p = gpt4o();
    let mut m = Message::text(Role::Assistant, "");
    m.tool_calls = vec![call("get_weather", "{\"city\":\"Paris\"}")];
    let c = count_message(&p, &m);
    assert_eq!(c.tool_calls, count(O2, "get_weather") + count(O2, "{\"city\":\"Paris\"}") + 3);
    assert_eq!(c.text, 0);
    assert_sum(&c);

    // Legacy function_call: the same rule (openai-chat-tokens).
    m.wire.legacy_function_call = true;
    assert_eq!(count_message(&p, &m).tool_calls, c.tool_calls);

    // Parallel calls also pay for the multi_tool_use.parallel wrapper.
    let mut par = Message::text(Role::Assistant, "");
    par.tool_calls = vec![call("a", "{}"), call("b", "{\"x\":1}")];
    let c = count_message(&p, &par);
    let base = count(O2, "a") + count(O2, "{}") + 3 + count(O2, "b") + count(O2, "{\"x\":1}") + 3;
    assert!(c.tool_calls > base + 10, "{} vs {base}", c.tool_calls);

    // Tool-call refs in the content are positions only.
    let mut with_ref = Message::text(Role::Assistant, "");
    with_ref.content = Content::Parts(vec![text_part("Let me check."), Part::ToolCallRef { index: 0 }]);
    with_ref.tool_calls = vec![call("get_weather", "{\"city\":\"Paris\"}")];
    let c2 = count_message(&p, &with_ref);
    assert_eq!(c2.text, count(O2, "Let me check."));
    assert_eq!(c2.tool_calls, count(O2, "get_weather") + count(O2, "{\"city\":\"Paris\"}") + 3);
}

#[test]
fn unknown_parts_count_their_json_and_audio_is_estimated() {
    let value = json!({"type": "refusal", "refusal": "no"});
    let m = parts(Role::Assistant, vec![Part::Unknown { value: value.clone() }]);
    let c = count_message(&gpt4o(), &m);
    assert_eq!(c.text, count(O2, &value.to_string()));

    // Audio with a payload: one token per 640 decoded bytes; without: the flat allowance.
    let data = "A".repeat(64_000); // 48 000 bytes
    let mut extra = serde_json::Map::new();
    extra.insert("input_audio".to_string(), json!({"data": data, "format": "mp3"}));
    let c = count_message(&gpt4o(), &parts(Role::User, vec![Part::Audio { extra }]));
    assert_eq!(c.attachments, 75);
    let p = gpt4o();
    let c = count_message(&p, &parts(Role::User, vec![Part::Audio { extra: Default::default() }]));
    assert_eq!(c.attachments, p.opaque_audio_tokens);
}

#[test]
fn request_total_and_cached_assembly() {
    let p = gpt4o();
    let msgs =
        vec![Message::text(Role::System, "You are a bot."), Message::text(Role::User, "What's the weather in Paris?")];
    let tools = vec![ToolDef {
        name: "get_weather".to_string(),
        description: Some("Get the weather".to_string()),
        parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        extra: Default::default(),
    }];
    let r = count_request(&p, &msgs, &tools);
    let sum: usize = r.per_message.iter().map(|m| m.total).sum();
    assert_eq!(r.total, sum + r.tool_definitions + r.priming);
    assert_eq!(r.priming, 3);
    assert_eq!(r.accuracy, CountKind::Exact);
    // Rendered tools + 9, merged into the system message ("You are a bot." + "\n" costs the
    // same here: ".\n" is one token) minus 4.
    let rendered = tools::render_openai_namespace(&tools, true);
    assert_eq!(r.tool_definitions, count(O2, &rendered) + 9 - 4);

    // Assembling from cached per-message counts gives the same result.
    let cached: Vec<MessageCount> = msgs.iter().map(|m| count_message(&p, m)).collect();
    assert_eq!(count_request_from(&p, &msgs, cached, &tools, &ToolChoice::Auto), r);

    // tool_choice.
    let none = count_request_with(&p, &msgs, &tools, &ToolChoice::None);
    assert_eq!(none.total, r.total + 1);
    let named = count_request_with(&p, &msgs, &tools, &ToolChoice::Named("get_weather".to_string()));
    assert_eq!(named.total, r.total + 7 + count(O2, "get_weather"));

    // No tools: no tool tokens whatever the choice.
    let bare = count_request_with(&p, &msgs, &[], &ToolChoice::None);
    assert_eq!(bare.tool_definitions, 0);
    assert_eq!(bare.total, sum + 3);

    // Empty request: the priming only.
    assert_eq!(count_request(&p, &[], &[]).total, 3);
}

#[test]
fn system_padding_uses_the_first_system_message_only() {
    let p = gpt4o();
    let tools = vec![ToolDef {
        name: "f".to_string(),
        description: None,
        parameters: json!({"type": "object", "properties": {}}),
        extra: Default::default(),
    }];
    // "Hello" + "\n" adds a token, "Hello:" + "\n" does not (":\n" is one token).
    let a = count_request(&p, &[Message::text(Role::System, "Hello")], &tools);
    let b = count_request(&p, &[Message::text(Role::System, "Hello:")], &tools);
    let base = count(O2, &tools::render_openai_namespace(&tools, true)) + 9 - 4;
    assert_eq!(a.tool_definitions, base + 1);
    assert_eq!(b.tool_definitions, base);
    // Multi-line system prompt: only the last line matters.
    let long = format!("{}\nFinal line", "Rules.\n".repeat(1000));
    let c = count_request(&p, &[Message::text(Role::System, long)], &tools);
    assert_eq!(c.tool_definitions, base + (count(O2, "Final line\n") - count(O2, "Final line")));
    // Without a system message: no merge.
    let d = count_request(&p, &[Message::text(Role::User, "Hello")], &tools);
    assert_eq!(d.tool_definitions, base + 4);
}

#[test]
fn estimated_profiles_scale_text_not_images() {
    let p = Profile::anthropic_estimate(1.25);
    assert_eq!(p.accuracy, CountKind::Estimate);
    let text = "The quick brown fox jumps over the lazy dog. ".repeat(10);
    let m = parts(
        Role::User,
        vec![text_part(&text), image_part("https://x/y.png".to_string(), Some(1000), Some(1000), None)],
    );
    let c = count_message(&p, &m);
    let raw = count(O2, &text);
    assert_eq!(c.text, (raw as f64 * 1.25).ceil() as usize);
    assert_eq!(c.images, 1334);
    assert_eq!(c.framing, p.framing.per_message);
    assert_sum(&c);

    let mut m = Message::text(Role::Assistant, "");
    m.tool_calls = vec![call("search", "{\"q\":\"rust\"}")];
    let c = count_message(&p, &m);
    let raw = count(O2, "search") + count(O2, "{\"q\":\"rust\"}");
    assert_eq!(c.tool_calls, (raw as f64 * 1.25).ceil() as usize + p.framing.per_tool_call);

    // Tool definitions: JSON x factor + Anthropic's tool-use system prompt (346).
    let tools = vec![ToolDef {
        name: "search".to_string(),
        description: Some("Search the web".to_string()),
        parameters: json!({"type": "object", "properties": {"q": {"type": "string"}}}),
        extra: Default::default(),
    }];
    let r = count_request(&p, &[Message::text(Role::User, "hi")], &tools);
    let raw = count(O2, &tools::tool_json(&tools[0]));
    assert_eq!(r.tool_definitions, (raw as f64 * 1.25).ceil() as usize + 346);
    assert_eq!(r.accuracy, CountKind::Estimate);
    assert_eq!(
        tools::tool_json(&tools[0]),
        "{\"name\":\"search\",\"description\":\"Search the web\",\"input_schema\":{\"type\":\"object\",\"properties\":{\"q\":{\"type\":\"string\"}}}}"
    );

    // A factor of 1 changes nothing; an unusable factor counts as 1.
    let one = Profile::generic_estimate(1.0);
    let bad = Profile::generic_estimate(f64::NAN);
    let m = Message::text(Role::User, text.clone());
    assert_eq!(count_message(&one, &m).text, count(O2, &text));
    assert_eq!(count_message(&bad, &m).text, count(O2, &text));
}

#[test]
fn gemini_and_generic_constructors() {
    let g = Profile::gemini_estimate(1.3);
    let m = parts(Role::User, vec![image_part("https://x/y.png".to_string(), Some(300), Some(300), None)]);
    assert_eq!(count_message(&g, &m).images, 258);
    let o = Profile::generic_estimate(1.3);
    assert_eq!(count_message(&o, &m).images, 120); // 300*300/750
}

#[test]
fn namespace_rendering_shape() {
    let tools = vec![
        ToolDef {
            name: "get_current_weather".to_string(),
            description: Some("Get the current weather".to_string()),
            parameters: json!({
                "type": "object",
                "properties": {
                    "location": {"type": "string", "description": "The city"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                    "opts": {"type": "object", "properties": {"days": {"type": "integer", "description": "How many", "enum": [1, 2]}}},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "any": {"description": "untyped"},
                    "maybe": {"type": ["string", "null"]}
                },
                "required": ["location"]
            }),
            extra: Default::default(),
        },
        ToolDef {
            name: "ping".to_string(),
            description: None,
            parameters: serde_json::Value::Null,
            extra: Default::default(),
        },
    ];
    let expected_current = "namespace functions {\n\n// Get the current weather\ntype get_current_weather = (_: {\n// The city\nlocation: string,\nunit?: \"celsius\" | \"fahrenheit\",\nopts?: {\n  // How many\n  days?: 1 | 2,\n},\ntags?: string[],\n// untyped\nany?: any,\nmaybe?: string | null,\n}) => any;\n\ntype ping = () => any;\n\n} // namespace functions";
    assert_eq!(tools::render_openai_namespace(&tools, true), expected_current);
    let expected_2023 = expected_current.replace("  // How many\n", "");
    assert_eq!(tools::render_openai_namespace(&tools, false), expected_2023);
}

#[test]
fn hostile_tool_schema_depth_is_bounded() {
    // 200 levels of nested objects: rendered down to a bounded depth, no stack blow-up.
    let mut schema = json!({"type": "string"});
    for _ in 0..200 {
        schema = json!({"type": "object", "properties": {"x": schema}});
    }
    let tools =
        vec![ToolDef { name: "deep".to_string(), description: None, parameters: schema, extra: Default::default() }];
    let rendered = tools::render_openai_namespace(&tools, true);
    assert!(rendered.contains("any"));
    assert!(rendered.len() < 100_000);
    let r = count_request(&gpt4o(), &[Message::text(Role::User, "hi")], &tools);
    assert!(r.tool_definitions > 0);
}
