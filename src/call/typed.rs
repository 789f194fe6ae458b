//! Typed tools: a handler that takes its arguments as a Rust type and
//! returns a Rust value.
//!
//! The arguments are decoded before the call is admitted (see
//! [`ArgumentType`]), so a call that does not decode is refused like one
//! that breaks the input schema and the handler never sees it. What the
//! handler returns is turned into an outcome here: a [`Reply`] on
//! success, a [`ToolError`] otherwise.

use serde_core::de::DeserializeOwned;
use serde_core::Serialize;
use serde_json::Value;

use super::context::CallContext;
use super::tool_error::ToolError;
use crate::model::arguments::{decode, refusal_text, ArgumentType};
use crate::model::{Tool, ToolOutcome};

/// What a typed handler returns on success: any [`Serialize`] value, or a
/// [`ToolOutcome`] for full control (content blocks, images, a decline with
/// a code).
///
/// A value that serializes to a JSON object is sent as `structuredContent`
/// (checked against the tool's output schema, if it has one) and mirrored
/// as a text block for clients that ignore structured content, as
/// [`ToolOutcome::json`] does. A string is sent as a text block of its own;
/// any other value (a number, an array, `null` for `()`) as a text block of
/// its JSON. A value that fails to serialize (a map with non-string keys)
/// makes the call *failed*, with serde's message as the detail.
///
/// Implemented for those two kinds only; the trait is sealed.
pub trait Reply: sealed::Sealed {
    /// The outcome this value makes, for the tool `tool`.
    #[doc(hidden)]
    fn into_outcome(self, tool: &str) -> ToolOutcome;
}

mod sealed {
    pub trait Sealed {}
    impl<R: serde_core::Serialize> Sealed for R {}
    impl Sealed for crate::model::ToolOutcome {}
}

impl<R: Serialize> Reply for R {
    fn into_outcome(self, tool: &str) -> ToolOutcome {
        // Spelled once, for untyped handlers too: `From<Value>`.
        match serde_json::to_value(self) {
            Ok(value) => ToolOutcome::from(value),
            Err(err) => ToolOutcome::failed(format!(
                "the result of tool {tool:?} cannot be serialized: {err}"
            )),
        }
    }
}

// `ToolOutcome` is not `Serialize` (and must stay so), which is what keeps
// this from overlapping the blanket implementation above.
impl Reply for ToolOutcome {
    fn into_outcome(self, _tool: &str) -> ToolOutcome {
        self
    }
}

/// The tool, refusing calls whose arguments do not decode into `T`, and
/// the handler that decodes them and runs `handler`.
pub(crate) fn typed_tool<T, R, F>(
    tool: Tool,
    handler: F,
) -> (
    Tool,
    impl Fn(&Value, &CallContext) -> ToolOutcome + Send + Sync + 'static,
)
where
    T: DeserializeOwned + 'static,
    R: Reply,
    F: Fn(T, &CallContext) -> Result<R, ToolError> + Send + Sync + 'static,
{
    let name = tool.name().to_owned();
    let run = move |args: &Value, ctx: &CallContext| match decode::<T>(args) {
        Ok(args) => match handler(args, ctx) {
            Ok(reply) => reply.into_outcome(&name),
            Err(err) => err.into(),
        },
        // The host refused arguments that do not decode before admitting the
        // call; only a `Deserialize` that answers differently twice gets here.
        Err(problem) => ToolOutcome::declined(refusal_text(&name, &problem)),
    };
    (tool.decodes_into(ArgumentType::of::<T>()), run)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::HashMap;

    #[test]
    fn objects_are_structured_strings_are_text_and_the_rest_is_json_text() {
        assert_eq!(
            json!({"sum": 3}).into_outcome("t"),
            ToolOutcome::json(json!({"sum": 3}))
        );
        assert_eq!("hi".into_outcome("t"), ToolOutcome::text("hi"));
        assert_eq!(vec![1, 2].into_outcome("t"), ToolOutcome::text("[1,2]"));
        assert_eq!(().into_outcome("t"), ToolOutcome::text("null"));
        let outcome = ToolOutcome::declined("no");
        assert_eq!(outcome.clone().into_outcome("t"), outcome);
    }

    #[test]
    fn a_value_that_cannot_be_serialized_fails_the_call() {
        let map: HashMap<(u8, u8), u8> = HashMap::from([((1, 2), 3)]);
        let outcome = map.into_outcome("grid");
        assert_eq!(outcome.kind(), crate::model::OutcomeKind::Failed);
        assert!(
            format!("{outcome:?}").contains("the result of tool \\\"grid\\\" cannot be serialized"),
            "{outcome:?}"
        );
    }
}
