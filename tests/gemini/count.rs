//! Google models: exact text with `gemma3` in a build that has it (Cargo feature `gemini`), the
//! o200k estimate without; media by Google's published per-media rules, as estimates.

use ctxguard::count::{count_message, count_request, CountKind};
use ctxguard::message::{Content, ImageSource, Message, Part, Role};
use ctxguard::provider::models::{self, FACTOR_GOOGLE};
use ctxguard::tokens::{self, Encoding};
use serde_json::json;

fn parts(parts: Vec<Part>) -> Message {
    Message { content: Content::Parts(parts), ..Message::text(Role::User, "") }
}

fn image(width: u32, height: u32, detail: Option<&str>) -> Part {
    Part::Image {
        source: ImageSource::Other,
        detail: detail.map(str::to_string),
        width: Some(width),
        height: Some(height),
        extra: Default::default(),
    }
}

fn extra(v: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    v.as_object().unwrap().clone()
}

fn media_tokens(model: &str, part: Part) -> (usize, CountKind) {
    let profile = models::profile(&models::info(model));
    let m = parts(vec![part]);
    let c = count_message(&profile, &m);
    let r = count_request(&profile, &[m], &[]);
    (c.images + c.attachments, r.accuracy)
}

#[test]
fn google_media_by_the_published_rules() {
    // Gemini 2.x: 258 up to 384 x 384, else 258 per 768 px tile.
    assert_eq!(media_tokens("gemini-2.5-flash", image(384, 384, None)).0, 258);
    assert_eq!(media_tokens("gemini-2.5-flash", image(385, 100, None)).0, 258);
    assert_eq!(media_tokens("gemini-2.0-flash", image(1600, 800, None)).0, 3 * 2 * 258);
    // Gemini 3: a budget per image by media resolution, whatever the size (high by default).
    assert_eq!(media_tokens("gemini-3-pro-preview", image(100, 100, None)).0, 1120);
    assert_eq!(media_tokens("gemini-3-pro-preview", image(4000, 3000, Some("low"))).0, 280);
    let medium = Part::Image {
        source: ImageSource::Other,
        detail: None,
        width: None,
        height: None,
        extra: extra(json!({"mediaResolution": {"level": "MEDIA_RESOLUTION_MEDIUM"}})),
    };
    assert_eq!(media_tokens("gemini-3-flash-preview", medium).0, 560);
    assert_eq!(media_tokens("gemini-3.1-pro-preview", image(10, 10, Some("MEDIA_RESOLUTION_ULTRA_HIGH"))).0, 2240);
    // Audio 32 tokens/s, video 263 tokens/s when the length is known.
    let audio = Part::Audio { extra: extra(json!({"durationSeconds": 10.5})) };
    assert_eq!(media_tokens("gemini-2.5-pro", audio).0, 336);
    let clip = |meta: serde_json::Value| Part::File {
        name: None,
        media_type: Some("video/mp4".into()),
        text: None,
        extra: extra(json!({ "videoMetadata": meta })),
    };
    assert_eq!(media_tokens("gemini-2.5-pro", clip(json!({"startOffset": "2s", "endOffset": "12s"}))).0, 2630);
    // Unknown lengths: one minute of video, the profile's audio allowance.
    assert_eq!(media_tokens("gemini-2.5-pro", clip(json!({}))).0, 60 * 263);
    let (n, accuracy) = media_tokens("gemini-2.5-pro", Part::Audio { extra: Default::default() });
    assert!(n > 0);
    // The local tokenizer refuses media: a request with any is an estimate.
    assert_eq!(accuracy, CountKind::Estimate);
    // A file with the host's extracted text is counted as text.
    let pdf = Part::File {
        name: Some("a.pdf".into()),
        media_type: Some("application/pdf".into()),
        text: Some("Hello".into()),
        extra: Default::default(),
    };
    let profile = models::profile(&models::info("gemini-2.5-pro"));
    let m = parts(vec![pdf]);
    assert_eq!(
        count_message(&profile, &m).attachments,
        profile.scale(tokens::count(profile.encoding, "a.pdf") + tokens::count(profile.encoding, "Hello"))
    );
}

