//! Schemas made of schemas: `anyOf`, `oneOf`, `allOf`, `not`,
//! `if`/`then`/`else`, local `$ref`s and boolean schemas.

use serde_json::json;

use crate::table;

#[test]
fn any_of_reports_the_one_alternative_of_the_right_type() {
    table(
        json!({"anyOf": [{"type": "string", "maxLength": 3}, {"type": "integer"}]}),
        &[json!("abc"), json!(7)],
        &[
            (json!(true), "/: expected string or integer, got true"),
            (
                json!("abcd"),
                "/: expected at most 3 characters, got 4 (\"abcd\")",
            ),
        ],
    );
    table(
        json!({"anyOf": [{"required": ["a"]}, {"required": ["b"]}]}),
        &[json!({"a": 1}), json!({"b": 1})],
        &[(
            json!({"c": 1}),
            "/: expected a value matching at least one of the 2 \"anyOf\" schemas, got {\"c\":1}",
        )],
    );
}

#[test]
fn one_of_needs_exactly_one_match() {
    table(
        json!({"oneOf": [{"type": "integer"}, {"minimum": 10}]}),
        &[json!(3), json!(10.5)],
        &[
            (
                json!(12),
                "/: expected a value matching exactly one of the 2 \"oneOf\" schemas, got one matching #0, #1",
            ),
            // Only the second alternative takes a fraction, so its rule is the hint.
            (json!(2.5), "/: expected number ≥ 10, got 2.5"),
        ],
    );
}

#[test]
fn all_of_not_and_if_then_else_combine_schemas() {
    table(
        json!({"allOf": [{"type": "string"}, {"minLength": 2}]}),
        &[json!("ab")],
        &[(
            json!("a"),
            "/: expected at least 2 characters, got 1 (\"a\")",
        )],
    );
    table(
        json!({"not": {"type": "null"}}),
        &[json!(0)],
        &[(
            json!(null),
            "/: expected a value that does not match the \"not\" schema, got null",
        )],
    );
    table(
        json!({
            "if": {"properties": {"kind": {"const": "card"}}},
            "then": {"required": ["number"]},
            "else": {"required": ["iban"]},
        }),
        &[
            json!({"kind": "card", "number": "4"}),
            json!({"kind": "bank", "iban": "x"}),
        ],
        &[
            (
                json!({"kind": "card"}),
                "/number: expected a value, got nothing (required property is missing)",
            ),
            (
                json!({"kind": "bank"}),
                "/iban: expected a value, got nothing (required property is missing)",
            ),
        ],
    );
}

#[test]
fn local_refs_resolve_into_defs_and_definitions_and_may_recurse() {
    table(
        json!({
            "type": "object",
            "properties": {
                "root": {"$ref": "#/$defs/node"},
                "unit": {"$ref": "#/definitions/unit"},
            },
            "$defs": {"node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                },
                "required": ["name"],
            }},
            "definitions": {"unit": {"enum": ["cm", "in"]}},
        }),
        &[json!({"root": {"name": "a", "children": [{"name": "b", "children": []}]}, "unit": "cm"})],
        &[
            (
                json!({"root": {"name": "a", "children": [{"children": []}]}}),
                "/root/children/0/name: expected string, got nothing (required property is missing)",
            ),
            (json!({"unit": "mm"}), "/unit: expected one of \"cm\", \"in\", got \"mm\""),
        ],
    );
    table(
        json!({"type": "array", "items": {"$ref": "#"}, "maxItems": 1}),
        &[json!([[[]]])],
        &[(json!([[[], []]]), "/0: expected at most 1 item, got 2")],
    );
    table(
        json!({"properties": {"a~b/c": {"type": "string"}}, "$ref": "#/properties/a~0b~1c"}),
        &[json!("x")],
        &[(json!(1), "/: expected string, got 1")],
    );
}

#[test]
fn boolean_schemas_accept_everything_or_nothing() {
    table(json!(true), &[json!(null), json!({"any": [1]})], &[]);
    table(
        json!(false),
        &[],
        &[(
            json!({}),
            "/: expected no value here (the schema is false), got {}",
        )],
    );
    table(
        json!({"properties": {"legacy": false}}),
        &[json!({"other": 1})],
        &[(
            json!({"legacy": 1}),
            "/legacy: expected no value here (the schema is false), got 1",
        )],
    );
}

#[test]
fn a_false_schema_refuses_inside_every_combinator_too() {
    table(
        json!({"anyOf": [false, {"type": "string"}]}),
        &[json!("x")],
        &[(json!(1), "/: expected string, got 1")],
    );
    table(json!({"not": false}), &[json!(1), json!(null)], &[]);
    table(
        json!({"not": true}),
        &[],
        &[(
            json!(1),
            "/: expected a value that does not match the \"not\" schema, got 1",
        )],
    );
    table(
        json!({"propertyNames": false}),
        &[json!({})],
        &[(
            json!({"a": 1}),
            "/a: expected a property name matching \"propertyNames\", got \"a\"",
        )],
    );
    table(
        json!({"contains": false}),
        &[],
        &[(
            json!([1]),
            "/: expected at least 1 item matching \"contains\", got 0",
        )],
    );
}
