//! A tool's error, [`ToolError`], which lets a handler return `Result`
//! so that `?` works in it.
//!
//! A handler's error is one of two things, and the model must hear them
//! differently. Most errors a tool meets are answers the model can act on
//! (no such note, the file is too large, the date does not parse): those
//! are *declined*, and the model reads the error's message. Some are the
//! application's own trouble (the database is down, a lock is poisoned):
//! those are *failed*, the model gets a generic error and the application
//! the detail, through the event hook or the `log` facade.
//!
//! So any error that implements [`Display`] declines with its message, and
//! [`ToolError::failed`] marks the ones that must not reach the model.
//! [`ToolError`] does not implement `Display` itself, which is what lets
//! every `Display` error convert into it with `?` (the same trick as
//! `anyhow::Error`, which is not a `std::error::Error`).

use std::fmt::Display;

use serde_json::Value;

use crate::model::ToolOutcome;

/// Why a handler stopped early. Of its three kinds, **only a decline shows
/// text to the model**:
///
/// - *declined* — `?` on any error that implements [`Display`]
///   (`io::Error`, `ParseIntError`, `String`, [`AskError`](crate::AskError),
///   …) or [`ToolError::declined`]: the model reads the message, whatever
///   it holds, and can adapt: `let n: u32 = text.parse()?;`
/// - *failed* — [`ToolError::failed`]: the model reads a fixed text that
///   the tool failed, the application the detail (event hook or `log`):
///   `db.query(q).map_err(ToolError::failed)?;`
/// - *cancelled* — [`ToolError::cancelled`], what
///   [`CallContext::check_cancelled`](crate::CallContext::check_cancelled)
///   returns: no result, and nothing written for the model.
///
/// So a bare `?` is a choice to show the message: where it may hold what
/// the model must not see, say `.map_err(ToolError::failed)?`.
///
/// | the handler meets | the model should | return |
/// | --- | --- | --- |
/// | a bad request it can explain (unknown id, over quota, a file too large) | read why and try otherwise | `Err(e)?` / `ToolError::declined(reason)` |
/// | trouble of the application's own (database down, a broken invariant) | hear only that the tool failed | `ToolError::failed(detail)` |
///
/// ```
/// use toolhost::{ToolError, ToolOutcome};
///
/// fn parse_limit(text: &str) -> Result<u32, ToolError> {
///     let limit: u32 = text.parse()?; // declined: "invalid digit found in string"
///     if limit > 50 {
///         return Err(ToolError::declined("limit is at most 50").with_code(serde_json::json!("limit")));
///     }
///     Ok(limit)
/// }
///
/// fn open_database() -> Result<(), ToolError> {
///     let connected: Result<(), std::io::Error> = Err(std::io::ErrorKind::ConnectionRefused.into());
///     connected.map_err(ToolError::failed) // failed: the model never sees the detail
/// }
///
/// assert_eq!(parse_limit("7").ok(), Some(7));
/// let declined = ToolOutcome::from(parse_limit("seven").unwrap_err());
/// assert_eq!(declined, ToolOutcome::declined("invalid digit found in string"));
/// let failed = ToolOutcome::from(open_database().unwrap_err());
/// assert_eq!(failed, ToolOutcome::failed("connection refused"));
/// ```
// Never `Display`: the blanket `From<E: Display>` below would then overlap
// `From<T> for T`, and the two `Result` conversions each other.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolError {
    /// A declined or failed outcome, never a success.
    outcome: ToolOutcome,
}

impl ToolError {
    /// The tool ran and said no; the model reads `reason`.
    pub fn declined(reason: impl Display) -> ToolError {
        ToolError {
            outcome: ToolOutcome::declined(reason.to_string()),
        }
    }

    /// The tool could not run. The model is told only that the tool failed;
    /// `detail` goes to the event hook (or the `log` facade without one).
    /// Takes any `Display`, so `.map_err(ToolError::failed)?` works.
    pub fn failed(detail: impl Display) -> ToolError {
        ToolError {
            outcome: ToolOutcome::failed(detail.to_string()),
        }
    }

