//! What a refusal says: every violation listed, the text capped, and long
//! values and keys cut short.

use serde_json::{json, Value};
use toolhost::Schema;

#[test]
fn every_violation_is_listed_and_the_text_is_capped() {
    let schema = Schema::compile(&json!({
        "type": "object",
        "additionalProperties": {"type": "string"},
    }))
    .unwrap();
    let value: serde_json::Map<String, Value> =
        (0..25).map(|i| (format!("k{i:02}"), json!(i))).collect();
    let violations = schema.validate(&Value::Object(value)).unwrap_err();
    assert_eq!(violations.len(), 25);
    assert_eq!(violations.iter().count(), 20);
    let text = violations.to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 21, "{text}");
    assert_eq!(lines[0], "/k00: expected string, got 0");
    assert_eq!(lines[20], "… and 5 more violations");
    let first = violations.iter().next().unwrap();
    assert_eq!(
        (first.path(), first.message()),
        ("/k00", "expected string, got 0")
    );
}

#[test]
fn long_values_and_keys_are_cut_short_in_messages() {
    let schema = Schema::compile(&json!({"additionalProperties": {"maxLength": 3}})).unwrap();
    let key = "k".repeat(200);
    let value = json!({ key: "v".repeat(10_000) });
    let text = schema.validate(&value).unwrap_err().to_string();
    assert!(text.chars().count() < 200, "{text}");
    assert!(
        text.starts_with(&format!(
            "/{}…: expected at most 3 characters, got 10000 (\"vvv",
            "k".repeat(59)
        )),
        "{text}"
    );
    assert!(text.ends_with("…)"), "{text}");
}
