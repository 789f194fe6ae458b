//! Tool schemas derived from Rust types with `schemars` (feature
//! `schemars`).
//!
//! Agents differ in what they accept of JSON Schema, so a derived schema is
//! shaped for the strictest of them: no `$schema` keyword (Gemini CLI
//! refuses the 2020-12 meta-schema URI that schemars writes by default),
//! every subschema inline (several agents resolve no `$ref`, so a recursive
//! type, which cannot be inlined, is refused), and `"type": "object"` at
//! the root (tool arguments are an object; an enum of object variants gets
//! it added). The input schema describes what the type *deserializes*
//! from, the output schema what it *serializes* to.

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::Value;

use super::tool::Tool;

impl Tool {
    /// The input schema derived from `T` (what `T` deserializes from), for
    /// a typed tool whose handler takes `T` (see
    /// [`StaticSurface::typed`](crate::StaticSurface::typed)). A type whose
    /// schema cannot be sent to every agent — a recursive type, or one that
    /// is not a JSON object — makes [`Tool::validate`] fail, saying why.
    ///
    #[cfg_attr(not(doctest), doc = include_str!("../doc/input_schema_for.md"))]
    #[must_use]
    pub fn input_schema_for<T: JsonSchema>(self) -> Tool {
        let (schema, problem) = derive::<T>(SchemaSettings::draft2020_12().for_deserialize());
        let tool = self.input_schema(schema);
        match problem {
            Some(problem) => tool.refuse_input_schema(problem),
            None => tool,
        }
    }

    /// The output schema derived from `R` (what `R` serializes to), for a
    /// typed tool whose handler returns `R`. As
    /// [`Tool::input_schema_for`], a type that cannot be sent to every
    /// agent makes [`Tool::validate`] fail.
    #[must_use]
    pub fn output_schema_for<R: JsonSchema>(self) -> Tool {
        let (schema, problem) = derive::<R>(SchemaSettings::draft2020_12().for_serialize());
        let tool = self.output_schema(schema);
        match problem {
            Some(problem) => tool.refuse_output_schema(problem),
            None => tool,
        }
    }
}

/// `T`'s schema, inline and without `$schema`, and why it cannot be
/// published, if it cannot.
fn derive<T: JsonSchema>(settings: SchemaSettings) -> (Value, Option<String>) {
    let generator = settings
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    let name = T::schema_name();
    let problem = if contains_ref(&schema) {
        Some(format!(
            "the schema derived from {name} needs a $ref (the type is recursive), and not every \
             agent resolves one; write the schema by hand, or bound the recursion"
        ))
    } else if !ensure_object_root(&mut schema) {
        Some(format!(
            "the schema derived from {name} does not describe a JSON object; tool arguments and \
             structured results are objects, so use a struct (or an enum of struct variants)"
        ))
    } else {
        None
    };
    (schema, problem)
}

/// Whether a `$ref` is left anywhere in the schema.
fn contains_ref(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => map.contains_key("$ref") || map.values().any(contains_ref),
        Value::Array(items) => items.iter().any(contains_ref),
        _ => false,
    }
}

/// Makes sure the root says `"type": "object"`: an enum of object variants
/// (`oneOf`/`anyOf` branches that are all objects) gets it added, since
/// agents look for it at the root. `false` when the root is no object.
fn ensure_object_root(schema: &mut Value) -> bool {
    let is_object = |schema: &Value| schema.get("type").and_then(Value::as_str) == Some("object");
    if is_object(schema) {
        return true;
    }
    let all_objects = ["oneOf", "anyOf"].iter().any(|keyword| {
        schema
            .get(*keyword)
            .and_then(Value::as_array)
            .is_some_and(|branches| !branches.is_empty() && branches.iter().all(is_object))
    });
    match schema.as_object_mut() {
        Some(root) if all_objects && !root.contains_key("type") => {
            root.insert("type".into(), "object".into());
            true
        }
        _ => false,
    }
}
