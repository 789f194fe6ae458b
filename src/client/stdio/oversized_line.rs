//! What an oversized line, one too long to read, says of itself. The reader
//! skips such a line and keeps only its two ends (512 bytes each); a
//! JSON-RPC message puts what it is and whom it answers at one end or the
//! other: SDKs write `{"jsonrpc", "id", "result"…}` (Python, Rust) or
//! `{"result"…, "jsonrpc", "id"}` (TypeScript), and a request or
//! notification names its `method` before its `params`. So the ends tell,
//! most of the time, which waiting request a skipped answer was for: that
//! request alone fails, and the others in flight go on.
//!
//! Only members of the top-level object count: the head is scanned as JSON
//! (strings, escapes and nesting followed) until it is cut; the tail is
//! read backwards only as far as a last member `"id": <value>` right before
//! the closing brace, which no string or nested object can imitate.

use serde_json::Value;

/// What the ends of a skipped line say.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Skipped {
    /// A response to the request of this id.
    Answer(u64),
    /// A request or notification of the server, or a response to an id
    /// this client never uses (its ids are numbers): no request of the
    /// client waits for it.
    NotOurs,
    /// The ends do not say.
    Unknown,
}

/// Reads the ends of a skipped line.
pub(super) fn read_ends(head: &[u8], tail: &[u8]) -> Skipped {
    let Head { id, method } = scan_head(head);
    if method {
        return Skipped::NotOurs;
    }
    match id.or_else(|| id_at_end(tail)) {
        Some(Value::Number(number)) => number.as_u64().map_or(Skipped::NotOurs, Skipped::Answer),
        Some(_) => Skipped::NotOurs,
        None => Skipped::Unknown,
    }
}

/// What the head showed of the top-level object.
#[derive(Default)]
struct Head {
    /// The `id` member, when it came whole.
    id: Option<Value>,
    /// A `method` member came: a request or a notification.
    method: bool,
}

fn scan_head(head: &[u8]) -> Head {
    let mut seen = Head::default();
    let mut at = skip_space(head, 0);
    if head.get(at) != Some(&b'{') {
        return seen;
    }
    at += 1;
    let mut depth = 1_usize;
    while let Some(&byte) = head.get(at) {
        match byte {
            b'"' => {
                let Some(end) = string_end(head, at) else {
                    return seen;
                };
                let key = &head[at + 1..end];
                at = skip_space(head, end + 1);
                // At the top level, a string followed by a colon is a key.
                if depth == 1 && head.get(at) == Some(&b':') {
                    let value = skip_space(head, at + 1);
                    match key {
                        b"method" => seen.method = true,
                        b"id" => seen.id = scalar(&head[value..]),
                        // A response: nothing more to learn.
                        b"result" | b"error" => return seen,
                        _ => {}
                    }
                }
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return seen;
                }
            }
            _ => {}
        }
        at += 1;
    }
    seen
}

/// The value of a last member `"id": <number or string>` just before the
/// closing brace of `tail`.
fn id_at_end(tail: &[u8]) -> Option<Value> {
    let rest = tail.trim_ascii_end().strip_suffix(b"}")?.trim_ascii_end();
    let start = if rest.ends_with(b"\"") {
        // A string without escapes: its opening quote is the one before.
        let open = rest[..rest.len() - 1].iter().rposition(|&b| b == b'"')?;
        if rest[open..].contains(&b'\\') {
            return None;
        }
        open
    } else {
        rest.iter()
            .rposition(|b| !b.is_ascii_digit())
            .map_or(0, |at| at + 1)
    };
    let value: Value = serde_json::from_slice(&rest[start..]).ok()?;
    let before = rest[..start]
        .trim_ascii_end()
        .strip_suffix(b":")?
        .trim_ascii_end()
        .strip_suffix(b"\"id\"")?
        .trim_ascii_end();
    matches!(before.last(), Some(b',' | b'{')).then_some(value)
}

