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
use super::session_link::{Links, SessionLink};
use super::tool_error::ToolError;
use super::typed::{typed_tool, Reply};
use crate::error::Error;
use crate::event::LOG_TARGET;
use crate::hash::HostMap;
use crate::model::{Tool, ToolOutcome};

mod builder;
mod layered;
mod registry;
mod session_surface;

pub use builder::SurfaceBuilder;
pub use layered::{LayeredBuilder, LayeredSurface};
pub use registry::ToolRegistry;
pub(crate) use session_surface::Adopting;

/// A set of tools and the code behind them. Handlers are called concurrently
/// from the host's workers, outside every lock of the host.
///
/// Most applications use [`StaticSurface`] (a fixed list, built once) or
/// [`ToolRegistry`] (tools added and removed while sessions run), gate a
/// tool with [`Tool::visible_when`] and a whole surface with
/// [`ToolSurface::visible_when`], and keep a slow tool's calls apart from
/// the host's call slots with [`Tool::runs_in`]. Implement the trait directly when the
/// tool list lives in the application's own state, or [`surface_fn`]
/// with two closures.
///
/// The host keeps three promises whatever the surface does:
///
/// - **Listed right now ⇔ callable.** A call is run only for a tool that
///   [`ToolSurface::list_tools`] lists at that moment and whose
///   [`Tool::is_visible`] says yes; the host asks both itself, so no
///   method of a surface can make an unlisted tool callable.
/// - **Every session hears of list changes.** [`StaticSurface`],
///   [`ToolRegistry`] and [`LayeredSurface`] learn of each session that
///   serves them from [`ToolSurface::on_open`] *and* from every
///   `tools/list` that passes through them, so one wrapped in a surface
///   of the application's own announces its changes even when the
///   wrapper does not forward `on_open`.
/// - **A tool's line goes with the tool.** The calls of a tool given a
///   [`CallLine`](crate::CallLine) ([`Tool::runs_in`], as every tool of an
///   [`McpServerLayer`](crate::McpServerLayer) is) run in that line and
///   never in the host's call slots: the host reads the line from the
///   tool it is about to call, as it reads its visibility, so no surface
///   method carries it and none can be forgotten.
///
/// # Wrapping a surface
///
/// A wrapper lists what it wants listed and forwards calls; nothing else
/// is needed, and nothing it leaves out breaks any promise above. A
/// tool the wrapper does not list is not callable, even though the inner
/// surface would run it; there is no lookup method to forward or forget
/// (the host finds a called tool in `list_tools`, or through a faster
/// lookup only the crate's own surfaces can provide). The tools it lists
/// carry their visibility and their line with them; a wrapper that lists
/// a [`Tool`] of its own making in place of the inner one lists what it
/// made, with neither.
///
/// ```
/// use std::sync::{Arc, atomic::{AtomicBool, Ordering}};
/// use serde_json::Value;
/// use toolhost::{CallContext, Tool, ToolOutcome, ToolRegistry, ToolSurface};
///
/// /// Leaves out the tools whose names start with `admin_` unless `admin` is set.
/// struct AdminOnly {
///     inner: ToolRegistry,
///     admin: Arc<AtomicBool>,
/// }
///
/// impl ToolSurface for AdminOnly {
///     fn list_tools(&self) -> Vec<Tool> {
///         let admin = self.admin.load(Ordering::SeqCst);
///         let mut tools = self.inner.list_tools();
///         tools.retain(|tool| admin || !tool.name().starts_with("admin_"));
///         tools
///     }
///     fn call(&self, name: &str, args: &Value, ctx: &CallContext) -> ToolOutcome {
///         self.inner.call(name, args, ctx) // only ever asked for a listed tool
///     }
/// }
/// # let _ = AdminOnly { inner: ToolRegistry::new(), admin: Arc::default() };
/// ```
///
/// [`ToolSurface::visible_when`] does the same in one line. A lookup that
/// could disagree with the list cannot be written:
///
/// ```compile_fail,E0407
/// # use serde_json::Value;
/// # use toolhost::{CallContext, StaticSurface, Tool, ToolOutcome, ToolSurface};
/// struct Wrapper(StaticSurface);
/// impl ToolSurface for Wrapper {
///     fn list_tools(&self) -> Vec<Tool> { Vec::new() }
///     fn find_tool(&self, name: &str) -> Option<Tool> { None } // no such method
///     fn call(&self, name: &str, args: &Value, ctx: &CallContext) -> ToolOutcome {
///         self.0.call(name, args, ctx)
///     }
/// }
/// ```
pub trait ToolSurface: Send + Sync {
    /// The tools available right now, in a stable order. Asked on every
    /// `tools/list` and (unless the surface is one of the crate's own,
    /// which look a name up directly) on every `tools/call`.
    fn list_tools(&self) -> Vec<Tool>;

