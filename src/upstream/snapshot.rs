//! The server's tools as last listed, and the names they are exposed by.

use std::collections::HashMap;
use std::sync::{RwLock, RwLockReadGuard};

use serde_json::{Map, Value};

use crate::model::{CallLine, Tool};

/// The longest name every major model API accepts for a function.
pub(super) const MAX_NAME: usize = 64;

/// The server's tools as last listed: each exposed tool with the name the
/// server knows it by.
#[derive(Default)]
pub(super) struct Snapshot {
    pub(super) tools: Vec<Tool>,
    pub(super) remote: HashMap<String, (Tool, String)>,
    /// The tools as listed, to tell whether a refresh changed them.
    pub(super) listed: Vec<Tool>,
}

impl Snapshot {
    /// The snapshot of `listed`, each tool exposed under `<prefix>_<name>`,
    /// or its own name without a prefix, and running in `line`; and the
    /// names of the tools left out: a name that cannot be exposed, or that
    /// repeats one.
    pub(super) fn of(
        listed: Vec<Tool>,
        prefix: Option<&str>,
        line: &CallLine,
    ) -> (Snapshot, Vec<String>) {
        let mut snapshot = Snapshot::default();
        let mut skipped = Vec::new();
        for tool in &listed {
            let name = tool.name();
            let exposed = match prefix {
                Some(prefix) => format!("{prefix}_{name}"),
                None => name.to_owned(),
            };
            // An empty remote name would be exposed as the bare prefix
            // (`<server>_`), which names no tool of the server.
            if name.is_empty()
                || !valid_name(&exposed)
                || exposed.len() > MAX_NAME
                || snapshot.remote.contains_key(&exposed)
            {
                skipped.push(name.to_owned());
                continue;
            }
            let remote = name.to_owned();
            // The line travels with the tool, so that no wrapper of the
            // layer can put its calls back in the host's slots.
            let tool = exposed_tool(tool.clone(), exposed.clone()).runs_in(line.clone());
            // A listed tool's schemas are compiled on its first check:
            // here, on the refresh, rather than in the agent's next
            // tools/list. (A tool that fails is left out there, as any
            // surface's invalid tool is.)
            let _ = tool.validate();
            snapshot.tools.push(tool.clone());
            snapshot.remote.insert(exposed, (tool, remote));
        }
        snapshot.listed = listed;
        (snapshot, skipped)
    }
}

/// The server's tool as this host lists it: under the exposed name, with
/// everything the server said of it (each field sent on to the agent where
/// its revision has it) but the protocol's own `_meta` keys.
fn exposed_tool(tool: Tool, exposed: String) -> Tool {
    let tool = tool.renamed(exposed);
    let Some(meta) = tool.meta_json() else {
        return tool;
    };
    if !meta.keys().any(|key| reserved_meta_key(key)) {
        return tool;
    }
    // The protocol's own keys speak for the host the agent talks to;
    // a server behind it must not stamp them (a serverInfo there would
    // let it pass for another server), as results already drop them.
    let meta: Map<String, Value> = meta
        .iter()
        .filter(|(key, _)| !reserved_meta_key(key))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    tool.with_meta((!meta.is_empty()).then_some(meta))
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
