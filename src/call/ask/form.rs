//! The restricted form MCP allows an elicitation to ask for.

use serde_json::Value;

use crate::model::Revision;

/// The restricted schema MCP allows for elicitation: an object of flat,
/// primitive properties.
pub(crate) fn check_requested_schema(schema: &Value, revision: Revision) -> Result<(), String> {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err("requestedSchema must have \"type\": \"object\"".into());
    }
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Err("requestedSchema needs \"properties\", an object".into());
    };
    for (name, property) in properties {
        check_primitive(property, revision).map_err(|why| format!("property {name:?}: {why}"))?;
    }
    if let Some(required) = schema.get("required") {
        let names = required.as_array().ok_or("\"required\" must be an array")?;
        for name in names {
            let name = name
                .as_str()
                .ok_or("\"required\" must list property names")?;
            if !properties.contains_key(name) {
                return Err(format!(
                    "\"required\" names {name:?}, which is not a property"
                ));
            }
        }
    }
    Ok(())
}

fn check_primitive(property: &Value, revision: Revision) -> Result<(), String> {
    match property.get("type").and_then(Value::as_str) {
        Some("string") => {
            if let Some(format) = property.get("format").and_then(Value::as_str) {
                if !matches!(format, "email" | "uri" | "date" | "date-time") {
                    return Err(format!(
                        "string format {format:?} is not one of email, uri, date, date-time"
                    ));
                }
            }
            if let Some(options) = property.get("oneOf") {
                let ok = options.as_array().is_some_and(|o| {
                    o.iter()
                        .all(|opt| opt.get("const").is_some_and(Value::is_string))
                });
                if !ok {
                    return Err(
                        "a titled enum's oneOf must list {\"const\": string, \"title\": …} options"
                            .into(),
                    );
                }
            }
            Ok(())
        }
        Some("number" | "integer" | "boolean") => Ok(()),
        Some("array") if revision >= Revision::V2025_11_25 => {
            let items = property
                .get("items")
                .ok_or("a multi-select array needs \"items\"")?;
            let enumerated = items.get("enum").is_some_and(Value::is_array)
                || items.get("anyOf").is_some_and(Value::is_array);
            if enumerated {
                Ok(())
            } else {
                Err("a multi-select array's items must be an enum or anyOf of consts".into())
            }
        }
        Some("array") => Err(format!(
            "multi-select arrays need revision 2025-11-25; the client speaks {revision}"
        )),
        Some(other) => Err(format!(
            "type {other:?} is not allowed; use string, number, integer, boolean"
        )),
        None => Err("every property needs a primitive \"type\"".into()),
    }
}
