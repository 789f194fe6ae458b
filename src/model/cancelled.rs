//! `notifications/cancelled`, the one notification every peer both writes
//! and reads: its params are spelled here once, for the host withdrawing a
//! question, the clients withdrawing a call, and the host, the clients and
//! the relay reading which request a peer gave up.

use serde_json::{json, Value};

/// The params of a `notifications/cancelled` for request `id`, with the
/// reason a person reads.
pub(crate) fn params(id: impl Into<Value>, reason: &str) -> Value {
    json!({"requestId": id.into(), "reason": reason})
}

/// The request a `notifications/cancelled` names, and its reason when it
/// gives one as text; `None` when it names no request.
pub(crate) fn read(params: Option<&Value>) -> Option<(&Value, Option<&str>)> {
    let params = params?;
    let id = params.get("requestId")?;
    Some((id, params.get("reason").and_then(Value::as_str)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_written_reads_back_as_the_same_request_and_reason() {
        let written = params(7, "too late");
        assert_eq!(written, json!({"requestId": 7, "reason": "too late"}));
        assert_eq!(read(Some(&written)), Some((&json!(7), Some("too late"))));
        let named = params("q-1", "gone");
        assert_eq!(read(Some(&named)), Some((&json!("q-1"), Some("gone"))));
    }

    #[test]
    fn a_cancellation_without_a_request_names_nothing_and_a_bad_reason_is_none() {
        assert_eq!(read(None), None);
        assert_eq!(read(Some(&json!({"reason": "why"}))), None);
        let odd = json!({"requestId": 1, "reason": 5});
        assert_eq!(read(Some(&odd)), Some((&json!(1), None)));
    }
}
