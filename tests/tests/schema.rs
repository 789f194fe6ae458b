//! The JSON Schema validator: every keyword with values it accepts and
//! values it refuses (and the exact words of the refusal), what is refused
//! at registration, and what is reported there instead of being ignored.

use serde_json::{json, Value};
use toolhost::{Error, Schema, Tool};

/// Asserts that `schema` accepts every value of `valid` and refuses every
/// value of `invalid` with exactly the given message.
fn table(schema: Value, valid: &[Value], invalid: &[(Value, &str)]) {
    let compiled = Schema::compile(&schema).unwrap_or_else(|err| panic!("{schema}: {err}"));
    assert!(
        compiled.warnings().is_empty(),
        "{schema}: {:?}",
        compiled.warnings()
    );
    oracle_agrees(&schema, valid, invalid);
    for value in valid {
        if let Err(violations) = compiled.validate(value) {
            panic!("{schema} refused {value}:\n{violations}");
        }
    }
    for (value, message) in invalid {
        match compiled.validate(value) {
            Ok(()) => panic!("{schema} accepted {value}"),
            Err(violations) => assert_eq!(violations.to_string(), *message, "{schema} on {value}"),
        }
    }
}

/// The jsonschema crate (JSON Schema 2020-12) must agree on every value,
/// except where toolhost deliberately differs: draft-4/7 forms it also
/// accepts, and `integer`, which here excludes `5.0`.
fn oracle_agrees(schema: &Value, valid: &[Value], invalid: &[(Value, &str)]) {
    let text = schema.to_string();
    let older_drafts = ["exclusiveMinimum\":true", "additionalItems", "dependencies"];
    if older_drafts.iter().any(|form| text.contains(form)) {
        return;
    }
    let oracle = jsonschema::validator_for(schema).unwrap_or_else(|err| panic!("{schema}: {err}"));
    let cases = valid
        .iter()
        .map(|v| (v, true))
        .chain(invalid.iter().map(|(v, _)| (v, false)));
    for (value, expected) in cases {
        let integral_float = value.as_f64().is_some_and(|f| f.fract() == 0.0) && value.is_f64();
        if integral_float && text.contains("integer") {
            continue;
        }
        assert_eq!(
            oracle.is_valid(value),
            expected,
            "the oracle disagrees on {value} for {schema}"
        );
    }
}

fn compile_error(schema: Value) -> String {
    match Schema::compile(&schema) {
        Ok(_) => panic!("{schema} compiled"),
        Err(err) => {
            assert!(matches!(err, Error::InvalidSchema { .. }), "{err:?}");
            err.to_string()
        }
    }
}

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
fn items_and_prefix_items_check_each_element() {
    table(
        json!({"type": "array", "items": {"type": "integer"}}),
        &[json!([]), json!([1, 2])],
        &[(
            json!([1, "2", 3.5]),
            "/1: expected integer, got \"2\"\n/2: expected integer, got 3.5",
        )],
    );
    table(
        json!({"prefixItems": [{"type": "string"}, {"type": "number"}], "items": false}),
        &[json!(["a", 1]), json!(["a"])],
        &[
            (json!([1, 1]), "/0: expected string, got 1"),
            (
                json!(["a", 1, true]),
                "/2: expected no value here (the schema is false), got true",
            ),
        ],
    );
    table(
        json!({"items": [{"type": "string"}], "additionalItems": {"type": "boolean"}}),
        &[json!(["a", true, false])],
        &[(json!(["a", 1]), "/1: expected boolean, got 1")],
    );
}

