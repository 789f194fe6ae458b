//! Validation of the host's messages against the official MCP JSON schemas
//! (`<revision>.json` in one folder), when they are there.
//!
//! The folder is `TOOLHOST_MCP_SCHEMA_DIR`, or else `../shared/mcp-schema`
//! beside the repository. A clone of the repository alone has neither: there
//! every behavioural assertion still runs, schema validation is skipped, and
//! each test binary says so once on stderr, with how to turn it on. Two
//! cases never skip: a `TOOLHOST_MCP_SCHEMA_DIR` that names a missing folder
//! (the schemas were asked for), and `CI=true` (CI never skips silently);
//! both fail every check that needs the schemas, naming the folder.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

const DIR_VAR: &str = "TOOLHOST_MCP_SCHEMA_DIR";

/// Where the schemas are expected, and whether the environment asked for
/// them explicitly.
fn expected_dir() -> (PathBuf, bool) {
    match std::env::var_os(DIR_VAR) {
        Some(dir) => (PathBuf::from(dir), true),
        // This package is tests/ in the repository: two levels up from its
        // manifest's directory is the one the repository sits in, where
        // `shared/` is.
        None => {
            let beside_repository = Path::new(env!("CARGO_MANIFEST_DIR"))
                .ancestors()
                .nth(2)
                .unwrap_or(Path::new(".."));
            (beside_repository.join("shared/mcp-schema"), false)
        }
    }
}

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|value| value.eq_ignore_ascii_case("true") || value == "1")
}

/// The schema folder, or `None` where validation is skipped; decided once
/// per test binary.
fn schema_dir() -> Option<&'static Path> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        let (dir, asked) = expected_dir();
        if dir.is_dir() {
            return Some(dir);
        }
        if asked {
            panic!(
                "{DIR_VAR} is {}, which is not a folder: point it at the official MCP schemas (<revision>.json), or unset it to skip schema validation",
                dir.display()
            );
        }
        if in_ci() {
            panic!(
                "CI=true and the official MCP schemas are not at {}: CI validates every message, so put them there or set {DIR_VAR}",
                dir.display()
            );
        }
        // Straight to stderr: the test harness captures `eprintln!` of a
        // passing test, and this line is for whoever runs the tests.
        let _ = writeln!(
            std::io::stderr(),
            "toolhost-tests: MCP schema validation skipped (no schemas at {}); every behavioural check still runs. To validate too, put the official schemas there or set {DIR_VAR}.",
            dir.display()
        );
        None
    })
    .as_deref()
}

/// Whether messages are validated against the official schemas in this run
/// (see the module docs); the first call says so on stderr when they are not.
pub fn available() -> bool {
    schema_dir().is_some()
}

fn load(dir: &Path, revision: &str) -> Value {
    let path = dir.join(format!("{revision}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|err| {
        panic!(
            "cannot read the MCP schema {} ({err}); set {DIR_VAR} to the folder of the official schemas",
            path.display()
        )
    });
    serde_json::from_str(&text).expect("schema is JSON")
}

type Cache = Mutex<HashMap<(String, String), Arc<jsonschema::Validator>>>;

fn validator(dir: &Path, revision: &str, definition: &str) -> Arc<jsonschema::Validator> {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (revision.to_owned(), definition.to_owned());
    if let Some(found) = cache.lock().unwrap().get(&key) {
        return Arc::clone(found);
    }
    let mut schema = load(dir, revision);
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

/// Asserts that `instance` is a valid `definition` of `revision`, where the
/// schemas are available (see the module docs); elsewhere checks nothing.
pub fn assert_valid(revision: &str, definition: &str, instance: &Value) {
    let Some(dir) = schema_dir() else {
        return;
    };
    let validator = validator(dir, revision, definition);
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
