//! What an agent reports during a turn (`session/update`) and what it asks
//! (`session/request_permission`), read from ACP v1 messages.
//!
//! Source: the ACP schema, v1 (`schema/v1/schema.json`): `SessionUpdate`
//! is tagged by `sessionUpdate`; `ContentChunk` carries one `ContentBlock`;
//! `ToolCall` has `toolCallId`, `title`, `kind`, `status`, `rawInput`, and
//! `ToolCallUpdate` the same with all but the id optional; `Plan` has
//! `entries` of `PlanEntry` (`content`, `priority`, `status`);
//! `RequestPermissionRequest` has `toolCall` (a `ToolCallUpdate`) and
//! `options` of `PermissionOption` (`optionId`, `name`, `kind`), answered
//! with a `RequestPermissionOutcome`.

use serde_json::{json, Value};

/// One `session/update` of the agent, as a turn's
/// [`on_update`](super::Prompt::on_update) callback sees it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Update {
    /// A piece of the agent's answer (`agent_message_chunk`): its text,
    /// when the block is text, and the `ContentBlock` as sent.
    AgentMessage {
        /// The text of a text block.
        text: Option<String>,
        /// The `ContentBlock`.
        content: Value,
    },
    /// A piece of the agent's reasoning (`agent_thought_chunk`).
    AgentThought {
        /// The text of a text block.
        text: Option<String>,
        /// The `ContentBlock`.
        content: Value,
    },
    /// A tool call was reported or changed (`tool_call`,
    /// `tool_call_update`): the call as known so far. Sent when a call is
    /// new or its title or status changed.
    ToolCall(ToolCallReport),
    /// The agent's plan (`plan`), whole: each update replaces the last.
    Plan(Vec<PlanEntry>),
    /// Any other update (`user_message_chunk`,
    /// `available_commands_update`, `current_mode_update`, …): its
    /// `sessionUpdate` tag and the update as sent.
    Other {
        /// The `sessionUpdate` tag.
        kind: String,
        /// The whole update object.
        update: Value,
    },
}

/// A tool call the agent reported. ACP never says which tool ran or with
/// what arguments in a form a host can trust; what the host served is in
/// [`TurnSummary::calls_served`](super::TurnSummary::calls_served).
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ToolCallReport {
    /// The agent's id of the call (`toolCallId`).
    pub id: String,
    /// The human-readable title, e.g. `myapp: echo`.
    pub title: String,
    /// `ToolKind`: `read`, `edit`, `execute`, `fetch`, `other`, ….
    pub kind: String,
    /// `ToolCallStatus`: `pending`, `in_progress`, `completed` or `failed`.
    pub status: String,
    /// The input the agent reported (`rawInput`), when it did.
    pub raw_input: Option<Value>,
}

impl ToolCallReport {
    /// Whether the agent reported the call as completed.
    pub fn is_completed(&self) -> bool {
        self.status == "completed"
    }

    /// Merges a `ToolCall` or `ToolCallUpdate` into the call; `true` when
    /// the title or status changed (or the call is new).
    pub(super) fn merge(&mut self, update: &Value) -> bool {
        let before = (self.title.clone(), self.status.clone());
        let text = |key: &str| update.get(key).and_then(Value::as_str);
        if let Some(title) = text("title") {
            title.clone_into(&mut self.title);
        }
        if let Some(kind) = text("kind") {
            kind.clone_into(&mut self.kind);
        }
        match text("status") {
            Some(status) => status.clone_into(&mut self.status),
            // A new call without a status is pending, ACP's default.
            None if self.status.is_empty() => "pending".clone_into(&mut self.status),
            None => {}
        }
        if let Some(input) = update.get("rawInput") {
            self.raw_input = Some(input.clone());
        }
        before != (self.title.clone(), self.status.clone())
    }
}

/// One entry of the agent's plan.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PlanEntry {
    /// What the step is.
    pub content: String,
    /// `high`, `medium` or `low`.
    pub priority: String,
    /// `pending`, `in_progress` or `completed`.
    pub status: String,
}

/// The string at `key` of `object`; empty when absent or not a string.
fn text(object: &Value, key: &str) -> String {
    object
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

impl PlanEntry {
    pub(super) fn read(entry: &Value) -> PlanEntry {
        PlanEntry {
            content: text(entry, "content"),
            priority: text(entry, "priority"),
            status: text(entry, "status"),
        }
    }
}

/// The agent asks whether it may run a tool call
/// (`session/request_permission`); a turn's
/// [`on_permission`](super::Prompt::on_permission) policy answers.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct PermissionRequest {
    /// The call in question, as the agent describes it.
    pub tool_call: ToolCallReport,
    /// The choices the agent offers.
    pub options: Vec<PermissionOption>,
}

/// One choice of a [`PermissionRequest`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PermissionOption {
    /// The id to answer with (`optionId`).
    pub id: String,
    /// What the agent shows the user, e.g. `Allow`.
    pub name: String,
    /// `allow_once`, `allow_always`, `reject_once` or `reject_always`.
    pub kind: String,
}