#[test]
fn array_sizes_uniqueness_and_contains_are_counted() {
    table(
        json!({"minItems": 1, "maxItems": 2}),
        &[json!([1]), json!([1, 2])],
        &[
            (json!([]), "/: expected at least 1 item, got 0"),
            (json!([1, 2, 3]), "/: expected at most 2 items, got 3"),
        ],
    );
    table(
        json!({"uniqueItems": true}),
        &[json!([1, "1", [1], {"a": 1}, {"a": 2}])],
        &[
            (
                json!([1, 2, 1.0]),
                "/2: expected unique items, got a duplicate of item 0",
            ),
            (
                json!([{"a": 1, "b": 2}, {"b": 2, "a": 1}]),
                "/1: expected unique items, got a duplicate of item 0",
            ),
            (
                json!([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, [1, {"a": 17}], 18, [1.0, {"a": 17.0}]]),
                "/19: expected unique items, got a duplicate of item 17",
            ),
        ],
    );
    table(
        json!({"contains": {"type": "string"}, "minContains": 2, "maxContains": 3}),
        &[json!(["a", 1, "b"])],
        &[
            (
                json!(["a", 1]),
                "/: expected at least 2 items matching \"contains\", got 1",
            ),
            (
                json!(["a", "b", "c", "d"]),
                "/: expected at most 3 items matching \"contains\", got 4",
            ),
        ],
    );
    table(
        json!({"contains": {"const": 0}}),
        &[json!([1, 0])],
        &[(
            json!([1]),
            "/: expected at least 1 item matching \"contains\", got 0",
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

#[test]
fn annotations_and_extensions_are_accepted_without_warnings() {
    table(
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://example.com/tool",
            "$comment": "c",
            "title": "t",
            "description": "d",
            "default": {},
            "examples": [{}],
            "deprecated": false,
            "type": "object",
            "properties": {"region": {
                "type": "string", "readOnly": false, "writeOnly": false,
                "contentMediaType": "text/plain", "x-mcp-header": "Region",
            }},
        }),
        &[json!({"region": "eu"})],
        &[],
    );
}

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

#[test]
fn invalid_schemas_are_refused_at_compile_time_naming_the_place() {
    let cases = [
        (
            json!({"type": "strnig"}),
            "invalid JSON Schema at #/type: unknown type \"strnig\"",
        ),
        (
            json!({"type": []}),
            "at #/type: \"type\" must be a type name or a non-empty array",
        ),
        (
            json!({"properties": {"a": 5}}),
            "at #/properties/a: a schema must be an object or a boolean, got a number",
        ),
        (
            json!({"minLength": -1}),
            "at #/minLength: \"minLength\" must be a non-negative integer",
        ),
        (
            json!({"maxItems": 1.5}),
            "at #/maxItems: \"maxItems\" must be a non-negative integer",
        ),
        (
            json!({"minimum": "1"}),
            "at #/minimum: \"minimum\" must be a number",
        ),
        (
            json!({"multipleOf": 0}),
            "at #/multipleOf: \"multipleOf\" must be greater than 0",
        ),
        (
            json!({"required": "a"}),
            "at #/required: \"required\" must be an array of strings",
        ),
        (json!({"enum": "a"}), "at #/enum: \"enum\" must be an array"),
        (
            json!({"anyOf": []}),
            "at #/anyOf: \"anyOf\" must be a non-empty array of schemas",
        ),
        (
            json!({"uniqueItems": "yes"}),
            "at #/uniqueItems: \"uniqueItems\" must be a boolean",
        ),
        (
            json!({"pattern": "(a"}),
            "at #/pattern: \"(a\" is not a valid regular expression: a '(' is never closed",
        ),
        (
            json!({"$ref": "#/$defs/missing"}),
            "at #/$ref: \"#/$defs/missing\" points at nothing in this schema",
        ),
        (
            json!({"$ref": "#/%zz"}),
            "at #/$ref: \"#/%zz\" has a malformed %-escape",
        ),
        (
            json!({"$ref": "#"}),
            "at #: a cycle of $ref/allOf/anyOf/oneOf/not/if through # never descends",
        ),
        (
            json!({"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/b"}]}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}),
            "a cycle of $ref/allOf/anyOf/oneOf/not/if",
        ),
        (
            json!([1]),
            "at #: a schema must be an object or a boolean, got an array",
        ),
    ];
    for (schema, expected) in cases {
        let message = compile_error(schema.clone());
        assert!(message.contains(expected), "{schema}: {message}");
    }
}