    /// Runs the tool `name` with `args` (always a JSON object, checked
    /// against the tool's input schema). Only called for a tool the surface
    /// listed, visible, just before.
    fn call(&self, name: &str, args: &Value, ctx: &CallContext) -> ToolOutcome;

    /// Called once for each session the host opens on this surface, with
    /// that session's [`SessionLink`]. A surface whose tools change on
    /// their own keeps the link and calls [`SessionLink::tools_changed`]
    /// when they do, so that the session's clients hear of it without
    /// [`ToolSession::notify_tools_changed`](crate::ToolSession::notify_tools_changed).
    /// The default does nothing; a wrapper need not forward it (see the
    /// trait's docs).
    fn on_open(&self, link: SessionLink) {
        let _ = link;
    }

    /// This surface with only the tools `keep` says yes to, asked on every
    /// request: a tool it says no to is neither listed nor callable. For a
    /// whole surface that comes and goes (`|_| flag.load(…)`) or a rule
    /// over names; one tool is gated with [`Tool::visible_when`].
    ///
    /// ```
    /// use std::sync::{Arc, atomic::{AtomicBool, Ordering}};
    /// use toolhost::{StaticSurface, Tool, ToolSurface};
    ///
    /// let unlocked = Arc::new(AtomicBool::new(false));
    /// let flag = Arc::clone(&unlocked);
    /// let surface = StaticSurface::new()
    ///     .tool(Tool::new("status", "Reports the status."), |_, _| "ok")?
    ///     .tool(Tool::new("admin_reset", "Resets."), |_, _| "reset")?
    ///     .visible_when(move |tool| flag.load(Ordering::SeqCst) || !tool.name().starts_with("admin_"));
    /// assert_eq!(surface.list_tools().len(), 1);
    /// unlocked.store(true, Ordering::SeqCst);
    /// assert_eq!(surface.list_tools().len(), 2);
    /// # Ok::<(), toolhost::Error>(())
    /// ```
    fn visible_when<P>(self, keep: P) -> Filtered<Self, P>
    where
        Self: Sized,
        P: Fn(&Tool) -> bool + Send + Sync,
    {
        Filtered { inner: self, keep }
    }

    /// The tool `name` if the surface lists it now. Only the crate's own
    /// surfaces can override the default (the token cannot be named
    /// outside it), which looks in `list_tools`: a lookup that disagrees
    /// with the list is impossible to write.
    #[doc(hidden)]
    fn lookup(&self, name: &str, _: sealed::Token) -> Option<Tool> {
        self.list_tools()
            .into_iter()
            .find(|tool| tool.name() == name)
    }
}

/// What keeps [`ToolSurface::lookup`] the crate's own.
pub(crate) mod sealed {
    /// Made only inside the crate.
    #[derive(Clone, Copy, Debug)]
    pub struct Token(pub(super) ());
}

/// The tool `name` as `surface` lists it now, visible; what the host
/// calls. `None` for an unlisted or hidden tool.
pub(crate) fn find_tool(surface: &dyn ToolSurface, name: &str) -> Option<Tool> {
    surface
        .lookup(name, sealed::Token(()))
        .filter(Tool::is_visible)
}

/// `surface`'s visible tools now; what the host lists.
pub(crate) fn visible_tools(surface: &dyn ToolSurface) -> Vec<Tool> {
    let mut tools = surface.list_tools();
    tools.retain(Tool::is_visible);
    tools
}

