//! The JSON Schema validator: every keyword with values it accepts and
//! values it refuses (and the exact words of the refusal), what is refused
//! at registration, and what is reported there instead of being ignored.
//!
//! One module per part of JSON Schema (scalars, objects, arrays,
//! composition), then the messages, what registration refuses or reports,
//! and the comparison with an independent validator; the tables they all
//! use are here.

mod arrays;
mod composition;
mod messages;
mod objects;
mod oracle;
mod registration;
mod scalars;

use serde_json::Value;
use toolhost::{Error, Schema};

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
