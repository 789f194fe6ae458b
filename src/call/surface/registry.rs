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

use super::{admit, Handler, ToolSurface};
use crate::call::context::CallContext;
use crate::call::fallible::ToolError;
use crate::call::link::{Links, SessionLink};
use crate::call::typed::{typed_tool, Reply};
use crate::error::Error;
use crate::event::LOG_TARGET;
use crate::model::{Tool, ToolOutcome};
use crate::sync::lock;

/// Tools registered and withdrawn while sessions serve them: every open
/// session's clients get `notifications/tools/list_changed` (on the `GET`
/// stream of the stateful revisions and on 2026-07-28
/// `subscriptions/listen`) after each change, with no call to
/// [`ToolSession::notify_tools_changed`](crate::ToolSession::notify_tools_changed).
///
/// Handlers of the shape `Fn(&Value) -> Result<T, E>` register as they
/// are — `T` any [`Reply`] (a JSON object becomes `structuredContent`),
/// `E` anything that displays (the call is *declined*: the model reads
/// the message) or a [`ToolError`]. Names are refused when they break the
/// MCP rules, are registered already, or are [reserved](ToolRegistry::reserve).
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
/// registry.register(Tool::new("word_count", "Counts words."), word_count)?; // announced
/// assert_eq!(registry.count(), 1);
/// let outcome = registry.call("word_count", &json!({"text": "a b c"}));
/// assert_eq!(outcome.structured_content(), Some(&json!({"words": 3})));
///
/// let mut client = session.client()?;
/// assert_eq!(client.call_tool("word_count", json!({"text": "hi"}))?.structured_content, Some(json!({"words": 1})));
/// assert!(registry.unregister("word_count"));
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
    /// use toolhost::{Error, Tool, ToolOutcome, ToolRegistry};
    ///
    /// let registry = ToolRegistry::new();
    /// registry.reserve("shell");
    /// let err = registry
    ///     .register(Tool::new("shell", "Runs anything."), |_: &serde_json::Value| Ok::<_, String>("ran"))
    ///     .unwrap_err();
    /// assert!(matches!(err, Error::ReservedToolName { .. }));
    /// ```
    pub fn reserve(&self, name: impl Into<String>) {
        lock(&self.shared.entries).reserved.insert(name.into());
    }

    /// Registers a tool whose handler takes the arguments (a JSON object,
    /// already checked against the input schema) and returns `Ok` with
    /// any [`Reply`] — a JSON object is sent as `structuredContent` — or
    /// `Err` with any error that displays (the call is declined and the
    /// model reads the message) or a [`ToolError`]. A panic costs the
    /// call, as always.
    ///
    /// Refuses a name that breaks the MCP rules ([`Error::InvalidToolName`]),
    /// is registered already ([`Error::DuplicateTool`]) or is reserved
    /// ([`Error::ReservedToolName`]). Announces the new tool to every open
    /// session on success.
    pub fn register<F, T, E>(&self, tool: Tool, handler: F) -> Result<(), Error>
    where
        F: Fn(&Value) -> Result<T, E> + Send + Sync + 'static,
        T: Reply,
        E: Into<ToolError>,
    {
        let name = tool.name().to_owned();
        self.insert(
            tool,
            Arc::new(move |args, _ctx| match handler(args) {
                Ok(reply) => reply.into_outcome(&name),
                Err(err) => ToolOutcome::from(err.into()),
            }),
        )
    }

    /// Registers a typed tool, as [`StaticSurface::typed`](crate::StaticSurface::typed)
    /// does: the handler takes its arguments decoded into `T` and the
    /// call's [`CallContext`]. Refuses names as [`ToolRegistry::register`].
    pub fn register_typed<T, R, F>(&self, tool: Tool, handler: F) -> Result<(), Error>
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
    pub fn unregister(&self, name: &str) -> bool {
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

    /// Calls the tool `name` in-process, as a session would but without
    /// one: the arguments are checked against the input schema, then the
    /// handler runs with a context that has no client (it cannot ask,
    /// its progress goes nowhere, it is never cancelled). For tests, and
    /// for an application's own use of its tools. An unknown name or
    /// refused arguments decline the call, with the reason a client
    /// would read.
    pub fn call(&self, name: &str, args: &Value) -> ToolOutcome {
        let Some(tool) = self.find_tool(name) else {
            return ToolOutcome::declined(format!("unknown tool {name:?}"));
        };
        if let Err(reason) = tool.check_arguments(args) {
            return ToolOutcome::declined(reason);
        }
        ToolSurface::call(self, name, args, &CallContext::detached())
    }
}

impl ToolSurface for ToolRegistry {
    fn list_tools(&self) -> Vec<Tool> {
        lock(&self.shared.entries)
            .tools
            .iter()
            .map(|(tool, _)| tool.clone())
            .collect()
    }

    fn find_tool(&self, name: &str) -> Option<Tool> {
        let entries = lock(&self.shared.entries);
        entries.position(name).map(|i| entries.tools[i].0.clone())
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
