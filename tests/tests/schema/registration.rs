//! What is refused at registration, and what is reported there instead of
//! being ignored: invalid schemas, unchecked keywords, patterns that could
//! backtrack, and a tool's two schemas.

use serde_json::json;
use toolhost::{Error, Schema, Tool};

use crate::{compile_error, table};

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
