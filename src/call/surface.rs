//! The application's side of a session: which tools exist right now, and
//! what running one does.
//!
//! The host asks the surface on every request, never caching its answers, so
//! an application can add or withdraw tools mid-turn by changing what the
//! surface returns. A call for a tool the surface does not list at that
//! moment never reaches [`ToolSurface::call`].

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use super::context::CallContext;
use crate::error::Error;
use crate::model::{Tool, ToolOutcome};

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
}

type Handler = Arc<dyn Fn(&Value, &CallContext) -> ToolOutcome + Send + Sync>;

/// A fixed list of tools, each with its handler.
///
/// ```
/// use serde_json::json;
/// use toolhost::{StaticSurface, Tool, ToolOutcome};
///
/// let surface = StaticSurface::new()
///     .tool(Tool::new("ping", "Answers pong."), |_args, _ctx| ToolOutcome::text("pong"))?
///     .tool(
///         Tool::new("double", "Doubles n.").input_schema(json!({
///             "type": "object",
///             "properties": {"n": {"type": "number"}},
///             "required": ["n"],
///         })),
///         |args, _ctx| ToolOutcome::json(json!({"n": args["n"].as_f64().unwrap_or(0.0) * 2.0})),
///     )?;
/// assert_eq!(surface.len(), 2);
/// # Ok::<(), toolhost::Error>(())
/// ```
#[derive(Clone, Default)]
pub struct StaticSurface {
    tools: Vec<(Tool, Handler)>,
    index: HashMap<String, usize>,
}

impl StaticSurface {
    /// An empty surface.
    pub fn new() -> StaticSurface {
        StaticSurface::default()
    }

    /// Adds a tool and its handler. Refuses a tool whose name or schema
    /// breaks the MCP rules, and a name already registered.
    pub fn tool<F>(mut self, tool: Tool, handler: F) -> Result<StaticSurface, Error>
    where
        F: Fn(&Value, &CallContext) -> ToolOutcome + Send + Sync + 'static,
    {
        tool.validate()?;
        if self.index.contains_key(tool.name()) {
            return Err(Error::DuplicateTool {
                name: tool.name().to_owned(),
            });
        }
        self.index.insert(tool.name().to_owned(), self.tools.len());
        self.tools.push((tool, Arc::new(handler)));
        Ok(self)
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
pub fn surface_fn<L, C>(list: L, call: C) -> FnSurface<L, C>
where
    L: Fn() -> Vec<Tool> + Send + Sync,
    C: Fn(&str, &Value, &CallContext) -> ToolOutcome + Send + Sync,
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

impl<L, C> ToolSurface for FnSurface<L, C>
where
    L: Fn() -> Vec<Tool> + Send + Sync,
    C: Fn(&str, &Value, &CallContext) -> ToolOutcome + Send + Sync,
{
    fn list_tools(&self) -> Vec<Tool> {
        (self.list)()
    }

    fn call(&self, name: &str, args: &Value, ctx: &CallContext) -> ToolOutcome {
        (self.call)(name, args, ctx)
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