/// A number or string at the start of `bytes`, when it is whole there
/// (followed by a delimiter, not cut off by the end of the head).
fn scalar(bytes: &[u8]) -> Option<Value> {
    let end = match bytes.first()? {
        b'"' => string_end(bytes, 0)? + 1,
        b'n' if bytes.starts_with(b"null") => 4,
        b'0'..=b'9' | b'-' => bytes
            .iter()
            .position(|b| matches!(b, b',' | b'}') || b.is_ascii_whitespace())?,
        _ => return None,
    };
    serde_json::from_slice(&bytes[..end]).ok()
}

/// The index of the quote that closes the string opening at `open`.
fn string_end(bytes: &[u8], open: usize) -> Option<usize> {
    let mut at = open + 1;
    while let Some(&byte) = bytes.get(at) {
        match byte {
            b'\\' => at += 2,
            b'"' => return Some(at),
            _ => at += 1,
        }
    }
    None
}

fn skip_space(bytes: &[u8], from: usize) -> usize {
    from + bytes[from.min(bytes.len())..]
        .iter()
        .take_while(|b| b.is_ascii_whitespace())
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ends(start: &str, end: &str) -> Skipped {
        read_ends(start.as_bytes(), end.as_bytes())
    }

    #[test]
    fn an_id_at_either_end_names_the_answered_request() {
        // Python and Rust SDKs: the id first.
        assert_eq!(
            ends(
                r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"xxx"#,
                r#"xxx"}]}}"#
            ),
            Skipped::Answer(7)
        );
        // TypeScript SDK: the id last.
        assert_eq!(
            ends(
                r#"{"result":{"content":[{"type":"text","text":"xxx"#,
                r#"xxx"}]},"jsonrpc":"2.0","id":12}"#
            ),
            Skipped::Answer(12)
        );
        assert_eq!(
            ends(r#"{ "result" : {"x":"#, "xx\" } , \"id\" : 3 }\n"),
            Skipped::Answer(3)
        );
        // An error answer too.
        assert_eq!(
            ends(r#"{"id":4,"error":{"code":1,"message":"xx"#, "xx\"}}"),
            Skipped::Answer(4)
        );
    }

    #[test]
    fn an_id_inside_the_payload_or_a_string_is_not_taken_for_the_answers() {
        // Nested ids, and one quoted in a string, at either end.
        assert_eq!(
            ends(
                r#"{"result":{"id":5,"text":"\"id\":6,"#,
                r#"xx","inner":{"id":8}}}"#
            ),
            Skipped::Unknown
        );
        assert_eq!(
            ends(r#"{"result":"#, r#"xx\",\"id\":9}"}"#),
            Skipped::Unknown
        );
        assert_eq!(ends(r#"{"result":"#, r#"xx "x\"id":9}"#), Skipped::Unknown);
        // A head cut inside the id's number says nothing.
        assert_eq!(ends(r#"{"jsonrpc":"2.0","id":12"#, "xx"), Skipped::Unknown);
        // Nothing JSON-like at all.
        assert_eq!(ends("garbage", "more garbage"), Skipped::Unknown);
    }

    #[test]
    fn a_request_or_notification_or_a_foreign_id_is_no_ones_answer() {
        assert_eq!(
            ends(
                r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"xx"#,
                "xx\"}}"
            ),
            Skipped::NotOurs
        );
        // A request of the server whose numeric id could be one of ours.
        assert_eq!(
            ends(
                r#"{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{"x":"#,
                "x\"}}"
            ),
            Skipped::NotOurs
        );
        assert_eq!(ends(r#"{"id":"abc","result":"#, "x\"}"), Skipped::NotOurs);
        assert_eq!(ends(r#"{"result":"#, r#"x","id":"abc"}"#), Skipped::NotOurs);
        assert_eq!(ends(r#"{"id":null,"error":"#, "x\"}}"), Skipped::NotOurs);
        assert_eq!(ends(r#"{"id":-1,"result":"#, "x\"}"), Skipped::NotOurs);
    }
}