#[test]
fn gemini_3_1_and_1_5_stay_estimates() {
    for model in ["gemini-3.1-pro-preview", "gemini-3.5-flash", "gemini-1.5-pro", "gemini-exp"] {
        let i = models::info(model);
        assert_eq!(i.kind, CountKind::Estimate, "{model}");
        assert_eq!(i.encoding, Encoding::O200kBase, "{model}");
        assert_eq!(i.estimate_factor, FACTOR_GOOGLE, "{model}");
    }
}

#[cfg(feature = "gemini")]
mod with_vocabulary {
    use super::*;

    #[test]
    fn gemini_models_count_exact_with_gemma3() {
        for model in [
            "gemini-2.5-pro",
            "gemini-2.5-flash",
            "gemini-2.5-flash-lite",
            "gemini-2.0-flash",
            "gemini-2.0-flash-lite-001",
            "gemini-2.5-pro-preview-06-05",
            "gemini-3-pro-preview",
            "gemini-3-flash-preview",
            "models/gemini-2.5-flash",
        ] {
            let i = models::info(model);
            assert_eq!((i.encoding, i.kind, i.estimate_factor), (Encoding::Gemma3, CountKind::Exact, 1.0), "{model}");
            let p = models::profile(&i);
            assert_eq!(p.accuracy, CountKind::Exact, "{model}");
            assert_eq!(p.framing.per_message + p.framing.reply_priming, 0, "{model}: no framing");
        }
        let text = "What is your name?";
        assert_eq!(tokens::count(Encoding::Gemma3, text), 5);
        let profile = models::profile(&models::info("gemini-2.5-pro"));
        let r = count_request(&profile, &[Message::text(Role::User, text)], &[]);
        assert_eq!((r.total, r.accuracy), (5, CountKind::Exact));
    }

    #[test]
    fn an_explicit_gemma3_encoding_is_exact_for_gemini_only() {
        let g = ctxguard::guard::resolve_model(Some("gemini-2.5-pro"), Some(Encoding::Gemma3));
        assert_eq!(g.kind, CountKind::Exact);
        let o = ctxguard::guard::resolve_model(Some("gemini-2.5-pro"), Some(Encoding::O200kBase));
        assert_eq!(o.kind, CountKind::Estimate);
        let c = ctxguard::guard::resolve_model(Some("claude-sonnet-4"), Some(Encoding::Gemma3));
        assert_eq!(c.kind, CountKind::Estimate);
        let gpt = ctxguard::guard::resolve_model(Some("gpt-4o"), Some(Encoding::Gemma3));
        assert_eq!(gpt.kind, CountKind::Estimate);
        assert_eq!(Encoding::from_name("gemma3").unwrap(), Encoding::Gemma3);
    }
}

#[cfg(not(feature = "gemini"))]
mod without_vocabulary {
    use super::*;
    use ctxguard::base::error::ErrorCode;

    #[test]
    fn gemini_models_stay_the_o200k_estimate() {
        for model in ["gemini-2.5-pro", "gemini-3-pro-preview", "gemini-2.0-flash"] {
            let i = models::info(model);
            assert_eq!(
                (i.encoding, i.kind, i.estimate_factor),
                (Encoding::O200kBase, CountKind::Estimate, FACTOR_GOOGLE),
                "{model}"
            );
            assert_eq!(models::profile(&i).accuracy, CountKind::Estimate);
        }
    }

    #[test]
    fn gemma3_is_unknown_in_this_build() {
        assert!(!Encoding::Gemma3.is_available());
        let e = Encoding::from_name("gemma3").unwrap_err();
        assert_eq!(e.code, ErrorCode::UnknownEncoding);
        assert!(e.message.contains("ctxguard/gemini"), "{}", e.message);
        let e = tokens::try_count(Encoding::Gemma3, "hi").unwrap_err();
        assert_eq!(e.code, ErrorCode::UnknownEncoding);
        assert!(tokens::encode(Encoding::Gemma3, "hi").is_err());
    }
}
