//! Validation of the host's messages against the official MCP JSON schemas
//! (`../shared/mcp-schema/<revision>.json`, beside the checkout).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

fn schema_dir() -> PathBuf {
    std::env::var_os("TOOLHOST_MCP_SCHEMA_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/mcp-schema")
        })
}

fn load(revision: &str) -> Value {
    let path = schema_dir().join(format!("{revision}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|err| {
        panic!(
            "cannot read the MCP schema {} ({err}); set TOOLHOST_MCP_SCHEMA_DIR to the folder of the official schemas",
            path.display()
        )
    });
    serde_json::from_str(&text).expect("schema is JSON")
}

type Cache = Mutex<HashMap<(String, String), Arc<jsonschema::Validator>>>;

fn validator(revision: &str, definition: &str) -> Arc<jsonschema::Validator> {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (revision.to_owned(), definition.to_owned());
    if let Some(found) = cache.lock().unwrap().get(&key) {
        return Arc::clone(found);
    }
    let mut schema = load(revision);
    let defs = if schema.get("$defs").is_some() {
        "$defs"
    } else {
        "definitions"
    };
    assert!(
        schema[defs].get(definition).is_some(),
        "{revision} has no definition {definition}"
    );
    schema["$ref"] = Value::String(format!("#/{defs}/{definition}"));
    let compiled = Arc::new(jsonschema::validator_for(&schema).expect("schema compiles"));
    cache.lock().unwrap().insert(key, Arc::clone(&compiled));
    compiled
}

/// Asserts that `instance` is a valid `definition` of `revision`.
pub fn assert_valid(revision: &str, definition: &str, instance: &Value) {
    let validator = validator(revision, definition);
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "not a valid {definition} of {revision}:\n{}\n{}",
        errors.join("\n"),
        serde_json::to_string_pretty(instance).unwrap()
    );
}

/// The name of the error-response definition in `revision`.
pub fn error_definition(revision: &str) -> &'static str {
    if revision >= "2025-11-25" {
        "JSONRPCErrorResponse"
    } else {
        "JSONRPCError"
    }
}
