//! A live registry: tools registered and withdrawn at any time, from any
//! thread, announced to every session that serves it.
//!
//! The registry is shared (`Clone` shares it), so the application keeps
//! one handle and gives the host another. Its lock guards the list only:
//! a call clones its handler out and runs it after letting go, so
//! handlers run concurrently and a handler may itself register or
//! withdraw tools. A change is announced after the lock is released,
//! through the [`SessionLink`]s the host handed over at each
//! `open_session`.

use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, Mutex};

use serde_core::de::DeserializeOwned;
use serde_json::Value;

use super::sealed::Token;
use super::{admit, call_detached, untyped, Handler, ToolSurface};
use crate::call::context::CallContext;
use crate::call::session_link::{Links, SessionLink};
use crate::call::tool_error::ToolError;
use crate::call::typed::{typed_tool, Reply};
use crate::error::Error;
use crate::event::LOG_TARGET;
use crate::model::{Tool, ToolOutcome};
use crate::sync::lock;

/// Tools registered and withdrawn while sessions serve them: every open
/// session's clients get `notifications/tools/list_changed` (on the `GET`
/// stream of the stateful revisions and on 2026-07-28
/// `subscriptions/listen`) after each change, with no call to
/// [`ToolSession::notify_tools_changed`](crate::ToolSession::notify_tools_changed)
/// — also when the registry is wrapped in a surface of the application's
/// own.
///
/// Registration reads as on a [`StaticSurface`](crate::StaticSurface):
/// [`ToolRegistry::tool`] for a handler of `(&Value, &CallContext)`,
/// [`ToolRegistry::typed`] for typed arguments, [`ToolRegistry::reserve`]
/// as on a [`LayeredSurface`](crate::LayeredSurface). Names are refused
/// when they break the MCP rules, are registered already, or are
/// reserved. A tool gated with [`Tool::visible_when`] is listed and
/// callable only while its predicate says yes; [`ToolRegistry::refresh`]
/// announces its change of mind.
///
/// ```
/// # #[cfg(feature = "client")] {
/// use serde_json::{json, Value};
/// use toolhost::{HostConfig, Tool, ToolHost, ToolRegistry};
///
/// fn word_count(args: &Value) -> Result<Value, String> {
///     let text = args["text"].as_str().ok_or("text must be a string")?;
///     Ok(json!({"words": text.split_whitespace().count()}))
/// }
///
/// let registry = ToolRegistry::new();
/// let host = ToolHost::bind(HostConfig::default())?;
/// let session = host.open_session(registry.clone());
///
/// registry.tool(Tool::new("word_count", "Counts words."), |args, _ctx| word_count(args))?; // announced
/// assert_eq!(registry.count(), 1);
/// let outcome = registry.call_detached("word_count", &json!({"text": "a b c"}));
/// assert_eq!(outcome.structured_content(), Some(&json!({"words": 3})));
///
/// let mut client = session.client()?;
/// assert_eq!(client.call_tool("word_count", json!({"text": "hi"}))?.structured_content, Some(json!({"words": 1})));
/// assert!(registry.remove("word_count"));
/// assert!(client.call_tool("word_count", json!({"text": "hi"}))?.is_error); // unknown now
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Default)]
pub struct ToolRegistry {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    entries: Mutex<Entries>,
    links: Links,
}

#[derive(Default)]
struct Entries {
    /// In registration order, which is the order of `tools/list`.
    tools: Vec<(Tool, Handler)>,
    reserved: HashSet<String>,
}

