//! Reading a call's arguments into a Rust type, with an error that names
//! the place, as a schema violation does.
//!
//! serde_json's errors from a [`Value`] carry no position (`invalid type:
//! string "x", expected f64`), which leaves a model guessing which field
//! it got wrong. So when decoding fails, the arguments are written out
//! again with one member per line, decoded from that text, and the line
//! serde_json reports is mapped back to the JSON pointer of the member on
//! it (`/limit: invalid type: string "x", expected u32`). A missing field is
//! reported at the closing brace of its object, which is the object's own
//! line. The second reading costs nothing on the happy path: only
//! arguments that fail to decode are laid out and read again.

use std::any::TypeId;
use std::fmt::{self, Write};

use serde_core::de::DeserializeOwned;
use serde_json::Value;

/// The longest decoding message shown to the model; serde's messages quote
/// the offending value, which may be long.
const MAX_MESSAGE_CHARS: usize = 300;

/// The text of a call refused for its arguments: a header naming the tool,
/// then one line per problem.
pub(crate) fn refusal_text(tool: &str, problems: &str) -> String {
    format!("Invalid arguments for tool {tool:?}:\n{problems}")
}

/// Decodes `args` into `T`; `Err` is one line, `<JSON pointer>: <what serde
/// said>`, for the model.
pub(crate) fn decode<T: DeserializeOwned>(args: &Value) -> Result<T, String> {
    T::deserialize(args).map_err(|err| locate::<T>(args, &err))
}

/// Where in `args` decoding into `T` fails, and why.
fn locate<T: DeserializeOwned>(args: &Value, original: &serde_json::Error) -> String {
    let mut text = String::new();
    // The pointer of each line of `text`; line 1 is the value itself.
    let mut pointers = vec![String::new()];
    lay_out(args, "", &mut text, &mut pointers);
    let (line, message) = match serde_json::from_str::<T>(&text) {
        Err(err) => {
            let position = format!(" at line {} column {}", err.line(), err.column());
            let full = err.to_string();
            let message = full.strip_suffix(&position).unwrap_or(&full).to_owned();
            (err.line(), message)
        }
        // Decoding from text succeeded where decoding the value did not (a
        // `Deserialize` that tells the two apart): no place to name.
        Ok(_) => (0, original.to_string()),
    };
    let pointer = line
        .checked_sub(1)
        .and_then(|index| pointers.get(index))
        .filter(|pointer| !pointer.is_empty())
        .map_or("/", String::as_str);
    format!("{pointer}: {}", cut(&message))
}

/// Writes `value` as JSON with every object member and array item on a line
/// of its own, recording the JSON pointer of each new line.
fn lay_out(value: &Value, pointer: &str, text: &mut String, pointers: &mut Vec<String>) {
    fn open(text: &mut String, pointers: &mut Vec<String>, child: String) {
        text.push('\n');
        pointers.push(child);
    }
    match value {
        Value::Object(map) if !map.is_empty() => {
            text.push('{');
            for (n, (key, item)) in map.iter().enumerate() {
                if n > 0 {
                    text.push(',');
                }
                let child = format!("{pointer}/{}", escape(key));
                open(text, pointers, child.clone());
                let _ = write!(text, "{}:", Value::from(key.as_str()));
                lay_out(item, &child, text, pointers);
            }
            open(text, pointers, pointer.to_owned());
            text.push('}');
        }
        Value::Array(items) if !items.is_empty() => {
            text.push('[');
            for (n, item) in items.iter().enumerate() {
                if n > 0 {
                    text.push(',');
                }
                let child = format!("{pointer}/{n}");
                open(text, pointers, child.clone());
                lay_out(item, &child, text, pointers);
            }
            open(text, pointers, pointer.to_owned());
            text.push(']');
        }
        scalar => {
            let _ = write!(text, "{scalar}");
        }
    }
}

/// One JSON pointer token, escaped (RFC 6901).
fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

fn cut(message: &str) -> String {
    if message.chars().count() <= MAX_MESSAGE_CHARS {
        return message.to_owned();
    }
    let mut short: String = message.chars().take(MAX_MESSAGE_CHARS - 1).collect();
    short.push('…');
    short
}

/// The Rust type a tool's arguments must decode into, checked with the
/// input schema before a call is admitted, so that a call the handler
/// could not decode is refused like one that breaks the schema.
#[derive(Clone, Copy)]
pub(crate) struct ArgumentType {
    id: TypeId,
    name: &'static str,
    check: fn(&Value) -> Result<(), String>,
}

impl ArgumentType {
    pub(crate) fn of<T: DeserializeOwned + 'static>() -> ArgumentType {
        ArgumentType {
            id: TypeId::of::<T>(),
            name: std::any::type_name::<T>(),
            check: |args| decode::<T>(args).map(drop),
        }
    }

    /// Whether `args` decode into the type; `Err` as [`decode`] words it.
    pub(crate) fn check(&self, args: &Value) -> Result<(), String> {
        (self.check)(args)
    }
}

impl PartialEq for ArgumentType {
    fn eq(&self, other: &ArgumentType) -> bool {
        self.id == other.id
    }
}

impl fmt::Debug for ArgumentType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use std::collections::BTreeMap;

    /// Arguments as std's types decode them: serde's derive is no
    /// dependency of this package (the derived messages, such as a missing
    /// field, are checked through a typed tool in tests/tests/typed.rs).
    type Limits = BTreeMap<String, u8>;
    type Tags = BTreeMap<String, Vec<String>>;

    #[test]
    fn a_decoding_error_names_the_member_it_happened_at() {
        assert_eq!(
            decode::<Limits>(&json!({"limit": "x"})).unwrap_err(),
            "/limit: invalid type: string \"x\", expected u8"
        );
        assert_eq!(
            decode::<Limits>(&json!({"limit": 1, "most": 300})).unwrap_err(),
            "/most: invalid value: integer `300`, expected u8"
        );
        assert_eq!(
            decode::<Tags>(&json!({"tags": ["a", 5]})).unwrap_err(),
            "/tags/1: invalid type: integer `5`, expected a string"
        );
        assert_eq!(
            decode::<Vec<u8>>(&json!({"tags": []})).unwrap_err(),
            "/: invalid type: map, expected a sequence"
        );
        assert_eq!(
            decode::<Limits>(&json!({"limit": 1, "a/b~": "x"})).unwrap_err(),
            "/a~1b~0: invalid type: string \"x\", expected u8"
        );
        assert_eq!(
            decode::<Tags>(&json!({"tags": ["a"]})).unwrap()["tags"],
            ["a"]
        );
    }

    #[test]
    fn a_long_value_is_cut_in_the_message() {
        let args = json!({"limit": "x".repeat(10_000)});
        let message = decode::<Limits>(&args).unwrap_err();
        assert!(
            message.chars().count() < MAX_MESSAGE_CHARS + 10,
            "{message}"
        );
        assert!(message.starts_with("/limit: invalid type: string \"xxx"));
        assert!(message.ends_with('…'));
    }

    #[test]
    fn argument_types_are_equal_by_type() {
        assert_eq!(ArgumentType::of::<Tags>(), ArgumentType::of::<Tags>());
        assert_ne!(ArgumentType::of::<Tags>(), ArgumentType::of::<Value>());
        assert!(ArgumentType::of::<Vec<u8>>().check(&json!({})).is_err());
        assert!(ArgumentType::of::<Tags>().check(&json!({})).is_ok());
    }
}