/// Calls the tool `name` in-process, as a session would but without one
/// (see [`StaticSurface::call_detached`]).
fn call_detached(surface: &dyn ToolSurface, name: &str, args: &Value) -> ToolOutcome {
    let Some(tool) = find_tool(surface, name) else {
        return ToolOutcome::declined(format!("unknown tool {name:?}"));
    };
    if let Err(reason) = tool.check_arguments(args) {
        return ToolOutcome::declined(reason);
    }
    surface
        .call(name, args, &CallContext::detached())
        .why_cancelled(|| None)
}

impl<S: ToolSurface + ?Sized> ToolSurface for Arc<S> {
    fn list_tools(&self) -> Vec<Tool> {
        (**self).list_tools()
    }
    fn call(&self, name: &str, args: &Value, ctx: &CallContext) -> ToolOutcome {
        (**self).call(name, args, ctx)
    }
    fn on_open(&self, link: SessionLink) {
        (**self).on_open(link);
    }
    fn lookup(&self, name: &str, token: sealed::Token) -> Option<Tool> {
        (**self).lookup(name, token)
    }
}

impl<S: ToolSurface + ?Sized> ToolSurface for Box<S> {
    fn list_tools(&self) -> Vec<Tool> {
        (**self).list_tools()
    }
    fn call(&self, name: &str, args: &Value, ctx: &CallContext) -> ToolOutcome {
        (**self).call(name, args, ctx)
    }
    fn on_open(&self, link: SessionLink) {
        (**self).on_open(link);
    }
    fn lookup(&self, name: &str, token: sealed::Token) -> Option<Tool> {
        (**self).lookup(name, token)
    }
}

/// A surface with only the tools a predicate says yes to; made by
/// [`ToolSurface::visible_when`].
pub struct Filtered<S, P> {
    inner: S,
    keep: P,
}

impl<S: fmt::Debug, P> fmt::Debug for Filtered<S, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Filtered")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl<S, P> ToolSurface for Filtered<S, P>
where
    S: ToolSurface,
    P: Fn(&Tool) -> bool + Send + Sync,
{
    fn list_tools(&self) -> Vec<Tool> {
        let mut tools = self.inner.list_tools();
        tools.retain(|tool| (self.keep)(tool));
        tools
    }
    fn call(&self, name: &str, args: &Value, ctx: &CallContext) -> ToolOutcome {
        self.inner.call(name, args, ctx)
    }
    fn on_open(&self, link: SessionLink) {
        self.inner.on_open(link);
    }
    fn lookup(&self, name: &str, token: sealed::Token) -> Option<Tool> {
        self.inner
            .lookup(name, token)
            .filter(|tool| (self.keep)(tool))
    }
}

type Handler = Arc<dyn Fn(&Value, &CallContext) -> ToolOutcome + Send + Sync>;

/// The handler of an untyped tool, as every surface keeps it: whatever it
/// returns converts into an outcome.
fn untyped<F, O>(handler: F) -> Handler
where
    F: Fn(&Value, &CallContext) -> O + Send + Sync + 'static,
    O: Into<ToolOutcome>,
{
    Arc::new(move |args, ctx| handler(args, ctx).into())
}

