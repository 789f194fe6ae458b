//! `type`, `enum` and `const`, and the keywords of numbers and strings.

use serde_json::{json, Value};

use crate::table;

#[test]
fn type_tells_integers_from_numbers_and_accepts_a_list_of_types() {
    table(
        json!({"type": "integer"}),
        &[json!(0), json!(-3), json!(u64::MAX)],
        &[
            (json!(1.5), "/: expected integer, got 1.5"),
            (json!(5.0), "/: expected integer, got 5.0"),
            (json!("5"), "/: expected integer, got \"5\""),
        ],
    );
    table(
        json!({"type": "number"}),
        &[json!(1), json!(1.5), json!(-1e300)],
        &[(json!(null), "/: expected number, got null")],
    );
    table(
        json!({"type": ["string", "null"]}),
        &[json!("x"), json!(null)],
        &[(json!(false), "/: expected null or string, got false")],
    );
    table(
        json!({"type": "object"}),
        &[json!({})],
        &[(json!([1, 2]), "/: expected object, got [1,2]")],
    );
    table(
        json!({"type": "array"}),
        &[json!([])],
        &[(json!({"a": 1}), "/: expected array, got {\"a\":1}")],
    );
    table(
        json!({"type": "boolean"}),
        &[json!(true), json!(false)],
        &[(json!(0), "/: expected boolean, got 0")],
    );
    table(
        json!({"type": "null"}),
        &[json!(null)],
        &[(json!(""), "/: expected null, got \"\"")],
    );
}

#[test]
fn enum_and_const_compare_json_values_with_numbers_by_value() {
    table(
        json!({"enum": ["red", "green", 1, null, {"a": [1]}]}),
        &[
            json!("red"),
            json!(1),
            json!(1.0),
            json!(null),
            json!({"a": [1.0]}),
        ],
        &[(
            json!("blue"),
            "/: expected one of \"red\", \"green\", 1, null, {\"a\":[1]}, got \"blue\"",
        )],
    );
    table(
        json!({"const": "v1"}),
        &[json!("v1")],
        &[(json!("v2"), "/: expected \"v1\", got \"v2\"")],
    );
    let many: Vec<Value> = (1..=12).map(Value::from).collect();
    table(
        json!({"enum": many}),
        &[json!(12)],
        &[(
            json!(13),
            "/: expected one of 1, 2, 3, 4, 5, 6, 7, 8, … (4 more), got 13",
        )],
    );
}

#[test]
fn numeric_bounds_use_the_rule_in_the_message() {
    table(
        json!({"type": "object", "properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 50}}}),
        &[json!({"limit": 1}), json!({"limit": 50})],
        &[
            (json!({"limit": -3}), "/limit: expected integer ≥ 1, got -3"),
            (
                json!({"limit": 51}),
                "/limit: expected integer ≤ 50, got 51",
            ),
        ],
    );
    table(
        json!({"exclusiveMinimum": 0, "exclusiveMaximum": 1.5}),
        &[json!(0.1), json!(1)],
        &[
            (json!(0), "/: expected number > 0, got 0"),
            (json!(1.5), "/: expected number < 1.5, got 1.5"),
        ],
    );
    table(
        json!({"minimum": 0, "exclusiveMinimum": true, "maximum": 10, "exclusiveMaximum": true}),
        &[json!(5)],
        &[
            (json!(0), "/: expected number > 0, got 0"),
            (json!(10), "/: expected number < 10, got 10"),
        ],
    );
    table(
        json!({"minimum": 9007199254740993_u64}),
        &[json!(9007199254740993_u64)],
        &[(
            json!(9007199254740992_u64),
            "/: expected number ≥ 9007199254740993, got 9007199254740992",
        )],
    );
}

#[test]
fn multiple_of_is_exact_for_integers_and_tolerant_for_fractions() {
    table(
        json!({"multipleOf": 5}),
        &[json!(0), json!(-10), json!(15)],
        &[(json!(12), "/: expected a multiple of 5, got 12")],
    );
    table(
        json!({"multipleOf": 0.1}),
        &[json!(0.3), json!(2), json!(1.7)],
        &[(json!(0.35), "/: expected a multiple of 0.1, got 0.35")],
    );
}

#[test]
fn string_lengths_count_characters_not_bytes() {
    table(
        json!({"minLength": 2, "maxLength": 5}),
        &[json!("héllo"), json!("😀😀"), json!(3)],
        &[
            (
                json!("é"),
                "/: expected at least 2 characters, got 1 (\"é\")",
            ),
            (
                json!("héllo!"),
                "/: expected at most 5 characters, got 6 (\"héllo!\")",
            ),
        ],
    );
}

#[test]
fn pattern_is_checked_and_format_is_not() {
    table(
        json!({"type": "string", "pattern": "^[a-z]+-\\d{2}$", "format": "email"}),
        &[json!("abc-12")],
        &[(
            json!("ABC-12"),
            "/: expected a string matching the pattern ^[a-z]+-\\d{2}$, got \"ABC-12\"",
        )],
    );
}
