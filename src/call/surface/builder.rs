//! A chain of tools with one `?` at its end.
//!
//! [`StaticSurface::tool`] answers each registration with a `Result`, which
//! puts a `?` after every tool of a chain. The builder keeps the first
//! refusal instead and hands it back from [`SurfaceBuilder::build`]; later
//! refusals are logged (at `warn`) like every refused registration, so a
//! chain with two mistakes shows both.

use std::sync::Arc;

use serde_core::de::DeserializeOwned;
use serde_json::Value;

use super::{untyped, StaticSurface};
use crate::call::context::CallContext;
use crate::call::tool_error::ToolError;
use crate::call::typed::{typed_tool, Reply};
use crate::error::Error;
use crate::model::{Tool, ToolOutcome};

/// Builds a [`StaticSurface`] from a chain of tools; made by
/// [`StaticSurface::builder`].
///
#[cfg_attr(not(doctest), doc = include_str!("../../doc/surface_builder.md"))]
#[derive(Debug, Default)]
#[must_use = "a builder does nothing until build() is called"]
pub struct SurfaceBuilder {
    surface: StaticSurface,
    /// The first registration refused; the surface is not built then.
    refused: Option<Error>,
}

impl SurfaceBuilder {
    /// Adds a tool and its handler, as [`StaticSurface::tool`] does.
    pub fn tool<F, O>(mut self, tool: Tool, handler: F) -> SurfaceBuilder
    where
        F: Fn(&Value, &CallContext) -> O + Send + Sync + 'static,
        O: Into<ToolOutcome>,
    {
        let result = self.surface.insert(tool, untyped(handler));
        self.keep_first(result);
        self
    }

    /// Adds a typed tool, as [`StaticSurface::typed`] does.
    pub fn typed<T, R, F>(mut self, tool: Tool, handler: F) -> SurfaceBuilder
    where
        T: DeserializeOwned + 'static,
        R: Reply,
        F: Fn(T, &CallContext) -> Result<R, ToolError> + Send + Sync + 'static,
    {
        let (tool, run) = typed_tool(tool, handler);
        let result = self.surface.insert(tool, Arc::new(run));
        self.keep_first(result);
        self
    }

    fn keep_first(&mut self, result: Result<(), Error>) {
        if let Err(err) = result {
            self.refused.get_or_insert(err);
        }
    }

    /// The surface, or the first registration that was refused (an invalid
    /// name or schema, or a name registered twice).
    pub fn build(self) -> Result<StaticSurface, Error> {
        match self.refused {
            Some(err) => Err(err),
            None => Ok(self.surface),
        }
    }
}