    /// The call was cancelled and stops here, as
    /// [`ToolOutcome::cancelled`]: nothing is written for the model. What
    /// [`CallContext::check_cancelled`](crate::CallContext::check_cancelled)
    /// returns once the call is cancelled.
    pub fn cancelled() -> ToolError {
        ToolError {
            outcome: ToolOutcome::cancelled(),
        }
    }

    /// Attaches a machine-readable code to a declined error (see
    /// [`ToolOutcome::with_code`]); a failed one is unchanged.
    #[must_use]
    pub fn with_code(self, code: Value) -> ToolError {
        ToolError {
            outcome: self.outcome.with_code(code),
        }
    }
}

impl<E: Display> From<E> for ToolError {
    /// Declines with the error's message.
    fn from(err: E) -> ToolError {
        ToolError::declined(err)
    }
}

impl From<ToolError> for ToolOutcome {
    fn from(err: ToolError) -> ToolOutcome {
        err.outcome
    }
}

impl<T: Into<ToolOutcome>> From<Result<T, ToolError>> for ToolOutcome {
    /// `Ok` as it converts; `Err` declined or failed, as the error says.
    fn from(result: Result<T, ToolError>) -> ToolOutcome {
        result.map_or_else(ToolOutcome::from, Into::into)
    }
}

impl<T: Into<ToolOutcome>, E: Display> From<Result<T, E>> for ToolOutcome {
    /// `Ok` as it converts; `Err` declined with the error's message.
    fn from(result: Result<T, E>) -> ToolOutcome {
        match result {
            Ok(value) => value.into(),
            Err(err) => ToolOutcome::declined(err.to_string()),
        }
    }
}

impl From<String> for ToolOutcome {
    /// Success with one text block, as [`ToolOutcome::text`].
    fn from(text: String) -> ToolOutcome {
        ToolOutcome::text(text)
    }
}

impl From<Value> for ToolOutcome {
    /// Success, as a typed handler's [`Reply`](crate::Reply) of the same
    /// value: an object as `structuredContent` mirrored into a text block
    /// ([`ToolOutcome::json`]), a string as a text block, anything else as
    /// a text block of its JSON.
    fn from(value: Value) -> ToolOutcome {
        match value {
            object @ Value::Object(_) => ToolOutcome::json(object),
            Value::String(text) => ToolOutcome::text(text),
            other => ToolOutcome::text(other.to_string()),
        }
    }
}

impl From<&str> for ToolOutcome {
    /// Success with one text block, as [`ToolOutcome::text`].
    fn from(text: &str) -> ToolOutcome {
        ToolOutcome::text(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;

    #[test]
    fn any_display_error_declines_with_its_message() {
        let err: ToolError = io::Error::new(io::ErrorKind::NotFound, "no note 7").into();
        assert_eq!(ToolOutcome::from(err), ToolOutcome::declined("no note 7"));
        let outcome: ToolOutcome = Err::<ToolOutcome, _>("too long").into();
        assert_eq!(outcome, ToolOutcome::declined("too long"));
    }

    #[test]
    fn a_failed_tool_error_stays_failed_through_result() {
        let outcome: ToolOutcome = Err::<String, _>(ToolError::failed("db down")).into();
        assert_eq!(outcome, ToolOutcome::failed("db down"));
        let ok: ToolOutcome = Ok::<_, ToolError>("fine").into();
        assert_eq!(ok, ToolOutcome::text("fine"));
    }

    #[test]
    fn a_code_attaches_to_declined_errors_only() {
        let declined = ToolError::declined("quota").with_code(serde_json::json!("q"));
        assert_eq!(
            ToolOutcome::from(declined),
            ToolOutcome::declined("quota").with_code(serde_json::json!("q"))
        );
        let failed = ToolError::failed("x").with_code(serde_json::json!("q"));
        assert_eq!(ToolOutcome::from(failed), ToolOutcome::failed("x"));
    }
}
