//! What a tool call came to: success, declined or failed.
//!
//! [`CallResult`] is the one enum of the three outcomes; a [`ToolOutcome`]
//! is a `CallResult` with what a success carries (content blocks and
//! `structuredContent`) or what a refusal carries (its machine-readable
//! code). [`OutcomeKind`] is the same three states without their data, for
//! matching.

use serde_json::Value;

use super::content::Content;

/// How a call ended: the three states of a [`ToolOutcome`], as the event
/// hook reports them (with the detail the model never sees).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum CallResult {
    /// The handler succeeded.
    Success,
    /// The handler declined, with the reason it gave the model.
    Declined {
        /// The reason sent to the model.
        reason: String,
    },
    /// The handler failed or panicked; the model got a generic error.
    Failed {
        /// The detail the model did not see.
        detail: String,
    },
}

impl CallResult {
    /// Which of the three states this is.
    pub fn kind(&self) -> OutcomeKind {
        match self {
            CallResult::Success => OutcomeKind::Success,
            CallResult::Declined { .. } => OutcomeKind::Declined,
            CallResult::Failed { .. } => OutcomeKind::Failed,
        }
    }
}

/// The three states of a [`ToolOutcome`] (and of a [`CallResult`]), without
/// their data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutcomeKind {
    /// The tool ran and produced a result.
    Success,
    /// The tool ran and said no; the model reads the reason.
    Declined,
    /// The tool could not run (a fault or a panic); the model gets a generic error.
    Failed,
}

/// What a tool call came to.
///
/// ```
/// use serde_json::json;
/// use toolhost::{OutcomeKind, ToolOutcome};
///
/// let ok = ToolOutcome::json(json!({"sum": 3}));
/// let no = ToolOutcome::declined("over the daily quota").with_code(json!("quota"));
/// let broken = ToolOutcome::failed("database connection lost");
/// assert_eq!(ok.kind(), OutcomeKind::Success);
/// assert_eq!(no.kind(), OutcomeKind::Declined);
/// assert_eq!(broken.kind(), OutcomeKind::Failed);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ToolOutcome {
    pub(crate) result: CallResult,
    /// A success's content blocks; empty otherwise.
    pub(crate) content: Vec<Content>,
    /// A success's `structuredContent`, or a refusal's code.
    pub(crate) structured: Option<Value>,
}

impl ToolOutcome {
    /// Success with one text block.
    pub fn text(text: impl Into<String>) -> ToolOutcome {
        ToolOutcome::content([Content::text(text)])
    }

    /// Success with `structuredContent`, mirrored into a text block for
    /// clients that ignore structured content.
    pub fn json(value: Value) -> ToolOutcome {
        ToolOutcome {
            result: CallResult::Success,
            content: vec![Content::text(value.to_string())],
            structured: Some(value),
        }
    }

    /// Success with the given content blocks.
    pub fn content(content: impl IntoIterator<Item = Content>) -> ToolOutcome {
        ToolOutcome {
            result: CallResult::Success,
            content: content.into_iter().collect(),
            structured: None,
        }
    }

    /// Adds (or replaces) the `structuredContent` of a success; other states
    /// are unchanged.
    #[must_use]
    pub fn with_structured(mut self, value: Value) -> ToolOutcome {
        if self.result == CallResult::Success {
            self.structured = Some(value);
        }
        self
    }

    /// The tool ran and said no. The reason is written for the model, which
    /// sees it as an error result (`isError: true`) and can adapt.
    pub fn declined(reason: impl Into<String>) -> ToolOutcome {
        ToolOutcome {
            result: CallResult::Declined {
                reason: reason.into(),
            },
            content: Vec::new(),
            structured: None,
        }
    }

    /// Attaches a machine-readable code to a declined outcome, sent as
    /// `structuredContent: {"code": …}`; other states are unchanged.
    #[must_use]
    pub fn with_code(mut self, value: Value) -> ToolOutcome {
        if matches!(self.result, CallResult::Declined { .. }) {
            self.structured = Some(value);
        }
        self
    }

    /// The tool could not run. The detail goes to the host's event hook only;
    /// the model is told that the tool failed and nothing more.
    pub fn failed(detail: impl Into<String>) -> ToolOutcome {
        ToolOutcome {
            result: CallResult::Failed {
                detail: detail.into(),
            },
            content: Vec::new(),
            structured: None,
        }
    }

    /// Which of the three states this is.
    pub fn kind(&self) -> OutcomeKind {
        self.result.kind()
    }

    /// How the call ended, as the event hook hears it.
    pub fn result(&self) -> &CallResult {
        &self.result
    }

    /// The `structuredContent` of a success (or the code of a declined
    /// call), if it has one.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolhost::ToolOutcome;
    ///
    /// assert_eq!(ToolOutcome::json(json!({"n": 1})).structured_content(), Some(&json!({"n": 1})));
    /// assert_eq!(ToolOutcome::text("n is 1").structured_content(), None);
    /// ```
    pub fn structured_content(&self) -> Option<&Value> {
        self.structured.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn with_code_only_touches_declined_outcomes_and_with_structured_only_successes() {
        let ok = ToolOutcome::text("x").with_code(json!("c"));
        assert_eq!(ok, ToolOutcome::text("x"));
        let no = ToolOutcome::declined("no").with_structured(json!({"a": 1}));
        assert_eq!(no, ToolOutcome::declined("no"));
        let coded = ToolOutcome::declined("no").with_code(json!("quota"));
        assert_eq!(coded.structured, Some(json!("quota")));
        assert_eq!(coded.kind(), OutcomeKind::Declined);
    }
}