impl Entries {
    fn position(&self, name: &str) -> Option<usize> {
        self.tools.iter().position(|(tool, _)| tool.name() == name)
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> ToolRegistry {
        ToolRegistry::default()
    }

    /// Reserves `name` for a tool of the application's own, which no
    /// registration may take (a registration already holding it stays).
    /// For names a caller of the registry (a plugin, a script) must never
    /// supply.
    ///
    /// ```
    /// use toolhost::{Error, Tool, ToolRegistry};
    ///
    /// let registry = ToolRegistry::new();
    /// registry.reserve("shell");
    /// let err = registry
    ///     .tool(Tool::new("shell", "Runs anything."), |_, _| "ran")
    ///     .unwrap_err();
    /// assert!(matches!(err, Error::ReservedToolName { .. }));
    /// ```
    pub fn reserve(&self, name: impl Into<String>) {
        lock(&self.shared.entries).reserved.insert(name.into());
    }

    /// Registers a tool and its handler, as
    /// [`StaticSurface::tool`](crate::StaticSurface::tool) does: the
    /// handler takes the arguments (a JSON object, already checked against
    /// the input schema) and the call's [`CallContext`], and returns
    /// anything that converts into a [`ToolOutcome`] — a `Value` (an
    /// object becomes `structuredContent`), a `String`, or a `Result` of
    /// either, whose `Err` declines the call with a message **the model
    /// reads**, unless it is a [`ToolError::failed`]. A panic costs the
    /// call, as always.
    ///
    /// Refuses a name that breaks the MCP rules ([`Error::InvalidToolName`]),
    /// is registered already ([`Error::DuplicateTool`]) or is reserved
    /// ([`Error::ReservedToolName`]). Announces the new tool to every open
    /// session on success.
    pub fn tool<F, O>(&self, tool: Tool, handler: F) -> Result<(), Error>
    where
        F: Fn(&Value, &CallContext) -> O + Send + Sync + 'static,
        O: Into<ToolOutcome>,
    {
        self.insert(tool, untyped(handler))
    }

    /// Registers a typed tool, as [`StaticSurface::typed`](crate::StaticSurface::typed)
    /// does: the handler takes its arguments decoded into `T` and the
    /// call's [`CallContext`]. Refuses names as [`ToolRegistry::tool`].
    pub fn typed<T, R, F>(&self, tool: Tool, handler: F) -> Result<(), Error>
    where
        T: DeserializeOwned + 'static,
        R: Reply,
        F: Fn(T, &CallContext) -> Result<R, ToolError> + Send + Sync + 'static,
    {
        let (tool, run) = typed_tool(tool, handler);
        self.insert(tool, Arc::new(run))
    }

    fn insert(&self, tool: Tool, handler: Handler) -> Result<(), Error> {
        {
            let mut entries = lock(&self.shared.entries);
            if entries.reserved.contains(tool.name()) && tool.validate().is_ok() {
                let err = Error::ReservedToolName {
                    name: tool.name().to_owned(),
                };
                log::warn!(target: LOG_TARGET, "tool registration refused: {err}");
                return Err(err);
            }
            admit(&tool, entries.position(tool.name()).is_some())?;
            entries.tools.push((tool, handler));
        }
        self.shared.links.tools_changed();
        Ok(())
    }

    /// Withdraws the tool `name`: it leaves `tools/list` and calls to it
    /// are refused as unknown from now on (calls already running finish).
    /// Announces the change to every open session. `false` when no such
    /// tool was registered.
    pub fn remove(&self, name: &str) -> bool {
        let removed = {
            let mut entries = lock(&self.shared.entries);
            entries
                .position(name)
                .map(|index| entries.tools.remove(index))
        };
        if removed.is_some() {
            self.shared.links.tools_changed();
        }
        removed.is_some()
    }

    /// How many tools are registered.
    pub fn count(&self) -> usize {
        lock(&self.shared.entries).tools.len()
    }

    /// How many open sessions serve this registry (and hear of its
    /// changes).
    pub fn sessions(&self) -> usize {
        self.shared.links.len()
    }

    /// Tells every session serving the registry that its tool list may
    /// have changed (`notifications/tools/list_changed`): call it after a
    /// [`Tool::visible_when`] predicate changed its mind, which the host
    /// cannot see. Registering and removing announce themselves.
    pub fn refresh(&self) {
        self.shared.links.tools_changed();
    }

    /// Calls the tool `name` in-process, as
    /// [`StaticSurface::call_detached`](crate::StaticSurface::call_detached)
    /// does: no session, no client, never cancelled; a hidden or unknown
    /// tool and refused arguments decline the call, with the reason a
    /// client would read. For tests, and for an application's own use of
    /// its tools.
    pub fn call_detached(&self, name: &str, args: &Value) -> ToolOutcome {
        call_detached(self, name, args)
    }
}

impl ToolSurface for ToolRegistry {
    fn list_tools(&self) -> Vec<Tool> {
        self.shared.links.adopt_serving();
        let tools: Vec<Tool> = lock(&self.shared.entries)
            .tools
            .iter()
            .map(|(tool, _)| tool.clone())
            .collect();
        // Asked outside the lock: a predicate may itself ask the registry.
        tools.into_iter().filter(Tool::is_visible).collect()
    }

    fn lookup(&self, name: &str, _: Token) -> Option<Tool> {
        let tool = {
            let entries = lock(&self.shared.entries);
            entries.position(name).map(|i| entries.tools[i].0.clone())
        };
        tool.filter(Tool::is_visible)
    }

    fn call(&self, name: &str, args: &Value, ctx: &CallContext) -> ToolOutcome {
        // Cloned out so the handler runs with no lock held.
        let handler = {
            let entries = lock(&self.shared.entries);
            entries
                .position(name)
                .map(|i| Arc::clone(&entries.tools[i].1))
        };
        match handler {
            Some(handler) => handler(args, ctx),
            None => ToolOutcome::declined(format!("unknown tool {name:?}")),
        }
    }

    fn on_open(&self, link: SessionLink) {
        self.shared.links.add(link);
    }
}

impl fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let entries = lock(&self.shared.entries);
        f.debug_struct("ToolRegistry")
            .field(
                "tools",
                &entries
                    .tools
                    .iter()
                    .map(|(t, _)| t.name())
                    .collect::<Vec<_>>(),
            )
            .field("reserved", &entries.reserved)
            .finish()
    }
}
