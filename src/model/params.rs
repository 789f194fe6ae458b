//! `x-mcp-header` (2026-07-28): tool arguments that the client repeats in
//! `Mcp-Param-{Name}` headers so that gateways can route on them without
//! reading the body. The server checks each such header against the body.
//!
//! Where an annotation may stand, and on what, is checked when a tool is
//! registered ([`header_params`]); the per-request check ([`check_headers`])
//! then only compares values.

use serde_json::Value;

use super::http::Headers;
use super::jsonrpc::{RpcError, HEADER_MISMATCH};
use crate::base64::base64_decode;

const ANNOTATION: &str = "x-mcp-header";

/// The type of an annotated argument: the only three a header can carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ParamType {
    String,
    Integer,
    Boolean,
}

/// One annotated argument: its header name and where it sits in the
/// arguments object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HeaderParam {
    pub(crate) name: String,
    pub(crate) path: Vec<String>,
    pub(crate) kind: ParamType,
}

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// The annotated arguments of an input schema, or what breaks the rules:
/// a name that is not an HTTP token, a name used twice (case-insensitively),
/// an annotated property that is not a string, integer or boolean, or an
/// annotation anywhere but on a property reached through `properties` alone.
pub(crate) fn header_params(schema: &Value) -> Result<Vec<HeaderParam>, String> {
    let mut found = Vec::new();
    collect(schema, &mut Vec::new(), &mut found)?;
    let allowed = found.len();
    let total = count_annotations(schema);
    if total != allowed {
        return Err(format!(
            "{ANNOTATION} may only annotate a property reached through \"properties\" alone, not one under items, anyOf/oneOf/allOf/not, if/then/else or $ref ({} misplaced)",
            total - allowed
        ));
    }
    for (i, param) in found.iter().enumerate() {
        if found[..i]
            .iter()
            .any(|other| other.name.eq_ignore_ascii_case(&param.name))
        {
            return Err(format!(
                "{ANNOTATION} {:?} is used twice; header names must be unique, ignoring case",
                param.name
            ));
        }
    }
    Ok(found)
}

fn collect(
    schema: &Value,
    path: &mut Vec<String>,
    found: &mut Vec<HeaderParam>,
) -> Result<(), String> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    for (key, property) in properties {
        path.push(key.clone());
        if let Some(annotation) = property.get(ANNOTATION) {
            let where_ = path.join(".");
            let name = annotation
                .as_str()
                .filter(|n| !n.is_empty() && n.chars().all(is_tchar))
                .ok_or_else(|| {
                    format!("{ANNOTATION} on {where_:?} must be a non-empty HTTP token (letters, digits and !#$%&'*+-.^_`|~)")
                })?;
            let kind = match property.get("type").and_then(Value::as_str) {
                Some("string") => ParamType::String,
                Some("integer") => ParamType::Integer,
                Some("boolean") => ParamType::Boolean,
                _ => {
                    return Err(format!(
                        "{ANNOTATION} on {where_:?} needs \"type\" string, integer or boolean: no other value fits in a header"
                    ))
                }
            };
            found.push(HeaderParam {
                name: name.to_owned(),
                path: path.clone(),
                kind,
            });
        }
        collect(property, path, found)?;
        path.pop();
    }
    Ok(())
}

