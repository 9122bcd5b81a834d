//! `list_attachments` lists what the source guards find: every attachment the previews name (by
//! the id in their footer) is listed in the raw request with its whole text, and in the
//! model-visible request with the offset the footer points at; positions are the caller's.

use crate::support::{base64_of, doc};
use ctxguard::format::{parse_request, write_request, Format};
use ctxguard::guard::{Guard, GuardConfig};
use ctxguard::sources::listed::{list_attachments, Form, Listed};
use ctxguard::sources::reader;
use ctxguard::tokens::{bytes_tokenized, Encoding};
use serde_json::{json, Value};

const ENC: Encoding = Encoding::O200kBase;

fn block(name: &str, body: &str) -> String {
    format!("Read this <attachment name=\"{name}\" type=\"text/markdown\">{body}</attachment> please")
}

/// A request in `format` with an attachment block and a file (each ~2,000 tokens) and a small
/// block, as `(messages, system)`.
fn request(format: Format) -> (Value, Option<Value>) {
    let (spec, notes, small) = (doc(2_000, "spec"), doc(2_000, "note"), "tiny notes");
    match format {
        Format::Openai => (
            json!([
                {"role": "system", "content": block("small.md", small)},
                {"role": "user", "content": block("spec.md", &spec)},
                {"role": "user", "content": [{"type": "text", "text": "and"}, {"type": "file", "file": {"filename": "notes.txt", "file_id": "file-1"}, "text": notes}]}
            ]),
            None,
        ),
        Format::Anthropic => (
            json!([
                {"role": "user", "content": block("spec.md", &spec)},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "tu", "name": "cat", "input": {}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "tu", "content": block("small.md", small)},
                    {"type": "text", "text": "and"},
                    {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": notes}, "title": "notes.txt"}
                ]}
            ]),
            Some(json!("Be brief.")),
        ),
        Format::AiSdk => (
            json!([
                {"role": "user", "content": block("spec.md", &spec)},
                {"role": "user", "content": [{"type": "text", "text": "and"}, {"type": "file", "data": base64_of(&notes), "mediaType": "text/plain", "filename": "notes.txt"}]}
            ]),
            Some(json!(block("small.md", small))),
        ),
        Format::AiSdkUi => (
            json!([
                {"id": "u1", "role": "user", "parts": [{"type": "text", "text": block("spec.md", &spec)}]},
                {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "and"}, {"type": "file", "mediaType": "text/plain", "filename": "notes.txt", "url": format!("data:text/plain;base64,{}", base64_of(&notes))}]}
            ]),
            Some(json!(block("small.md", small))),
        ),
        Format::OpenaiResponses => (
            json!([
                {"role": "user", "content": block("spec.md", &spec)},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "and"}, {"type": "input_file", "filename": "notes.txt", "file_data": format!("data:text/plain;base64,{}", base64_of(&notes))}]}
            ]),
            Some(json!(block("small.md", small))),
        ),
        Format::Gemini => (
            json!([
                {"role": "user", "parts": [{"text": block("spec.md", &spec)}]},
                {"role": "user", "parts": [{"text": "and"}, {"inlineData": {"mimeType": "text/plain", "data": base64_of(&notes), "displayName": "notes.txt"}}]}
            ]),
            Some(json!({"parts": [{"text": block("small.md", small)}]})),
        ),
    }
}

const FORMATS: [Format; 6] =
    [Format::Openai, Format::Anthropic, Format::AiSdk, Format::AiSdkUi, Format::OpenaiResponses, Format::Gemini];

/// The model-visible `(messages, system)` after the source guards, with a small attachment budget.
fn guarded(format: Format, messages: &Value, system: Option<&Value>) -> (Value, Option<Value>) {
    let cfg: GuardConfig = serde_json::from_value(json!({"model": "gpt-4o", "attachmentBudget": 600})).unwrap();
    let mut g = Guard::new(&cfg).unwrap();
    let req = parse_request(format, messages, system, None).unwrap();
    let out = g.guard_sources(&req, false, &|| 0.0);
    let (sys, msgs) = write_request(format, &out.request);
    // OpenAI writes no system: the option's stays as it was.
    (Value::Array(msgs), if format == Format::Openai { system.cloned() } else { sys })
}

#[test]
fn every_preview_names_a_listed_attachment_with_its_whole_text() {
    for format in FORMATS {
        let (messages, system) = request(format);
        let raw = list_attachments(ENC, format, &messages, system.as_ref()).unwrap();
        assert_eq!(raw.len(), 3, "{format:?}: {raw:#?}");
        assert!(raw.iter().all(|a| a.offset.is_none()), "{format:?}: nothing is a preview yet");
        let (vmessages, vsystem) = guarded(format, &messages, system.as_ref());
        let visible = list_attachments(ENC, format, &vmessages, vsystem.as_ref()).unwrap();
        assert_eq!(visible.len(), 3, "{format:?}");
        let previews: Vec<&Listed> = visible.iter().filter(|a| a.offset.is_some()).collect();
        assert_eq!(previews.len(), 2, "{format:?}: the two large ones are previewed: {visible:#?}");
        for p in previews {
            let whole =
                raw.iter().find(|a| a.id == p.id).unwrap_or_else(|| panic!("{format:?}: {} is not listed", p.id));
            assert_eq!((whole.message, whole.part, whole.form), (p.message, p.part, p.form), "{format:?}: same place");
            let head = p.text.split("[ctxguard:attachment-preview]").next().unwrap().trim_end();
            assert!(whole.text.starts_with(head), "{format:?}: the preview is the head of the listed text");
            // The reader serves the rest from the footer's offset, on the listed text.
            let page = reader::read(ENC, &p.id, &whole.text, p.offset.unwrap(), None).unwrap();
            assert!(whole.text.ends_with(&page.text) || page.next_offset.is_some(), "{format:?}");
            assert_eq!(page.total_tokens as usize, whole.tokens);
        }
        let small = visible.iter().find(|a| a.name.as_deref() == Some("small.md")).unwrap();
        assert_eq!((small.text.as_str(), small.offset), ("tiny notes", None), "{format:?}: sent whole");
    }
}