#[test]
fn keywords_that_are_not_checked_are_reported_once_at_compile_time() {
    let schema = Schema::compile(&json!({
        "type": "object",
        "properties": {
            "id": {"type": "string", "pattern": "^(?!tmp-)\\w+$"},
            "sub": {"$id": "https://example.com/sub", "type": "object"},
            "remote": {"$ref": "https://example.com/schema.json"},
        },
        "patternProperties": {"\\p{L}": {}},
        "additionalProperties": false,
        "unevaluatedProperties": false,
        "requried": ["id"],
    }))
    .unwrap();
    let warnings = schema.warnings().join("\n");
    for expected in [
        "#/properties/id/pattern: \"^(?!tmp-)\\\\w+$\": lookaround ((?=, (?!, (?<=, (?<!) is outside the supported pattern subset; this \"pattern\" is not checked",
        "#/properties/sub/$id: \"$id\" below the root is not supported",
        "#/properties/remote/$ref: \"https://example.com/schema.json\" is not a local JSON-pointer reference",
        "#/patternProperties: \"\\\\p{L}\": a Unicode property escape (\\p{…}) is outside the supported pattern subset; properties matching it are not checked",
        "#/additionalProperties: not checked either, since it depends on the unchecked patternProperties",
        "#/unevaluatedProperties: \"unevaluatedProperties\" is not implemented by this validator and is not checked",
        "#/requried: unknown keyword \"requried\" is ignored",
    ] {
        assert!(warnings.contains(expected), "missing {expected:?} in\n{warnings}");
    }
    assert_eq!(schema.warnings().len(), 7, "{warnings}");
    // The unchecked parts accept anything rather than refusing good calls.
    assert!(schema
        .validate(&json!({"id": "tmp-1", "remote": 5, "ünïcode": 1}))
        .is_ok());
}

#[test]
fn a_pattern_cannot_be_made_to_backtrack_catastrophically() {
    let schema = Schema::compile(&json!({"pattern": "^(a+)+$"})).unwrap();
    let evil = format!("{}!", "a".repeat(50_000));
    assert!(schema.validate(&json!(evil)).is_err());
    assert!(schema.validate(&json!("aaaa")).is_ok());
}

#[test]
fn a_tool_refuses_schemas_that_are_invalid_or_not_for_an_object() {
    let cases = [
        (
            Tool::new("t", "d").input_schema(json!({"type": "array"})),
            "tool \"t\" has an unusable inputSchema: an inputSchema must be a JSON object with \"type\": \"object\"",
        ),
        (
            Tool::new("t", "d").input_schema(json!({"type": "object", "properties": {"n": {"type": "int"}}})),
            "tool \"t\" has an unusable inputSchema: at #/properties/n/type: unknown type \"int\"",
        ),
        (
            Tool::new("t", "d").output_schema(json!({"type": "string"})),
            "tool \"t\" has an unusable outputSchema: an outputSchema must be a JSON object with \"type\": \"object\"",
        ),
        (
            Tool::new("t", "d").output_schema(json!({"type": "object", "required": [1]})),
            "tool \"t\" has an unusable outputSchema: at #/required: \"required\" must be an array of strings",
        ),
    ];
    for (tool, expected) in cases {
        let err = tool.validate().unwrap_err();
        assert!(
            matches!(
                err,
                Error::InvalidInputSchema { .. } | Error::InvalidOutputSchema { .. }
            ),
            "{err:?}"
        );
        assert!(err.to_string().starts_with(expected), "{err}");
    }
    let fine = Tool::new("t", "d")
        .input_schema(json!({"type": "object", "properties": {"n": {"type": "integer"}}}))
        .output_schema(json!({"type": "object"}));
    assert!(fine.validate().is_ok());
}

#[test]
fn a_tool_lists_the_warnings_of_both_its_schemas() {
    let tool = Tool::new("t", "d")
        .input_schema(json!({"type": "object", "nullable": true}))
        .output_schema(json!({"type": "object", "unevaluatedProperties": false}));
    assert_eq!(
        tool.schema_warnings(),
        [
            "inputSchema #/nullable: unknown keyword \"nullable\" is ignored",
            "outputSchema #/unevaluatedProperties: \"unevaluatedProperties\" is not implemented by this validator and is not checked",
        ]
    );
    assert!(tool.validate().is_ok());
    assert!(Tool::new("plain", "d").schema_warnings().is_empty());
}

