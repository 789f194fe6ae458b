//! One surface made of several, in order of precedence.
//!
//! The first layer that lists a name owns it, in `tools/list` and in
//! dispatch alike, so a tool further down — a bridged server's, a
//! plugin's — can never take a call meant for one above it. A layer may
//! also reserve names: no later layer may supply them even while the
//! reserving layer does not list them. Every hidden tool is reported
//! through the event hook ([`Event::ToolShadowed`]) once each time the
//! set of hidden tools changes, not on every `tools/list`.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::sync::Mutex;

use serde_json::Value;

use super::sealed::Token;
use super::{call_detached, find_tool, visible_tools, ToolSurface};
use crate::call::context::CallContext;
use crate::call::session_link::{Links, SessionLink};
use crate::event::Event;
use crate::model::{Tool, ToolOutcome};
use crate::sync::lock;

/// A surface made of layers in order: the first layer that lists a name
/// owns it; a tool of a later layer with that name is hidden and reported
/// ([`Event::ToolShadowed`]).
///
/// ```
/// use serde_json::json;
/// use toolhost::{LayeredSurface, OutcomeKind, StaticSurface, Tool, ToolRegistry, ToolSurface};
///
/// let app = ToolRegistry::new();
/// app.tool(Tool::new("search", "Searches the app."), |_, _| "app")?;
/// let plugin = StaticSurface::new()
///     .tool(Tool::new("search", "Searches the web."), |_, _| "plugin")?
///     .tool(Tool::new("deploy", "Deploys."), |_, _| "plugin deployed")?
///     .tool(Tool::new("weather", "Tells the weather."), |_, _| "sunny")?;
///
/// let surface = LayeredSurface::builder()
///     .layer("app", app)
///     .reserve(["deploy"]) // the app's name, even while it lists no such tool
///     .layer("plugin", plugin)
///     .build();
/// let names: Vec<String> = surface.list_tools().iter().map(|t| t.name().to_owned()).collect();
/// assert_eq!(names, ["search", "weather"]);
/// assert_eq!(surface.call_detached("search", &json!({})).kind(), OutcomeKind::Success);
/// assert_eq!(surface.call_detached("deploy", &json!({})).kind(), OutcomeKind::Declined); // reserved: unknown
/// # Ok::<(), toolhost::Error>(())
/// ```
pub struct LayeredSurface {
    layers: Vec<Layer>,
    /// Reserved names, by the index of the layer that reserved them.
    reserved: HashMap<String, usize>,
    /// The hidden tools last reported: (layer, tool, owner).
    reported: Mutex<BTreeSet<(String, String, String)>>,
    links: Links,
}

struct Layer {
    name: String,
    surface: Box<dyn ToolSurface>,
}

/// Builds a [`LayeredSurface`]; made by [`LayeredSurface::builder`].
#[derive(Default)]
pub struct LayeredBuilder {
    layers: Vec<Layer>,
    reserved: HashMap<String, usize>,
}

impl LayeredBuilder {
    /// Adds a layer below those added before; `name` is how events name it.
    #[must_use]
    pub fn layer(mut self, name: impl Into<String>, surface: impl ToolSurface + 'static) -> Self {
        self.layers.push(Layer {
            name: name.into(),
            surface: Box::new(surface),
        });
        self
    }

    /// Reserves `names` for the layer added last (or, before any layer,
    /// for the first): no later layer may supply them, whether or not
    /// that layer lists them right now. A name reserved twice stays with
    /// the earlier layer.
    #[must_use]
    pub fn reserve<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let owner = self.layers.len().saturating_sub(1);
        for name in names {
            self.reserved.entry(name.into()).or_insert(owner);
        }
        self
    }

    /// The surface.
    pub fn build(self) -> LayeredSurface {
        LayeredSurface {
            layers: self.layers,
            reserved: self.reserved,
            reported: Mutex::default(),
            links: Links::default(),
        }
    }
}

