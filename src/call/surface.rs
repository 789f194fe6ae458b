//! The application's side of a session: which tools exist right now, and
//! what running one does.
//!
//! The host asks the surface on every request, never caching its answers, so
//! an application can add or withdraw tools mid-turn by changing what the
//! surface returns. A call for a tool the surface does not list at that
//! moment never reaches [`ToolSurface::call`].

use std::fmt;
use std::sync::Arc;

use serde_core::de::DeserializeOwned;
use serde_json::Value;

use super::context::CallContext;
use super::fallible::ToolError;
use super::line::CallLine;
use super::link::SessionLink;
use super::typed::{typed_tool, Reply};
use crate::error::Error;
use crate::event::LOG_TARGET;
use crate::hash::HostMap;
use crate::model::{Tool, ToolOutcome};

mod builder;
mod layered;
mod registry;

pub use builder::SurfaceBuilder;
pub use layered::{LayeredBuilder, LayeredSurface};
pub use registry::ToolRegistry;

/// A set of tools and the code behind them. Handlers are called concurrently
/// from the host's workers, outside every lock of the host.
///
/// Most applications use [`StaticSurface`] (a fixed list) or
/// [`surface_fn`] (two closures). Implement the trait directly when the tool
/// list lives in the application's own state.
pub trait ToolSurface: Send + Sync {
    /// The tools available right now, in a stable order.
    fn list_tools(&self) -> Vec<Tool>;

    /// The tool named `name`, if it is available right now. The default looks
    /// it up in [`ToolSurface::list_tools`]; override it when a direct lookup
    /// is cheaper.
    fn find_tool(&self, name: &str) -> Option<Tool> {
        self.list_tools()
            .into_iter()
            .find(|tool| tool.name() == name)
    }

    /// Runs the tool `name` with `args` (always a JSON object). Only called for
    /// a name that [`ToolSurface::find_tool`] returned just before.
    fn call(&self, name: &str, args: &Value, ctx: &CallContext) -> ToolOutcome;

    /// The line the calls of tool `name` wait in and are bounded by, when
    /// they have one of their own ([`CallLine`]): then they never take one
    /// of the host's call slots, nor wait in its queue. The default is
    /// `None`: the host's slots. Asked once per call, before it runs.
    fn call_line(&self, name: &str) -> Option<CallLine> {
        let _ = name;
        None
    }

    /// Called once for each session the host opens on this surface, with
    /// that session's [`SessionLink`]. A surface whose tools change on
    /// their own keeps the link and calls [`SessionLink::tools_changed`]
    /// when they do, so that the session's clients hear of it without
    /// [`ToolSession::notify_tools_changed`](crate::ToolSession::notify_tools_changed).
    /// The default does nothing.
    fn on_open(&self, link: SessionLink) {
        let _ = link;
    }
}

impl<S: ToolSurface + ?Sized> ToolSurface for Arc<S> {
    fn list_tools(&self) -> Vec<Tool> {
        (**self).list_tools()
    }
    fn find_tool(&self, name: &str) -> Option<Tool> {
        (**self).find_tool(name)
    }
    fn call(&self, name: &str, args: &Value, ctx: &CallContext) -> ToolOutcome {
        (**self).call(name, args, ctx)
    }
    fn call_line(&self, name: &str) -> Option<CallLine> {
        (**self).call_line(name)
    }
    fn on_open(&self, link: SessionLink) {
        (**self).on_open(link);
    }
}

impl<S: ToolSurface + ?Sized> ToolSurface for Box<S> {
    fn list_tools(&self) -> Vec<Tool> {
        (**self).list_tools()
    }
    fn find_tool(&self, name: &str) -> Option<Tool> {
        (**self).find_tool(name)
    }
    fn call(&self, name: &str, args: &Value, ctx: &CallContext) -> ToolOutcome {
        (**self).call(name, args, ctx)
    }
    fn call_line(&self, name: &str) -> Option<CallLine> {
        (**self).call_line(name)
    }
    fn on_open(&self, link: SessionLink) {
        (**self).on_open(link);
    }
}