fn count_annotations(value: &Value) -> usize {
    match value {
        Value::Object(map) => {
            usize::from(map.contains_key(ANNOTATION))
                + map.values().map(count_annotations).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(count_annotations).sum(),
        _ => 0,
    }
}

/// A header value: trimmed, with the `=?base64?…?=` sentinel decoded.
/// `None` for characters a header may not hold or a broken sentinel.
pub(crate) fn decode_header(raw: &str) -> Option<String> {
    let trimmed = raw.trim_matches([' ', '\t']);
    if !trimmed
        .bytes()
        .all(|b| (0x21..=0x7e).contains(&b) || b == b' ' || b == b'\t')
    {
        return None;
    }
    match trimmed
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    {
        Some(encoded) => String::from_utf8(base64_decode(encoded)?).ok(),
        None => Some(trimmed.to_owned()),
    }
}

fn matches(kind: ParamType, header: &str, argument: &Value) -> bool {
    match kind {
        ParamType::String => argument.as_str() == Some(header),
        ParamType::Boolean => argument.as_bool().map(|b| b.to_string()).as_deref() == Some(header),
        // Compared as numbers, so that `42` and `42.0` agree.
        ParamType::Integer => match (header.parse::<f64>(), argument.as_f64()) {
            (Ok(sent), Some(value)) => sent.is_finite() && sent == value,
            _ => false,
        },
    }
}

/// Checks every annotated argument against its `Mcp-Param-{Name}` header:
/// an argument that is present needs its header with the same value; an
/// absent (or null) argument must not have one.
pub(crate) fn check_headers(
    params: &[HeaderParam],
    arguments: &Value,
    headers: &Headers,
) -> Result<(), RpcError> {
    for param in params {
        let header_name = format!("mcp-param-{}", param.name);
        let argument = param
            .path
            .iter()
            .try_fold(arguments, |value, key| value.get(key))
            .filter(|v| !v.is_null());
        let problem = match (argument, headers.get(&header_name)) {
            (None, None) => continue,
            (Some(_), None) => "is missing, though the argument is present",
            (None, Some(_)) => "is present, though the argument is absent",
            (Some(argument), Some(raw)) => match decode_header(raw) {
                None => "is not a valid header value or base64 sentinel",
                Some(value) if matches(param.kind, &value, argument) => continue,
                Some(_) => "does not match the argument in the body",
            },
        };
        return Err(RpcError::new(
            HEADER_MISMATCH,
            format!(
                "the Mcp-Param-{} header {problem} ({})",
                param.name,
                param.path.join(".")
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn headers(pairs: &[(&str, &str)]) -> Headers {
        Headers::new(pairs.iter().copied())
    }

    #[test]
    fn annotated_properties_are_found_through_nested_properties() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "target": {"type": "object", "properties": {
                "port": {"type": "integer", "x-mcp-header": "Port"}}},
            "plain": {"type": "string"}}});
        let params = header_params(&schema).unwrap();
        let names: Vec<_> = params
            .iter()
            .map(|p| (p.name.as_str(), p.path.join(".")))
            .collect();
        assert!(names.contains(&("Region", "region".into())));
        assert!(names.contains(&("Port", "target.port".into())));
        assert_eq!(names.len(), 2);
    }

    #[test]
    fn each_registration_rule_is_named_in_its_error() {
        let cases = [
            (
                json!({"properties": {"a": {"type": "number", "x-mcp-header": "A"}}}),
                "string, integer or boolean",
            ),
            (
                json!({"properties": {"a": {"type": "string", "x-mcp-header": "has space"}}}),
                "HTTP token",
            ),
            (
                json!({"properties": {"a": {"type": "string", "x-mcp-header": ""}}}),
                "HTTP token",
            ),
            (
                json!({"properties": {"a": {"type": "string", "x-mcp-header": "X"},
                                    "b": {"type": "string", "x-mcp-header": "x"}}}),
                "unique",
            ),
            (
                json!({"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "I"}}}}),
                "properties\" alone",
            ),
            (
                json!({"anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
                "properties\" alone",
            ),
        ];
        for (schema, rule) in cases {
            let err = header_params(&schema).unwrap_err();
            assert!(err.contains(rule), "{schema}: {err}");
        }
    }

    #[test]
    fn values_are_compared_by_type_after_decoding() {
        let params = header_params(&json!({"properties": {
            "s": {"type": "string", "x-mcp-header": "S"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "b": {"type": "boolean", "x-mcp-header": "B"}}}))
        .unwrap();
        let args = json!({"s": "Hello", "n": 42, "b": false});
        let good = headers(&[
            ("Mcp-Param-S", "=?base64?SGVsbG8=?="),
            ("mcp-param-n", "42.0"),
            ("MCP-PARAM-B", "false"),
        ]);
        assert!(check_headers(&params, &args, &good).is_ok());
        for bad in [
            headers(&[
                ("Mcp-Param-S", "=?base64?SGVsbG8?="),
                ("Mcp-Param-N", "42"),
                ("Mcp-Param-B", "false"),
            ]),
            headers(&[
                ("Mcp-Param-S", "Hello"),
                ("Mcp-Param-N", "43"),
                ("Mcp-Param-B", "false"),
            ]),
            headers(&[
                ("Mcp-Param-S", "Hello"),
                ("Mcp-Param-N", "42"),
                ("Mcp-Param-B", "False"),
            ]),
            headers(&[("Mcp-Param-S", "Hello"), ("Mcp-Param-N", "42")]),
        ] {
            let err = check_headers(&params, &args, &bad).unwrap_err();
            assert_eq!(err.code, HEADER_MISMATCH);
        }
        let absent = json!({"s": "Hello", "n": 42});
        let extra = headers(&[
            ("Mcp-Param-S", "Hello"),
            ("Mcp-Param-N", "42"),
            ("Mcp-Param-B", "true"),
        ]);
        assert!(
            check_headers(&params, &absent, &extra).is_err(),
            "a header for an absent argument"
        );
        let literal = json!({"s": "=?base64?SGVsbG8=", "n": 1, "b": true});
        let literal_headers = headers(&[
            ("Mcp-Param-S", "=?base64?SGVsbG8="),
            ("Mcp-Param-N", "1"),
            ("Mcp-Param-B", "true"),
        ]);
        assert!(
            check_headers(&params, &literal, &literal_headers).is_ok(),
            "half a sentinel is literal"
        );
    }
}