impl LayeredSurface {
    /// A builder; add layers in order of precedence, first the one whose
    /// tools win.
    pub fn builder() -> LayeredBuilder {
        LayeredBuilder::default()
    }

    /// The layers' names, in order.
    pub fn layer_names(&self) -> Vec<&str> {
        self.layers
            .iter()
            .map(|layer| layer.name.as_str())
            .collect()
    }

    /// Whether layer `index` may supply `name`: no layer before it
    /// reserved the name.
    fn may_supply(&self, index: usize, name: &str) -> bool {
        self.reserved.get(name).is_none_or(|&owner| owner >= index)
    }

    /// The layer that owns `name` and its tool: the first that may supply
    /// it and lists it, visible, now.
    fn owner(&self, name: &str) -> Option<(&Layer, Tool)> {
        self.layers
            .iter()
            .enumerate()
            .filter(|&(index, _)| self.may_supply(index, name))
            .find_map(|(_, layer)| find_tool(&*layer.surface, name).map(|tool| (layer, tool)))
    }

    /// Calls the tool `name` in-process, as
    /// [`StaticSurface::call_detached`](crate::StaticSurface::call_detached)
    /// does, through the layer that owns the name.
    pub fn call_detached(&self, name: &str, args: &Value) -> ToolOutcome {
        call_detached(self, name, args)
    }

    /// Reports the hidden tools that were not hidden at the last report,
    /// to the hook of an open session; until one is open, nothing is
    /// reported (nor counted as reported).
    fn report_shadows(&self, hidden: BTreeSet<(String, String, String)>) {
        let Some(link) = self.links.first_open() else {
            return;
        };
        let fresh: Vec<_> = {
            let mut reported = lock(&self.reported);
            if *reported == hidden {
                return;
            }
            let fresh = hidden.difference(&reported).cloned().collect();
            *reported = hidden;
            fresh
        };
        for (layer, tool, owner) in fresh {
            link.report(Event::ToolShadowed { layer, tool, owner });
        }
    }
}

impl ToolSurface for LayeredSurface {
    fn list_tools(&self) -> Vec<Tool> {
        self.links.adopt_serving();
        let mut owners: HashMap<String, usize> = HashMap::new();
        let mut tools = Vec::new();
        let mut hidden = BTreeSet::new();
        for (index, layer) in self.layers.iter().enumerate() {
            // A tool its predicate hides is not listed, so it owns no
            // name: one further down may have it.
            for tool in visible_tools(&*layer.surface) {
                let owner = match self.reserved.get(tool.name()) {
                    Some(&owner) if owner < index => Some(owner),
                    _ => owners.get(tool.name()).copied(),
                };
                match owner {
                    Some(owner) => {
                        hidden.insert((
                            layer.name.clone(),
                            tool.name().to_owned(),
                            self.layers[owner].name.clone(),
                        ));
                    }
                    None => {
                        owners.insert(tool.name().to_owned(), index);
                        tools.push(tool);
                    }
                }
            }
        }
        self.report_shadows(hidden);
        tools
    }

    fn lookup(&self, name: &str, _: Token) -> Option<Tool> {
        self.owner(name).map(|(_, tool)| tool)
    }

    fn call(&self, name: &str, args: &Value, ctx: &CallContext) -> ToolOutcome {
        match self.owner(name) {
            Some((layer, _)) => layer.surface.call(name, args, ctx),
            None => ToolOutcome::declined(format!("unknown tool {name:?}")),
        }
    }

    fn on_open(&self, link: SessionLink) {
        for layer in &self.layers {
            layer.surface.on_open(link.clone());
        }
        self.links.add(link);
    }
}

impl fmt::Debug for LayeredSurface {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LayeredSurface")
            .field("layers", &self.layer_names())
            .field("reserved", &self.reserved)
            .finish_non_exhaustive()
    }
}
