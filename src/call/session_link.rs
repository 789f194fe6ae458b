//! What a surface is given of each session that serves it, so that a
//! surface whose tools change on their own (a live registry, a bridged
//! MCP server) can tell that session's clients without the application
//! calling [`ToolSession::notify_tools_changed`](crate::ToolSession::notify_tools_changed).
//!
//! A [`SessionLink`] holds the session weakly: it never keeps a dropped
//! session alive, and a surface that keeps links learns from
//! [`SessionLink::tools_changed`] returning `false` which ones it may
//! forget. That is the whole mechanism — no registry of surfaces in the
//! host, no thread: the host hands each surface a link when it opens a
//! session on it ([`ToolSurface::on_open`](crate::ToolSurface::on_open)),
//! and the surface calls the links it kept when its tools change.
//!
//! `on_open` reaches only the surface the host was given. One wrapped in
//! a surface of the application's own hears of it only if the wrapper
//! forwards it, which is easy to forget and silent when forgotten. So the
//! host also names the session it serves while it asks a surface for its
//! tools ([`serving`], from the session's
//! `Adopting` surface), and the crate's surfaces that keep links adopt
//! that session from there ([`Links::adopt_serving`]): a wrapped one
//! learns of every session whose client has listed its tools — which a
//! client does before a list change could mean anything to it.

use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;

use crate::event::Event;

/// The runtime's side of a [`SessionLink`].
pub(crate) trait SessionPort: Send + Sync {
    /// Announces a changed tool list to the session's clients; `false`
    /// once the session is gone.
    fn tools_changed(&self) -> bool;

    /// Whether the session is still open.
    fn is_open(&self) -> bool;

    /// Reports an event to the host's hook (or the `log` facade).
    fn report(&self, event: Event);
}

/// One session that serves a surface: how the surface announces a change
/// of its tools to that session's clients, and reports an event to the
/// host's hook. Cheap to clone; holds the session weakly.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use serde_json::Value;
/// use toolhost::{CallContext, HostConfig, SessionLink, Tool, ToolHost, ToolOutcome, ToolSurface};
///
/// /// A surface whose tools the application swaps; every session sees it.
/// #[derive(Default)]
/// struct Swappable {
///     tools: Mutex<Vec<Tool>>,
///     links: Mutex<Vec<SessionLink>>,
/// }
///
/// impl Swappable {
///     fn set(&self, tools: Vec<Tool>) {
///         *self.tools.lock().unwrap() = tools;
///         self.links.lock().unwrap().retain(|link| link.tools_changed());
///     }
/// }
///
/// impl ToolSurface for Swappable {
///     fn list_tools(&self) -> Vec<Tool> {
///         self.tools.lock().unwrap().clone()
///     }
///     fn call(&self, name: &str, _args: &Value, _ctx: &CallContext) -> ToolOutcome {
///         ToolOutcome::text(format!("{name} ran"))
///     }
///     fn on_open(&self, link: SessionLink) {
///         self.links.lock().unwrap().push(link);
///     }
/// }
///
/// let host = ToolHost::bind(HostConfig::default())?;
/// let surface = Arc::new(Swappable::default());
/// let session = host.open_session(Arc::clone(&surface));
/// surface.set(vec![Tool::new("fresh", "Appeared later.")]);
/// assert_eq!(surface.links.lock().unwrap().len(), 1);
/// drop(session);
/// surface.set(Vec::new());
/// assert!(surface.links.lock().unwrap().is_empty()); // forgotten once dropped
/// # Ok::<(), toolhost::Error>(())
/// ```
#[derive(Clone)]
pub struct SessionLink {
    port: Arc<dyn SessionPort>,
}

impl SessionLink {
    pub(crate) fn new(port: Arc<dyn SessionPort>) -> SessionLink {
        SessionLink { port }
    }

    /// Sends `notifications/tools/list_changed` on every open `GET`
    /// stream and `subscriptions/listen` stream of the session. Returns
    /// `false`, and does nothing, once the session is dropped: the caller
    /// may then forget this link.
    pub fn tools_changed(&self) -> bool {
        self.port.tools_changed()
    }

    /// Whether the session is still open (its guard not dropped).
    pub fn is_open(&self) -> bool {
        self.port.is_open()
    }

    /// Reports `event` to the host's event hook, or without one to the
    /// `log` facade, as the host's own events are.
    pub fn report(&self, event: Event) {
        self.port.report(event);
    }

    /// Whether both are links to the same session.
    fn same_session(&self, other: &SessionLink) -> bool {
        Arc::ptr_eq(&self.port, &other.port)
    }
}

thread_local! {
    /// The session whose request this thread is asking a surface about.
    static SERVING: RefCell<Option<SessionLink>> = const { RefCell::new(None) };
}

/// Runs `ask` with `link` named as the session this thread serves, and
/// the one named before restored after, panic or not.
pub(crate) fn serving<R>(link: &SessionLink, ask: impl FnOnce() -> R) -> R {
    struct Restore(Option<SessionLink>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            SERVING.with(|serving| *serving.borrow_mut() = previous);
        }
    }
    let _restore = Restore(SERVING.with(|serving| serving.replace(Some(link.clone()))));
    ask()
}

impl fmt::Debug for SessionLink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionLink")
            .field("open", &self.is_open())
            .finish()
    }
}

/// The links a surface keeps: announces a change to every open session,
/// forgetting the dropped ones as it goes.
#[derive(Default)]
pub(crate) struct Links {
    links: std::sync::Mutex<Vec<SessionLink>>,
}

impl Links {
    /// Keeps `link`, unless it is kept already.
    pub(crate) fn add(&self, link: SessionLink) {
        let mut links = crate::sync::lock(&self.links);
        links.retain(SessionLink::is_open);
        if !links.iter().any(|kept| kept.same_session(&link)) {
            links.push(link);
        }
    }

    /// Keeps the session this thread is serving, if the host named one
    /// (see [`serving`]): how a surface wrapped in one that does not
    /// forward `on_open` still learns of its sessions.
    pub(crate) fn adopt_serving(&self) {
        SERVING.with(|serving| {
            if let Some(link) = serving.borrow().as_ref() {
                let mut links = crate::sync::lock(&self.links);
                if !links.iter().any(|kept| kept.same_session(link)) {
                    links.retain(SessionLink::is_open);
                    links.push(link.clone());
                }
            }
        });
    }

    /// Announces a change to every open session; call it outside the
    /// surface's own locks.
    pub(crate) fn tools_changed(&self) {
        crate::sync::lock(&self.links).retain(SessionLink::tools_changed);
    }

    /// The first open session's link: where to report an event once (the
    /// sessions of one surface normally share one host and its hook).
    pub(crate) fn first_open(&self) -> Option<SessionLink> {
        crate::sync::lock(&self.links)
            .iter()
            .find(|link| link.is_open())
            .cloned()
    }

    pub(crate) fn len(&self) -> usize {
        let mut links = crate::sync::lock(&self.links);
        links.retain(SessionLink::is_open);
        links.len()
    }
}
