//! The validator against the jsonschema crate on generated values.

use serde_json::{json, Value};
use toolhost::Schema;

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