/// A small deterministic generator (xorshift), so the test needs no
/// dependency and fails the same way every time.
struct Values(u64);

impl Values {
    fn next(&mut self, below: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % below
    }

    /// Half containers while depth lasts, so objects and arrays are common.
    fn value(&mut self, depth: u32) -> Value {
        if depth > 0 && self.next(2) == 0 {
            let len = self.next(4);
            return if self.next(2) == 0 {
                Value::Array((0..len).map(|_| self.value(depth - 1)).collect())
            } else {
                let keys = ["a", "b", "c", "x-y"];
                Value::Object(
                    (0..len)
                        .map(|_| {
                            (
                                keys[self.next(4) as usize].to_owned(),
                                self.value(depth - 1),
                            )
                        })
                        .collect(),
                )
            };
        }
        match self.next(9) {
            0 => Value::Null,
            1 => json!(self.next(2) == 0),
            2 | 3 => json!(self.next(7) as i64 - 2),
            4 => json!([0.5, 2.5, -1.5, 10.25][self.next(4) as usize]),
            5 => json!(10),
            _ => {
                json!(["", "a", "ab", "abc", "x-1", "Ab", "aaaa", "1", "b"][self.next(9) as usize])
            }
        }
    }
}

#[test]
fn the_validator_agrees_with_the_jsonschema_crate_on_generated_values() {
    let schemas = [
        json!({"type": "object", "properties": {"a": {"type": "integer", "minimum": 0}, "b": {"type": "string", "maxLength": 2}}, "required": ["a"], "additionalProperties": false}),
        json!({"type": "array", "items": {"type": ["string", "null"]}, "minItems": 1, "uniqueItems": true}),
        json!({"anyOf": [{"type": "string", "pattern": "^a+$"}, {"type": "number", "exclusiveMaximum": 2}]}),
        json!({"oneOf": [{"type": "integer"}, {"minimum": 0}, {"type": "array", "contains": {"type": "boolean"}}]}),
        json!({"not": {"enum": [null, "a", 2]}, "multipleOf": 0.5}),
        json!({"if": {"type": "object", "required": ["a"]}, "then": {"properties": {"a": {"const": "b"}}}, "else": {"type": ["array", "null"]}}),
        json!({"$defs": {"t": {"type": ["object", "integer"], "properties": {"a": {"$ref": "#/$defs/t"}}, "maxProperties": 2}}, "$ref": "#/$defs/t"}),
        json!({"type": "object", "patternProperties": {"^x-": {"type": "string"}}, "propertyNames": {"maxLength": 1, "pattern": "^[a-z]"}, "dependentRequired": {"a": ["b"]}}),
        json!({"prefixItems": [{"type": "integer"}, {"type": "string"}], "items": {"type": "boolean"}, "maxItems": 3}),
        json!({"allOf": [{"minLength": 1}, {"pattern": "\\d"}], "minimum": -1, "maximum": 2}),
        json!({"dependentSchemas": {"a": {"required": ["c"]}}, "minProperties": 1, "contains": {"const": 10}, "maxContains": 1}),
    ];
    let mut values = Values(0x9E37_79B9_7F4A_7C15);
    for schema in schemas {
        let ours = Schema::compile(&schema).unwrap();
        assert!(
            ours.warnings().is_empty(),
            "{schema}: {:?}",
            ours.warnings()
        );
        let oracle = jsonschema::validator_for(&schema).unwrap();
        let (mut accepted, mut refused) = (0, 0);
        for _ in 0..5_000 {
            let value = values.value(3);
            let expected = oracle.is_valid(&value);
            assert_eq!(
                ours.validate(&value).is_ok(),
                expected,
                "{schema} on {value}"
            );
            if expected {
                accepted += 1;
            } else {
                refused += 1;
            }
        }
        assert!(
            accepted >= 10 && refused >= 10,
            "{schema}: {accepted} accepted, {refused} refused: the generator misses a side"
        );
    }
}
