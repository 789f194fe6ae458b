//! The surface a session is opened on, as the host keeps it: the
//! application's surface, asked with the session named (see
//! `call::link`), so that the crate's surfaces inside it learn of the
//! session from its `tools/list` even when a wrapper of the application's
//! own does not forward `on_open`.

use std::sync::OnceLock;

use serde_json::Value;

use super::sealed::Token;
use super::ToolSurface;
use crate::call::context::CallContext;
use crate::call::session_link::{serving, SessionLink};
use crate::model::{Tool, ToolOutcome};

/// The surface a session is opened on, as the host keeps it: its list is
/// asked for with the session named (see `call::session_link::serving`).
pub(crate) struct Adopting {
    inner: Box<dyn ToolSurface>,
    /// Set once the session exists, before anything can be asked.
    link: OnceLock<SessionLink>,
}

impl Adopting {
    pub(crate) fn new(inner: Box<dyn ToolSurface>) -> Adopting {
        Adopting {
            inner,
            link: OnceLock::new(),
        }
    }

    /// Hands the session's link to the surface: kept for `serving`, and
    /// given to `on_open`.
    pub(crate) fn open(&self, link: SessionLink) {
        let _ = self.link.set(link.clone());
        self.inner.on_open(link);
    }

    fn ask<R>(&self, ask: impl FnOnce() -> R) -> R {
        match self.link.get() {
            Some(link) => serving(link, ask),
            None => ask(),
        }
    }
}

impl ToolSurface for Adopting {
    fn list_tools(&self) -> Vec<Tool> {
        self.ask(|| self.inner.list_tools())
    }
    fn call(&self, name: &str, args: &Value, ctx: &CallContext) -> ToolOutcome {
        self.inner.call(name, args, ctx)
    }
    fn on_open(&self, link: SessionLink) {
        self.open(link);
    }
    // Not asked with the session named: a client lists the tools before a
    // list change means anything to it, and every call would pay for the
    // naming (an `Arc` clone and two thread-local writes).
    fn lookup(&self, name: &str, token: Token) -> Option<Tool> {
        self.inner.lookup(name, token)
    }
}
