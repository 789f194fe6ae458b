//! The server's tools as last listed, and the names they are exposed by.

use std::collections::HashMap;
use std::sync::{RwLock, RwLockReadGuard};

use serde_json::{Map, Value};

use crate::client::ToolInfo;
use crate::model::{Icon, Tool, ToolAnnotations};

/// The longest name every major model API accepts for a function.
pub(super) const MAX_NAME: usize = 64;

/// The server's tools as last listed: each exposed tool with the name the
/// server knows it by.
#[derive(Default)]
pub(super) struct Snapshot {
    pub(super) tools: Vec<Tool>,
    pub(super) remote: HashMap<String, (Tool, String)>,
    /// The definitions as listed, to tell whether a refresh changed them.
    pub(super) definitions: Vec<Value>,
}

impl Snapshot {
    /// The snapshot of `listed` (whose `definitions` are given), each tool
    /// exposed under `<prefix>_<name>`, or its own name without a prefix,
    /// and the names of the tools left out: a name that cannot be exposed,
    /// or that repeats one.
    pub(super) fn of(
        listed: Vec<ToolInfo>,
        definitions: Vec<Value>,
        prefix: Option<&str>,
    ) -> (Snapshot, Vec<String>) {
        let mut snapshot = Snapshot {
            definitions,
            ..Snapshot::default()
        };
        let mut skipped = Vec::new();
        for info in listed {
            let exposed = match prefix {
                Some(prefix) => format!("{prefix}_{}", info.name),
                None => info.name.clone(),
            };
            // An empty remote name would be exposed as the bare prefix
            // (`<server>_`), which names no tool of the server.
            if info.name.is_empty()
                || !valid_name(&exposed)
                || exposed.len() > MAX_NAME
                || snapshot.remote.contains_key(&exposed)
            {
                skipped.push(info.name);
                continue;
            }
            let tool = exposed_tool(&exposed, &info);
            snapshot.tools.push(tool.clone());
            snapshot.remote.insert(exposed, (tool, info.name));
        }
        (snapshot, skipped)
    }
}

/// The server's tool as this host lists it: the exposed name, with the
/// server's description, title, schemas, annotations, icons and `_meta`
/// (each sent on to the agent where its revision has them).
fn exposed_tool(exposed: &str, info: &ToolInfo) -> Tool {
    let mut tool = Tool::new(exposed, info.description.clone().unwrap_or_default())
        .input_schema(info.input_schema().clone());
    if let Some(title) = &info.title {
        tool = tool.title(title.clone());
    }
    if let Some(schema) = info.output_schema() {
        tool = tool.output_schema(schema.clone());
    }
    if let Some(annotations) = info.definition.get("annotations").filter(|a| a.is_object()) {
        tool = tool.annotations(ToolAnnotations::from_json(annotations));
    }
    let icons = info.definition.get("icons").and_then(Value::as_array);
    for icon in icons.into_iter().flatten().filter_map(Icon::from_json) {
        tool = tool.icon(icon);
    }
    if let Some(Value::Object(meta)) = info.definition.get("_meta") {
        // The protocol's own keys speak for the host the agent talks to;
        // a server behind it must not stamp them (a serverInfo there would
        // let it pass for another server), as results already drop them.
        let meta: Map<String, Value> = meta
            .iter()
            .filter(|(key, _)| !reserved_meta_key(key))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        if !meta.is_empty() {
            tool = tool.meta(meta);
        }
    }
    tool
}

/// Whether a `_meta` key is in a namespace MCP reserves: a prefix (before
/// the `/`) with a `modelcontextprotocol` or `mcp` label, such as
/// `io.modelcontextprotocol/` or `dev.mcp/`.
fn reserved_meta_key(key: &str) -> bool {
    key.split_once('/').is_some_and(|(prefix, _)| {
        prefix.split('.').any(|label| {
            label.eq_ignore_ascii_case("modelcontextprotocol") || label.eq_ignore_ascii_case("mcp")
        })
    })
}

/// Letters, digits, `_` and `-`: what every major model API accepts in a
/// function name, and a subset of MCP's tool-name characters.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

pub(super) fn read(snapshot: &RwLock<Snapshot>) -> RwLockReadGuard<'_, Snapshot> {
    snapshot
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_protocols_own_meta_namespaces_are_reserved_and_others_are_not() {
        for key in [
            "io.modelcontextprotocol/serverInfo",
            "modelcontextprotocol.io/x",
            "dev.mcp/y",
            "api.MCP.com/z",
        ] {
            assert!(reserved_meta_key(key), "{key}");
        }
        for key in [
            "progressToken",
            "com.example/mcp",
            "example.org/data",
            "mcpx.dev/a",
        ] {
            assert!(!reserved_meta_key(key), "{key}");
        }
    }
}
