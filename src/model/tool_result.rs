//! A `CallToolResult` as received from another server: what
//! [`crate::client`] returns for `tools/call`, and what a gateway passes on
//! as the agent's [`ToolOutcome`](super::ToolOutcome) by [`From`], without
//! reading it a second time.
//!
//! Reading is lenient where revisions differ (`isError` absent means
//! false, content blocks this crate cannot represent are kept as sent) and
//! strict where a missing field would mislead (a result without a
//! `content` array, an `isError` that is not a boolean).

use serde_json::{Map, Value};

use super::content::Content;

/// The result of `tools/call`, as the server sent it.
///
/// `is_error` is the tool's own verdict — the call reached the tool, which
/// declined or failed, and `content` says why for the model. A call the
/// server could not even start is a
/// [`ClientError`](crate::client::ClientError) instead.
///
/// A gateway answers its agent with it as it came:
/// `ToolOutcome::from(result)` passes on `raw` (see
/// [`ToolOutcome::relayed`](super::ToolOutcome::relayed), which reads it
/// from JSON).
///
/// ```
/// # #[cfg(feature = "client")] {
/// use serde_json::json;
/// use toolhost::{Content, HostConfig, OutcomeKind, StaticSurface, Tool, ToolHost, ToolOutcome};
///
/// let host = ToolHost::bind(HostConfig::default())?;
/// let session = host.open_session(StaticSurface::new().tool(
///     Tool::new("greet", "Greets."),
///     |_, _| ToolOutcome::text("hello"),
/// )?);
/// let result = session.client()?.call_tool("greet", json!({}))?;
/// assert_eq!(result.content, [Content::text("hello")]);
/// assert!(!result.is_error);
/// assert_eq!(ToolOutcome::from(result).kind(), OutcomeKind::Success);
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ToolResult {
    /// The content blocks, in order.
    pub content: Vec<Content>,
    /// The structured result, when the tool returned one (2025-06-18 on).
    pub structured_content: Option<Value>,
    /// Whether the tool reported an error.
    pub is_error: bool,
    /// The result's `_meta`, when present.
    pub meta: Option<Map<String, Value>>,
    /// The whole result as the server sent it, every field and content
    /// block included: what `ToolOutcome::from` passes on.
    pub raw: Value,
}

/// Why a value is not a `CallToolResult`; each reader words it for its
/// own caller.
#[derive(Debug)]
pub(crate) enum Unreadable {
    /// Not a JSON object.
    NotAnObject(Value),
    /// An object without a `content` array.
    NoContent(Map<String, Value>),
    /// An `isError` that is neither a boolean nor `null`.
    IsErrorNotBool(Value),
}

impl ToolResult {
    /// Reads a `CallToolResult`.
    pub(crate) fn from_json(result: Value) -> Result<ToolResult, Unreadable> {
        let Value::Object(fields) = result else {
            return Err(Unreadable::NotAnObject(result));
        };
        // The blocks are copies: `raw` keeps the result whole, to pass on.
        let content: Option<Vec<Content>> = match fields.get("content") {
            Some(Value::Array(blocks)) => {
                Some(blocks.iter().cloned().map(Content::from_json).collect())
            }
            _ => None,
        };
        let Some(content) = content else {
            return Err(Unreadable::NoContent(fields));
        };
        let is_error = match fields.get("isError") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(flag)) => *flag,
            Some(other) => return Err(Unreadable::IsErrorNotBool(other.clone())),
        };
        Ok(ToolResult {
            content,
            structured_content: fields.get("structuredContent").cloned(),
            is_error,
            meta: match fields.get("_meta") {
                Some(Value::Object(meta)) => Some(meta.clone()),
                _ => None,
            },
            raw: Value::Object(fields),
        })
    }

    /// The text of every text block, joined with newlines.
    ///
    /// ```
    /// # #[cfg(feature = "client")] {
    /// use serde_json::json;
    /// use toolhost::{Content, HostConfig, StaticSurface, Tool, ToolHost, ToolOutcome};
    ///
    /// let host = ToolHost::bind(HostConfig::default())?;
    /// let session = host.open_session(StaticSurface::new().tool(
    ///     Tool::new("greet", "Greets."),
    ///     |_, _| ToolOutcome::content([Content::text("hello"), Content::text("there")]),
    /// )?);
    /// let result = session.client()?.call_tool("greet", json!({}))?;
    /// assert_eq!(result.text(), "hello\nthere");
    /// assert!(!result.is_error);
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self.content.iter().filter_map(Content::as_text).collect();
        texts.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_result_is_read_whole_and_keeps_what_it_cannot_represent() {
        let raw = json!({
            "content": [
                {"type": "text", "text": "a"},
                {"type": "hologram", "frames": 3},
                {"type": "text", "text": "b"},
            ],
            "structuredContent": {"n": 1},
            "isError": true,
            "_meta": {"k": "v"},
            "extra": 1,
        });
        let result = ToolResult::from_json(raw.clone()).unwrap();
        assert_eq!(result.content[0], Content::text("a"));
        assert_eq!(
            result.content[1].as_unknown(),
            Some(&json!({"type": "hologram", "frames": 3}))
        );
        assert_eq!(result.text(), "a\nb");
        assert_eq!(result.structured_content, Some(json!({"n": 1})));
        assert!(result.is_error);
        assert_eq!(result.meta.as_ref().map(|m| &m["k"]), Some(&json!("v")));
        assert_eq!(result.raw, raw);
        let minimal = ToolResult::from_json(json!({"content": [], "isError": null})).unwrap();
        assert!(
            !minimal.is_error && minimal.structured_content.is_none() && minimal.meta.is_none()
        );
    }

    #[test]
    fn a_value_that_is_no_call_result_says_what_it_lacks() {
        assert!(matches!(
            ToolResult::from_json(json!([])),
            Err(Unreadable::NotAnObject(_))
        ));
        assert!(matches!(
            ToolResult::from_json(json!({"isError": false})),
            Err(Unreadable::NoContent(_))
        ));
        assert!(matches!(
            ToolResult::from_json(json!({"content": [], "isError": "no"})),
            Err(Unreadable::IsErrorNotBool(_))
        ));
    }
}