impl PermissionRequest {
    pub(super) fn read(params: &Value) -> PermissionRequest {
        let mut tool_call = ToolCallReport::default();
        if let Some(call) = params.get("toolCall") {
            if let Some(id) = call.get("toolCallId").and_then(Value::as_str) {
                id.clone_into(&mut tool_call.id);
            }
            tool_call.merge(call);
        }
        let options = params
            .get("options")
            .and_then(Value::as_array)
            .map(|options| {
                options
                    .iter()
                    .map(|option| PermissionOption {
                        id: text(option, "optionId"),
                        name: text(option, "name"),
                        kind: text(option, "kind"),
                    })
                    .collect()
            })
            .unwrap_or_default();
        PermissionRequest { tool_call, options }
    }

    /// The first option of the first of `kinds` the agent offers.
    ///
    /// ```
    /// use toolhost::acp::{PermissionChoice, PermissionRequest};
    ///
    /// fn once_only(request: &PermissionRequest) -> PermissionChoice {
    ///     match request.option(&["allow_once"]) {
    ///         Some(option) => PermissionChoice::Select(option.id.clone()),
    ///         None => PermissionChoice::reject(request),
    ///     }
    /// }
    /// # let _ = once_only;
    /// ```
    pub fn option(&self, kinds: &[&str]) -> Option<&PermissionOption> {
        kinds
            .iter()
            .find_map(|kind| self.options.iter().find(|option| option.kind == *kind))
    }
}

/// The answer to a [`PermissionRequest`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PermissionChoice {
    /// The option with this id (`{"outcome": "selected", "optionId"}`).
    Select(String),
    /// No choice (`{"outcome": "cancelled"}`); ACP's answer for a turn
    /// being cancelled.
    Cancel,
}

impl PermissionChoice {
    /// Allows the call once (`allow_once`, else `allow_always`), or
    /// cancels when the agent offers neither.
    pub fn allow(request: &PermissionRequest) -> PermissionChoice {
        Self::pick(request, &["allow_once", "allow_always"])
    }

    /// Rejects the call (`reject_once`, else `reject_always`), or cancels
    /// when the agent offers neither. What a turn answers without a policy.
    pub fn reject(request: &PermissionRequest) -> PermissionChoice {
        Self::pick(request, &["reject_once", "reject_always"])
    }

    fn pick(request: &PermissionRequest, kinds: &[&str]) -> PermissionChoice {
        request
            .option(kinds)
            .map_or(PermissionChoice::Cancel, |option| {
                PermissionChoice::Select(option.id.clone())
            })
    }

    /// The `RequestPermissionResponse` result.
    pub(super) fn to_result(&self) -> Value {
        match self {
            PermissionChoice::Select(id) => {
                json!({"outcome": {"outcome": "selected", "optionId": id}})
            }
            PermissionChoice::Cancel => json!({"outcome": {"outcome": "cancelled"}}),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> PermissionRequest {
        PermissionRequest::read(&json!({
            "sessionId": "s",
            "toolCall": {"toolCallId": "c1", "title": "app: echo", "kind": "other",
                "rawInput": {"text": "x"}},
            "options": [
                {"optionId": "yes-always", "name": "Always", "kind": "allow_always"},
                {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                {"optionId": "no", "name": "Reject", "kind": "reject_once"},
            ],
        }))
    }

    #[test]
    fn a_permission_request_is_read_with_its_call_and_options() {
        let request = request();
        assert_eq!(request.tool_call.id, "c1");
        assert_eq!(request.tool_call.title, "app: echo");
        assert_eq!(request.tool_call.status, "pending");
        assert_eq!(request.tool_call.raw_input, Some(json!({"text": "x"})));
        assert_eq!(request.options.len(), 3);
        assert_eq!(request.options[1].name, "Allow");
    }

    #[test]
    fn allow_prefers_once_and_reject_falls_back_to_cancel() {
        let request = request();
        assert_eq!(
            PermissionChoice::allow(&request),
            PermissionChoice::Select("yes".into())
        );
        assert_eq!(
            PermissionChoice::reject(&request),
            PermissionChoice::Select("no".into())
        );
        let allow_only = PermissionRequest {
            options: request.options[..2].to_vec(),
            ..request
        };
        assert_eq!(
            PermissionChoice::reject(&allow_only),
            PermissionChoice::Cancel
        );
        assert_eq!(
            PermissionChoice::Cancel.to_result(),
            json!({"outcome": {"outcome": "cancelled"}})
        );
        assert_eq!(
            PermissionChoice::Select("yes".into()).to_result(),
            json!({"outcome": {"outcome": "selected", "optionId": "yes"}})
        );
    }

    #[test]
    fn a_tool_call_changes_only_when_its_title_or_status_does() {
        let mut call = ToolCallReport::default();
        assert!(call.merge(&json!({"toolCallId": "1", "title": "t", "kind": "read"})));
        assert_eq!(call.status, "pending");
        assert!(!call.merge(&json!({"toolCallId": "1", "rawInput": {}})));
        assert!(call.merge(&json!({"toolCallId": "1", "status": "in_progress"})));
        assert!(!call.merge(&json!({"toolCallId": "1", "status": "in_progress"})));
        assert!(call.merge(&json!({"toolCallId": "1", "status": "completed"})));
        assert!(call.is_completed());
        assert_eq!(call.kind, "read");
    }
}