type Handler = Arc<dyn Fn(&Value, &CallContext) -> ToolOutcome + Send + Sync>;

/// A fixed list of tools, each with its handler.
///
/// Build it with [`StaticSurface::builder`], whose chain needs one `?` at
/// its end, or add tools one at a time with [`StaticSurface::tool`] and
/// [`StaticSurface::typed`], which answer each registration.
///
#[cfg_attr(not(doctest), doc = include_str!("../doc/static_surface.md"))]
#[derive(Clone, Default)]
pub struct StaticSurface {
    tools: Vec<(Tool, Handler)>,
    index: HostMap<String, usize>,
}

impl StaticSurface {
    /// An empty surface.
    pub fn new() -> StaticSurface {
        StaticSurface::default()
    }

    /// A builder whose chain of tools needs one `?`, at
    /// [`SurfaceBuilder::build`].
    pub fn builder() -> SurfaceBuilder {
        SurfaceBuilder::default()
    }

    /// Adds a tool and its handler. Refuses a tool whose name or schema
    /// breaks the MCP rules, and a name already registered (the refusal is
    /// also logged, at `warn`).
    ///
    /// The handler returns anything that converts into a [`ToolOutcome`]:
    /// an outcome, a `String`, or a `Result` of either, so that `?` works —
    /// an error that implements `Display` declines the call with its
    /// message, and a [`ToolError`] declines or fails, as it says.
    ///
    /// ```
    /// use toolhost::{StaticSurface, Tool};
    ///
    /// let surface = StaticSurface::new().tool(
    ///     Tool::new("read_motd", "Reads the message of the day."),
    ///     |_args, _ctx| std::fs::read_to_string("/etc/motd"), // Err declines with its message
    /// )?;
    /// # let _ = surface;
    /// # Ok::<(), toolhost::Error>(())
    /// ```
    pub fn tool<F, O>(mut self, tool: Tool, handler: F) -> Result<StaticSurface, Error>
    where
        F: Fn(&Value, &CallContext) -> O + Send + Sync + 'static,
        O: Into<ToolOutcome>,
    {
        self.insert(tool, Arc::new(move |args, ctx| handler(args, ctx).into()))?;
        Ok(self)
    }

    /// Adds a typed tool: `handler` takes the arguments decoded into `T`
    /// and returns a [`Reply`] (any `Serialize` value, or a
    /// [`ToolOutcome`]) or a [`ToolError`], so that `?` works.
    ///
    /// A call whose arguments do not decode into `T` is refused before it
    /// is admitted, exactly like one that breaks the input schema: the
    /// model reads where and why (`/limit: invalid type: string "x",
    /// expected u32`) and the handler never runs. `tool` still needs an
    /// input schema for the model to call it well: write one with
    /// [`Tool::input_schema`], or derive it from `T` with
    /// `Tool::input_schema_for` (feature `schemars`).
    ///
    #[cfg_attr(not(doctest), doc = include_str!("../doc/static_surface_typed.md"))]
    pub fn typed<T, R, F>(mut self, tool: Tool, handler: F) -> Result<StaticSurface, Error>
    where
        T: DeserializeOwned + 'static,
        R: Reply,
        F: Fn(T, &CallContext) -> Result<R, ToolError> + Send + Sync + 'static,
    {
        let (tool, run) = typed_tool(tool, handler);
        self.insert(tool, Arc::new(run))?;
        Ok(self)
    }

    /// Registers a tool, or says why not (to the log as well: a refusal
    /// must not vanish in an ignored `Result`).
    fn insert(&mut self, tool: Tool, handler: Handler) -> Result<(), Error> {
        admit(&tool, self.index.contains_key(tool.name()))?;
        self.index.insert(tool.name().to_owned(), self.tools.len());
        self.tools.push((tool, handler));
        Ok(())
    }

    /// How many tools are registered.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

impl fmt::Debug for StaticSurface {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.tools.iter().map(|(tool, _)| tool.name()))
            .finish()
    }
}