/// A fixed list of tools, each with its handler.
///
/// Build it with [`StaticSurface::builder`], whose chain needs one `?` at
/// its end, or add tools one at a time with [`StaticSurface::tool`] and
/// [`StaticSurface::typed`], which answer each registration. A tool
/// gated with [`Tool::visible_when`] is listed and callable only while
/// its predicate says yes; after it changes its mind,
/// [`StaticSurface::refresh`] tells every session serving the surface.
///
#[cfg_attr(not(doctest), doc = include_str!("../doc/static_surface.md"))]
#[derive(Clone, Default)]
pub struct StaticSurface {
    tools: Vec<(Tool, Handler)>,
    index: HostMap<String, usize>,
    /// The sessions serving this surface (or a clone of it), for
    /// [`StaticSurface::refresh`].
    links: Arc<Links>,
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
    /// an outcome, a `String`, a [`serde_json::Value`] (an object becomes
    /// `structuredContent`), or a `Result` of either, so that `?` works —
    /// an error that implements `Display` declines the call and **the
    /// model reads its message**; a [`ToolError::failed`] keeps it from
    /// the model (see [`ToolError`]).
    ///
    /// ```
    /// use toolhost::{StaticSurface, Tool};
    ///
    /// let surface = StaticSurface::new().tool(
    ///     Tool::new("read_motd", "Reads the message of the day."),
    ///     |_args, _ctx| std::fs::read_to_string("/etc/motd"), // Err declines; the model reads it
    /// )?;
    /// # let _ = surface;
    /// # Ok::<(), toolhost::Error>(())
    /// ```
    pub fn tool<F, O>(mut self, tool: Tool, handler: F) -> Result<StaticSurface, Error>
    where
        F: Fn(&Value, &CallContext) -> O + Send + Sync + 'static,
        O: Into<ToolOutcome>,
    {
        self.insert(tool, untyped(handler))?;
        Ok(self)
    }

    /// Adds a typed tool: `handler` takes the arguments decoded into `T`
    /// and returns a [`Reply`] (any `Serialize` value, or a
    /// [`ToolOutcome`]) or a [`ToolError`], so that `?` works — `?` on an
    /// error that implements `Display` declines the call and **the model
    /// reads its message**; `.map_err(ToolError::failed)?` keeps the
    /// message from the model (see [`ToolError`]).
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

    /// How many tools are registered, visible or not.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Tells every session serving this surface, or a clone of it, that
    /// its tool list may have changed (`notifications/tools/list_changed`):
    /// call it after a [`Tool::visible_when`] predicate changed its mind,
    /// which the host cannot see. Keep a clone to call it on; clones share
    /// their sessions.
    pub fn refresh(&self) {
        self.links.tools_changed();
    }

    /// Calls the tool `name` in-process, as a session would but without
    /// one: a hidden or unknown tool is refused, the arguments are checked
    /// against the input schema, then the handler runs with a context that
    /// has no client (it cannot ask, its progress goes nowhere, it is
    /// never cancelled). For tests, and for an application's own use of
    /// its tools. A refusal declines the call, with the reason a client
    /// would read.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolhost::{OutcomeKind, StaticSurface, Tool};
    ///
    /// let surface = StaticSurface::new()
    ///     .tool(Tool::new("hidden", "Never listed.").visible_when(|| false), |_, _| "ran")?;
    /// assert_eq!(surface.call_detached("hidden", &json!({})).kind(), OutcomeKind::Declined);
    /// # Ok::<(), toolhost::Error>(())
    /// ```
    pub fn call_detached(&self, name: &str, args: &Value) -> ToolOutcome {
        call_detached(self, name, args)
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
        self.links.adopt_serving();
        self.tools
            .iter()
            .filter(|(tool, _)| tool.is_visible())
            .map(|(tool, _)| tool.clone())
            .collect()
    }

    fn call(&self, name: &str, args: &Value, ctx: &CallContext) -> ToolOutcome {
        match self.index.get(name) {
            Some(&i) => (self.tools[i].1)(args, ctx),
            None => ToolOutcome::declined(format!("unknown tool {name:?}")),
        }
    }

    fn on_open(&self, link: SessionLink) {
        self.links.add(link);
    }

    fn lookup(&self, name: &str, _: sealed::Token) -> Option<Tool> {
        self.index
            .get(name)
            .map(|&i| &self.tools[i].0)
            .filter(|tool| tool.is_visible())
            .cloned()
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
    fn static_lookup_finds_registered_visible_tools_only() {
        let surface = StaticSurface::new()
            .tool(Tool::new("a", "d"), noop)
            .unwrap()
            .tool(Tool::new("hidden", "d").visible_when(|| false), noop)
            .unwrap();
        assert_eq!(
            find_tool(&surface, "a").map(|t| t.name().to_owned()),
            Some("a".into())
        );
        assert!(find_tool(&surface, "b").is_none());
        assert!(find_tool(&surface, "hidden").is_none());
        assert_eq!(surface.list_tools().len(), 1);
    }
}