#[test]
fn places_are_the_callers_indices() {
    let place = |a: &Listed| (a.name.clone().unwrap(), a.message, a.part, a.form);
    let (m, s) = request(Format::Anthropic);
    let list: Vec<_> = list_attachments(ENC, Format::Anthropic, &m, s.as_ref()).unwrap().iter().map(place).collect();
    assert_eq!(
        list,
        [
            ("spec.md".into(), Some(0), None, Form::AttachmentBlock),
            ("small.md".into(), Some(2), Some(0), Form::AttachmentBlock),
            ("notes.txt".into(), Some(2), Some(2), Form::DocumentBlock),
        ]
    );
    for format in [Format::AiSdk, Format::AiSdkUi, Format::OpenaiResponses, Format::Gemini] {
        let (m, s) = request(format);
        let list: Vec<_> = list_attachments(ENC, format, &m, s.as_ref()).unwrap().iter().map(place).collect();
        let text_part = if matches!(format, Format::Gemini | Format::AiSdkUi) { Some(0) } else { None };
        assert_eq!(
            list,
            [
                // The system option is a string, but for Gemini (a Content).
                (
                    "small.md".into(),
                    None,
                    if format == Format::Gemini { text_part } else { None },
                    Form::AttachmentBlock
                ),
                ("spec.md".into(), Some(0), text_part, Form::AttachmentBlock),
                ("notes.txt".into(), Some(1), Some(1), Form::FilePart),
            ],
            "{format:?}"
        );
    }
    let (m, _) = request(Format::Openai);
    let list = list_attachments(ENC, Format::Openai, &m, None).unwrap();
    assert_eq!(list[2].id, "file-1", "the host's id");
    assert_eq!(list[0].message, Some(0));
}

#[test]
fn ids_follow_the_content_rule_of_the_previews() {
    let m = json!([{"role": "user", "content": "<attachment>abc</attachment><attachment id=\"own\">abc</attachment>"}]);
    let list = list_attachments(ENC, Format::Openai, &m, None).unwrap();
    assert_eq!(list[0].id, ctxguard::sources::attachment::content_id("abc"));
    assert_eq!(list[0].id, "att_a2190541574b", "FNV-1a 64 of the UTF-8 text, low 48 bits");
    assert_eq!(list[1].id, "own");
    assert_eq!((list[0].tokens, list[0].chars), (1, 3));
}

#[test]
fn the_fixtures_attachments() {
    use crate::support::fixtures::*;
    let names = |format: Format, v: Value| -> Vec<(String, Option<String>, Option<String>)> {
        let (messages, system) = match &v {
            Value::Object(o) => (o["messages"].clone(), o.get("system").cloned()),
            _ => (v.clone(), None),
        };
        list_attachments(ENC, format, &messages, system.as_ref())
            .unwrap()
            .into_iter()
            .map(|a| (a.text, a.name, a.media_type))
            .collect()
    };
    let s = |x: &str| Some(x.to_string());
    assert_eq!(
        names(Format::Openai, openai_fixture()),
        [("A".into(), s("a.pdf"), s("application/pdf")), ("B".into(), None, None)]
    );
    assert_eq!(
        names(Format::Anthropic, anthropic_fixture()),
        [
            ("Hallo".into(), s("t.txt"), s("text/plain")),
            ("pdf text".into(), None, s("application/pdf")),
            ("c".into(), None, None)
        ]
    );
    assert_eq!(names(Format::AiSdk, ai_sdk_fixture()), [("Hallo".into(), s("a.txt"), s("text/plain"))]);
    assert_eq!(names(Format::OpenaiResponses, responses_fixture()), [("Hallo".into(), s("a.txt"), s("text/plain"))]);
    assert_eq!(names(Format::Gemini, gemini_fixture()), [("Hallo".into(), s("t.txt"), s("text/plain"))]);
}

#[test]
fn bad_input_is_an_error() {
    let e = list_attachments(ENC, Format::Openai, &json!("hi"), None).unwrap_err();
    assert_eq!(e.code.as_str(), "INVALID_MESSAGES");
    let e = list_attachments(ENC, Format::Anthropic, &json!([{"role": "user", "content": 3}]), None).unwrap_err();
    assert_eq!((e.code.as_str(), e.index), ("INVALID_MESSAGE", Some(0)));
    assert!(list_attachments(ENC, Format::OpenaiResponses, &json!([]), Some(&json!(3))).is_err());
}

#[test]
fn two_thousand_messages_tokenize_only_the_attachments() {
    let mut messages = Vec::new();
    let mut bytes = 0;
    for i in 0..2_000 {
        if i % 50 == 0 {
            let body = doc(200, "a");
            bytes += body.len();
            messages
                .push(json!({"role": "user", "content": format!("<attachment name=\"f{i}.md\">{body}</attachment>")}));
        } else {
            messages.push(json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": doc(100, "m")}));
        }
    }
    let before = bytes_tokenized();
    let list = list_attachments(ENC, Format::Openai, &Value::Array(messages), None).unwrap();
    let work = bytes_tokenized() - before;
    assert_eq!(list.len(), 40);
    // Debug builds count the bytes handed to the tokenizer: each attachment's text once, no
    // message text (release builds count nothing).
    if cfg!(debug_assertions) {
        assert_eq!(work, bytes as u64);
    }
}
