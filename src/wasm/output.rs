//! What the pipeline's exports write back: requests in their wire format, model-visible.

use serde::Serialize;
use serde_json::Value;

use crate::format::{write_request, Format, Request};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Wire {
    pub messages: Vec<Value>,
    pub system: Option<Value>,
}

/// Model-visible messages carry no ctxguard metadata (providers reject unknown fields): no
/// markers, and no ids on the messages ctxguard created.
pub(super) fn stripped(request: Request) -> Request {
    crate::pipeline::model_visible(request)
}

pub(super) fn wire(format: Format, request: &Request) -> Wire {
    let (system, messages) = write_request(format, request);
    Wire { messages, system }
}
