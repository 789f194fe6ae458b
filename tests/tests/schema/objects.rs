//! The keywords of objects: properties, required names, additional and
//! pattern properties, property names, counts and dependencies.

use serde_json::json;

use crate::table;

#[test]
fn properties_apply_to_present_keys_and_required_names_the_missing_ones() {
    table(
        json!({
            "type": "object",
            "properties": {"text": {"type": "string"}, "n": {"type": "integer"}},
            "required": ["text", "other"],
        }),
        &[
            json!({"text": "hi", "other": 1}),
            json!({"text": "", "other": null, "extra": 1}),
        ],
        &[
            (
                json!({"other": 1}),
                "/text: expected string, got nothing (required property is missing)",
            ),
            (
                json!({"text": "hi"}),
                "/other: expected a value, got nothing (required property is missing)",
            ),
            (
                json!({"text": 5, "other": 1, "n": "x"}),
                "/n: expected integer, got \"x\"\n/text: expected string, got 5",
            ),
        ],
    );
}

#[test]
fn additional_properties_is_a_boolean_or_a_schema() {
    table(
        json!({"type": "object", "properties": {"a": {}, "b": {}}, "additionalProperties": false}),
        &[json!({}), json!({"a": 1, "b": 2})],
        &[(
            json!({"a": 1, "colour": "red"}),
            "/colour: unexpected property (allowed: a, b)",
        )],
    );
    table(
        json!({"type": "object", "additionalProperties": false}),
        &[json!({})],
        &[(
            json!({"x": 1}),
            "/x: unexpected property (this object takes no properties)",
        )],
    );
    table(
        json!({"type": "object", "properties": {"id": {"type": "string"}}, "additionalProperties": {"type": "number"}}),
        &[json!({"id": "a", "score": 1.5})],
        &[(
            json!({"id": "a", "score": "high"}),
            "/score: expected number, got \"high\"",
        )],
    );
}

#[test]
fn pattern_properties_and_property_names_check_keys() {
    table(
        json!({
            "type": "object",
            "patternProperties": {"^x-": {"type": "string"}},
            "additionalProperties": false,
        }),
        &[json!({"x-trace": "abc"})],
        &[
            (json!({"x-trace": 1}), "/x-trace: expected string, got 1"),
            (
                json!({"trace": "a"}),
                "/trace: unexpected property (this object takes no properties)",
            ),
        ],
    );
    table(
        json!({"type": "object", "propertyNames": {"maxLength": 3}}),
        &[json!({"abc": 1})],
        &[(
            json!({"abcd": 1}),
            "/abcd: expected a property name matching \"propertyNames\", got \"abcd\"",
        )],
    );
}

#[test]
fn min_and_max_properties_count_keys() {
    table(
        json!({"type": "object", "minProperties": 1, "maxProperties": 2}),
        &[json!({"a": 1}), json!({"a": 1, "b": 2})],
        &[
            (json!({}), "/: expected at least 1 property, got 0"),
            (
                json!({"a": 1, "b": 2, "c": 3}),
                "/: expected at most 2 properties, got 3",
            ),
        ],
    );
}

#[test]
fn dependencies_require_names_or_schemas_when_a_key_is_present() {
    table(
        json!({"dependentRequired": {"card": ["expiry"]}}),
        &[json!({}), json!({"card": 1, "expiry": 2})],
        &[(
            json!({"card": 1}),
            "/expiry: expected a value because \"card\" is present, got nothing",
        )],
    );
    table(
        json!({"dependentSchemas": {"card": {"required": ["cvc"]}}}),
        &[json!({"x": 1}), json!({"card": 1, "cvc": 2})],
        &[(
            json!({"card": 1}),
            "/cvc: expected a value, got nothing (required property is missing)",
        )],
    );
    table(
        json!({"dependencies": {"a": ["b"], "c": {"properties": {"d": {"type": "string"}}}}}),
        &[json!({"a": 1, "b": 2}), json!({"c": 1, "d": "x"})],
        &[
            (
                json!({"a": 1}),
                "/b: expected a value because \"a\" is present, got nothing",
            ),
            (json!({"c": 1, "d": 2}), "/d: expected string, got 2"),
        ],
    );
}