impl ToolSurface for StaticSurface {
    fn list_tools(&self) -> Vec<Tool> {
        self.tools.iter().map(|(tool, _)| tool.clone()).collect()
    }

    fn find_tool(&self, name: &str) -> Option<Tool> {
        self.index.get(name).map(|&i| self.tools[i].0.clone())
    }

    fn call(&self, name: &str, args: &Value, ctx: &CallContext) -> ToolOutcome {
        match self.index.get(name) {
            Some(&i) => (self.tools[i].1)(args, ctx),
            None => ToolOutcome::declined(format!("unknown tool {name:?}")),
        }
    }
}

/// Whether `tool` may be registered where `taken` says whether its name
/// already is; a refusal is logged (at `warn`) as well, since it must not
/// vanish in an ignored `Result`.
pub(crate) fn admit(tool: &Tool, taken: bool) -> Result<(), Error> {
    let refused = match tool.validate() {
        Err(err) => err,
        Ok(()) if taken => Error::DuplicateTool {
            name: tool.name().to_owned(),
        },
        Ok(()) => return Ok(()),
    };
    log::warn!(target: LOG_TARGET, "tool registration refused: {refused}");
    Err(refused)
}

/// A surface made of two closures: one lists the tools available now, the
/// other runs a call. For tool lists that live in application state.
///
/// ```
/// use std::sync::{Arc, atomic::{AtomicBool, Ordering}};
/// use toolhost::{surface_fn, Tool, ToolOutcome};
///
/// let armed = Arc::new(AtomicBool::new(false));
/// let flag = armed.clone();
/// let surface = surface_fn(
///     move || {
///         let mut tools = vec![Tool::new("status", "Reports the status.")];
///         if flag.load(Ordering::SeqCst) {
///             tools.push(Tool::new("launch", "Launches."));
///         }
///         tools
///     },
///     |name, _args, _ctx| ToolOutcome::text(format!("{name} ran")),
/// );
/// # let _ = surface;
/// ```
pub fn surface_fn<L, C, O>(list: L, call: C) -> FnSurface<L, C>
where
    L: Fn() -> Vec<Tool> + Send + Sync,
    C: Fn(&str, &Value, &CallContext) -> O + Send + Sync,
    O: Into<ToolOutcome>,
{
    FnSurface { list, call }
}

/// The surface built by [`surface_fn`].
pub struct FnSurface<L, C> {
    list: L,
    call: C,
}

impl<L, C> fmt::Debug for FnSurface<L, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FnSurface")
    }
}

impl<L, C, O> ToolSurface for FnSurface<L, C>
where
    L: Fn() -> Vec<Tool> + Send + Sync,
    C: Fn(&str, &Value, &CallContext) -> O + Send + Sync,
    O: Into<ToolOutcome>,
{
    fn list_tools(&self) -> Vec<Tool> {
        (self.list)()
    }

    fn call(&self, name: &str, args: &Value, ctx: &CallContext) -> ToolOutcome {
        (self.call)(name, args, ctx).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noop(_: &Value, _: &CallContext) -> ToolOutcome {
        ToolOutcome::text("")
    }

    #[test]
    fn a_duplicate_name_is_refused_at_registration() {
        let err = StaticSurface::new()
            .tool(Tool::new("a", "first"), noop)
            .and_then(|s| s.tool(Tool::new("a", "second"), noop))
            .unwrap_err();
        assert!(matches!(err, Error::DuplicateTool { ref name } if name == "a"));
    }

    #[test]
    fn an_invalid_name_is_refused_at_registration() {
        let err = StaticSurface::new()
            .tool(Tool::new("bad name", "d"), noop)
            .unwrap_err();
        assert!(err.to_string().contains("bad name"), "{err}");
    }

    #[test]
    fn static_lookup_finds_registered_tools_only() {
        let surface = StaticSurface::new()
            .tool(Tool::new("a", "d"), noop)
            .unwrap();
        assert_eq!(
            surface.find_tool("a").map(|t| t.name().to_owned()),
            Some("a".into())
        );
        assert!(surface.find_tool("b").is_none());
    }
}
