//! One trace schema for every protection (docs/design.md, "Observability").

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    ToolOutput,
    /// A clearing step: tool outputs the previous pass kept were cleared or compacted by age.
    ToolOutputClear,
    AttachmentPreview,
    SummaryCompact,
    /// Claude's preserved thinking: blocks dropped because an edit invalidated them.
    ThinkingDrop,
    /// A message of the input that is not sent, or sent without some of its tool calls: a
    /// broken tool pair, a half-streamed empty assistant message (`pipeline::sanitize`).
    MessageDropped,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Applied,
    Noop,
    InProgress,
    Completed,
    Fallback,
}

/// A protection trace. Operation-specific fields are `null` where they do not apply.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Trace {
    pub operation: Operation,
    pub status: Status,
    pub duration_ms: f64,
    pub before_tokens: u32,
    pub after_tokens: u32,
    pub tokens_saved: u32,
    /// tool_output: outputs rewritten.
    pub messages_truncated: Option<u32>,
    /// tool_output: outputs cleared to a stub by age (all of them, not only this call's).
    pub messages_cleared: Option<u32>,
    /// tool_output_clear: tokens of the model input from the first message the step changed to
    /// the end (what a provider's prompt cache can no longer serve).
    pub prefix_invalidated_tokens: Option<u32>,
    /// An edit of what was sent before (tool_output_clear, summary_compact, tool_output in the
    /// emergency pass): what re-billing the invalidated tokens costs over reading them from the
    /// cache, in input-token equivalents (the guard's cache prices; docs/edits.md).
    pub edit_cost: Option<f64>,
    /// thinking_drop: assistant turns whose thinking blocks this call dropped (their prefix
    /// was edited since they were produced).
    pub thinking_dropped: Option<u32>,
    /// tool_output: the emergency (tighter) pass.
    pub emergency: Option<bool>,
    /// attachment_preview: attachment blocks seen and rewritten.
    pub attachment_blocks: Option<u32>,
    pub attachment_blocks_truncated: Option<u32>,
    /// summary_compact.
    pub removed_history_items: Option<u32>,
    /// summary_compact: a summary made ahead of time (started, ready, failed, or used).
    pub ahead: Option<bool>,
    /// summary_compact: the summarizer's attempts (a summary made ahead of time).
    pub attempts: Option<u32>,
    pub failure_reason: Option<String>,
    /// summary_compact: the cache-aware decision when the economic budget triggered it (a
    /// `noop` summary_compact trace says compaction was deferred because continuing is cheaper).
    pub cache_decision: Option<crate::provider::pricing::CacheDecision>,
    /// message_dropped: the message's index in the caller's `messages`.
    pub message_index: Option<u32>,
    /// message_dropped: why (`orphan_tool_result`, `unanswered_tool_call`, `empty_message`,
    /// `broken_bundle`).
    pub reason: Option<String>,
    /// message_dropped: the whole message is left out (`false`: only the calls in `callIds`).
    pub removed: Option<bool>,
    /// message_dropped: the ids of the calls removed, or of the call a removed result answers.
    pub call_ids: Option<Vec<String>>,
}

pub fn u32_of(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Trace {
    pub fn new(operation: Operation, status: Status, duration_ms: f64, before: usize, after: usize) -> Trace {
        Trace {
            operation,
            status,
            duration_ms,
            before_tokens: u32_of(before),
            after_tokens: u32_of(after),
            tokens_saved: u32_of(before.saturating_sub(after)),
            messages_truncated: None,
            messages_cleared: None,
            prefix_invalidated_tokens: None,
            edit_cost: None,
            thinking_dropped: None,
            emergency: None,
            attachment_blocks: None,
            attachment_blocks_truncated: None,
            removed_history_items: None,
            ahead: None,
            attempts: None,
            failure_reason: None,
            cache_decision: None,
            message_index: None,
            reason: None,
            removed: None,
            call_ids: None,
        }
    }
}
