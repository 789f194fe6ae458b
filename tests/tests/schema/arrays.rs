//! The keywords of arrays: items, prefix items, sizes, uniqueness and
//! `contains`.

use serde_json::json;

use crate::table;

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
