//! Tools read from another server's `tools/list`, as [`crate::client`]
//! receives them, into the [`Tool`] this crate serves its own tools as.
//!
//! Reading is lenient where a client must be: the fields this crate models
//! are read when they have the right type, and every other field (a newer
//! revision's, a vendor's, a known one of the wrong type) is kept as sent
//! ([`Tool::unknown_fields`]). It is strict where a missing field would
//! mislead: a tool without a name, or without an `inputSchema` object.
//! The schemas are compiled on the tool's first check, not here.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{Compiled, Icon, Renderings, Tool, ToolAnnotations, ToolSpec};

impl Tool {
    /// Reads one tool of a `tools/list` result; `Err` says what is wrong.
    pub(crate) fn from_listed(definition: Value) -> Result<Tool, String> {
        let Value::Object(fields) = definition else {
            return Err(format!(
                "a tool in tools/list is not an object: {definition}"
            ));
        };
        if !fields.get("name").is_some_and(Value::is_string) {
            return Err(format!(
                "a tool in tools/list has no name: {}",
                Value::Object(fields)
            ));
        }
        // One pass over the fields, each moved where it belongs: a long
        // list is read field by field, never looked up and removed.
        let mut listed = Listed::default();
        for (key, value) in fields {
            listed.read(key, value);
        }
        let Listed {
            name,
            title,
            description,
            input_schema,
            output_schema,
            annotations,
            icons,
            meta,
            unknown,
        } = listed;
        let Some(input_schema) = input_schema else {
            return Err(format!("tool {name:?} has no inputSchema object"));
        };
        Ok(Tool {
            spec: Arc::new(ToolSpec {
                name,
                title,
                description: description.unwrap_or_default(),
                input_schema,
                input: Compiled::later(),
                header_params: Compiled::later(),
                output_schema: output_schema.map(|schema| (schema, Compiled::later())),
                arguments: None,
                annotations,
                icons,
                meta,
                required_capabilities: None,
                visible: None,
                line: None,
                rendered: Renderings::default(),
                unmodelled: (!unknown.is_empty()).then_some(unknown),
            }),
        })
    }

    /// The tool served under another name (a gateway's qualified one).
    pub(crate) fn renamed(mut self, name: String) -> Tool {
        self.edit().name = name;
        self
    }

    /// The tool with its `_meta` replaced (`None`: without one).
    pub(crate) fn with_meta(mut self, meta: Option<Map<String, Value>>) -> Tool {
        self.edit().meta = meta;
        self
    }
}

/// The fields of a listed tool, as they are read.
#[derive(Default)]
struct Listed {
    name: String,
    title: Option<String>,
    description: Option<String>,
    input_schema: Option<Value>,
    output_schema: Option<Value>,
    annotations: Option<ToolAnnotations>,
    icons: Vec<Icon>,
    meta: Option<Map<String, Value>>,
    unknown: Map<String, Value>,
}

impl Listed {
    /// Reads field `key`: into its place when it is one this crate models
    /// and of the right type, among the unknown ones otherwise.
    fn read(&mut self, key: String, value: Value) {
        match (key.as_str(), value) {
            ("name", Value::String(name)) => self.name = name,
            ("title", Value::String(title)) => self.title = Some(title),
            ("description", Value::String(text)) => self.description = Some(text),
            ("inputSchema", schema @ Value::Object(_)) => self.input_schema = Some(schema),
            ("outputSchema", schema @ Value::Object(_)) => self.output_schema = Some(schema),
            ("annotations", hints @ Value::Object(_)) => {
                self.annotations = Some(ToolAnnotations::from_json(&hints));
            }
            ("icons", Value::Array(icons)) => {
                self.icons = icons.iter().filter_map(Icon::from_json).collect();
            }
            ("_meta", Value::Object(meta)) => self.meta = Some(meta),
            (_, value) => {
                self.unknown.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::model::Revision;

    #[test]
    fn a_listed_tool_reads_every_field_it_models_and_keeps_the_others_as_sent() {
        let tool = Tool::from_listed(json!({
            "name": "search",
            "title": "Search",
            "description": "Searches.",
            "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
            "outputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true},
            "icons": [{"src": "https://example.com/i.png"}],
            "_meta": {"k": 1},
            "execution": {"taskSupport": "optional"},
            "icons2": 3,
        }))
        .unwrap();
        let built = Tool::new("search", "Searches.")
            .title("Search")
            .input_schema(json!({"type": "object", "properties": {"q": {"type": "string"}}}))
            .output_schema(json!({"type": "object"}))
            .annotations(ToolAnnotations::new().read_only(true))
            .icon(Icon::new("https://example.com/i.png"))
            .meta(Map::from_iter([("k".to_owned(), json!(1))]));
        for revision in Revision::ALL {
            assert_eq!(
                tool.to_json(revision),
                built.to_json(revision),
                "{revision}"
            );
        }
        assert_eq!(
            tool.unknown_fields(),
            Some(&Map::from_iter([
                ("execution".to_owned(), json!({"taskSupport": "optional"})),
                ("icons2".to_owned(), json!(3)),
            ]))
        );
        assert_eq!(built.unknown_fields(), None);
        assert!(tool.validate().is_ok() && tool.schema_warnings().is_empty());
        assert!(tool.check_arguments(&json!({"q": "x"})).is_ok());
        assert!(tool.check_arguments(&json!({"q": 1})).is_err());
    }

    #[test]
    fn a_field_of_the_wrong_type_is_kept_unread_and_a_bad_schema_found_when_checked() {
        let tool = Tool::from_listed(json!({
            "name": "t",
            "inputSchema": {"type": "string"},
            "title": 7,
            "annotations": "read-only",
        }))
        .unwrap();
        assert_eq!(tool.title_text(), None);
        assert_eq!(tool.description(), "");
        assert!(tool.hints().is_none());
        assert_eq!(tool.unknown_fields().map(|f| f.len()), Some(2), "{tool:?}");
        assert!(tool.validate().is_err(), "compiled on its first check");
    }

    #[test]
    fn a_tool_without_a_name_or_an_input_schema_object_is_refused() {
        for bad in [
            json!({"inputSchema": {}}),
            json!({"name": 3, "inputSchema": {}}),
            json!({"name": "a"}),
            json!({"name": "a", "inputSchema": true}),
            json!("a"),
        ] {
            assert!(Tool::from_listed(bad.clone()).is_err(), "{bad}");
        }
        assert!(Tool::from_listed(json!({"name": "a", "inputSchema": {}})).is_ok());
    }
}
