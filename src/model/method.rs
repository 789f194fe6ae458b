//! The MCP methods this crate speaks, each spelled once: its wire name,
//! whether it is a request or a notification, which peer sends it, and the
//! revisions whose schema has it.
//!
//! Every peer in the crate — the host's dispatch, both clients, the relay
//! and the gateway's passthrough, ask-back — names a method through
//! [`Method`], so a misspelt method is a compile error and a search for one
//! variant finds every place that sends, answers or routes it. A method the
//! crate starts to speak is one line in the `methods!` table below, which
//! declares the variant, its row and its place in [`Method::ALL`] at once;
//! every exhaustive `match` on [`Method`] then points at what must change.
//!
//! The rows record the MCP schema of each revision, not what this crate does
//! with the method: the host answers `prompts/list` in 2026-07-28 only,
//! though the method exists in every revision (`mcp::methods` says which
//! eras the host serves). In 2026-07-28 the server's questions
//! (elicitation, sampling, roots) travel as `inputRequests` inside a result
//! rather than as requests of their own, and only the server cancels or
//! reports progress; the sender recorded is the one of the stateful
//! revisions.

use std::fmt;

use super::revision::Revision;

use Kind::{Notification, Request};
use Revision::{V2024_11_05 as FIRST, V2025_06_18, V2025_11_25, V2026_07_28 as LAST};
use Sender::{Client, Either, Server};

/// Declares [`Method`], [`Method::ALL`] and [`Method::row`] from one list,
/// so that a method added to the list is in all three, and a method exists
/// nowhere else.
macro_rules! methods {
    ($(
        $(#[$doc:meta])*
        $variant:ident = $name:literal, $kind:ident, $sender:ident, $since:ident, $until:ident;
    )*) => {
        /// An MCP method (request or notification) some part of the crate
        /// sends, answers or routes. Its `Debug` is its wire name, quoted, as
        /// the `&str` it replaced printed.
        #[derive(Clone, Copy, PartialEq, Eq, Hash)]
        // Without the `client` feature the host alone speaks: the rows only
        // a client sends, and the lookup only clients and the relay make, go
        // unused; the table stays whole so that it reads the same in every
        // build.
        #[cfg_attr(not(feature = "client"), allow(dead_code))]
        pub(crate) enum Method {
            $($(#[$doc])* $variant,)*
        }

        #[cfg_attr(not(feature = "client"), allow(dead_code))]
        impl Method {
            /// Every method, in the table's order, which [`Method::parse`]
            /// scans: hottest first.
            pub(crate) const ALL: &'static [Method] = &[$(Method::$variant),*];

            /// The method's name on the wire (its row's `name`, read
            /// without building the row: the host's dispatch asks it per
            /// request).
            pub(crate) const fn name(self) -> &'static str {
                match self {
                    $(Method::$variant => $name,)*
                }
            }

            /// The method's row.
            pub(crate) const fn row(self) -> Row {
                match self {
                    $(Method::$variant => Row {
                        name: $name,
                        kind: $kind,
                        sender: $sender,
                        since: $since,
                        until: $until,
                    },)*
                }
            }
        }
    };
}

// The table. Columns: name on the wire, request or notification, sender,
// first and last revision whose schema has it (FIRST is 2024-11-05, LAST
// 2026-07-28).
methods! {
    /// Runs a tool.
    CallTool = "tools/call", Request, Client, FIRST, LAST;
    /// Lists the tools (a page of them).
    ListTools = "tools/list", Request, Client, FIRST, LAST;
    /// Checks the other peer is there; every peer answers it.
    Ping = "ping", Request, Either, FIRST, V2025_11_25;
    /// Withdraws a request in flight.
    Cancelled = "notifications/cancelled", Notification, Either, FIRST, LAST;
    /// Reports a request's progress.
    Progress = "notifications/progress", Notification, Either, FIRST, LAST;
    /// A log message.
    LogMessage = "notifications/message", Notification, Server, FIRST, LAST;
    /// The server's tool list changed.
    ToolsListChanged = "notifications/tools/list_changed", Notification, Server, FIRST, LAST;
    /// Opens an MCP session (the handshake).
    Initialize = "initialize", Request, Client, FIRST, V2025_11_25;
    /// Ends the handshake.
    Initialized = "notifications/initialized", Notification, Client, FIRST, V2025_11_25;
    /// Sets the least level of the log messages the client wants.
    SetLogLevel = "logging/setLevel", Request, Client, FIRST, V2025_11_25;
    /// Asks a stateless server who it is and what it serves.
    Discover = "server/discover", Request, Client, LAST, LAST;
    /// Opens a stream of the change notifications the client names.
    Listen = "subscriptions/listen", Request, Client, LAST, LAST;
    /// Opens that stream, saying which notifications it will carry.
    ListenAcknowledged = "notifications/subscriptions/acknowledged", Notification, Server, LAST, LAST;
    /// Asks the user to fill in a form or visit a URL.
    Elicit = "elicitation/create", Request, Server, V2025_06_18, LAST;
    /// Asks the client's model for a completion.
    CreateMessage = "sampling/createMessage", Request, Server, FIRST, LAST;
    /// Asks for the client's roots.
    ListRoots = "roots/list", Request, Server, FIRST, LAST;
    /// Lists the prompts.
    ListPrompts = "prompts/list", Request, Client, FIRST, LAST;
    /// Gets one prompt.
    GetPrompt = "prompts/get", Request, Client, FIRST, LAST;
    /// Lists the resources.
    ListResources = "resources/list", Request, Client, FIRST, LAST;
    /// Lists the resource templates.
    ListResourceTemplates = "resources/templates/list", Request, Client, FIRST, LAST;
    /// Reads one resource.
    ReadResource = "resources/read", Request, Client, FIRST, LAST;
}

impl fmt::Debug for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.name(), f)
    }
}

/// Whether a method expects an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A request: it carries an id and is answered.
    Request,
    /// A notification: no id, no answer.
    Notification,
}

/// Which peer sends a method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sender {
    /// The client, to the server.
    Client,
    /// The server, to the client.
    Server,
    /// Either peer (`ping`, cancellation, progress).
    Either,
}

/// One row of the table: what MCP's schemas say of a method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Row {
    /// The name on the wire.
    pub(crate) name: &'static str,
    /// Request or notification.
    pub(crate) kind: Kind,
    /// Who sends it.
    pub(crate) sender: Sender,
    /// The first revision that has it.
    pub(crate) since: Revision,
    /// The last revision that has it.
    pub(crate) until: Revision,
}

#[cfg_attr(not(feature = "client"), allow(dead_code))]
impl Method {
    /// The method named `name`, or `None` for one the crate does not speak.
    pub(crate) fn parse(name: &str) -> Option<Method> {
        Method::ALL.iter().copied().find(|m| m.name() == name)
    }

    /// Whether `revision`'s schema has the method.
    pub(crate) fn exists_in(self, revision: Revision) -> bool {
        let row = self.row();
        (row.since..=row.until).contains(&revision)
    }

    /// Whether this is one of the server's questions to the client that
    /// a tool handler may ask (ask-back) and a gateway relays.
    pub(crate) fn is_question(self) -> bool {
        matches!(
            self,
            Method::Elicit | Method::CreateMessage | Method::ListRoots
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_names_exactly_these_methods_in_this_order() {
        let names: Vec<&str> = Method::ALL.iter().map(|m| m.name()).collect();
        assert_eq!(
            names,
            [
                "tools/call",
                "tools/list",
                "ping",
                "notifications/cancelled",
                "notifications/progress",
                "notifications/message",
                "notifications/tools/list_changed",
                "initialize",
                "notifications/initialized",
                "logging/setLevel",
                "server/discover",
                "subscriptions/listen",
                "notifications/subscriptions/acknowledged",
                "elicitation/create",
                "sampling/createMessage",
                "roots/list",
                "prompts/list",
                "prompts/get",
                "resources/list",
                "resources/templates/list",
                "resources/read",
            ]
        );
    }

    #[test]
    fn every_method_is_named_once_and_parses_back_to_itself() {
        for (i, method) in Method::ALL.iter().enumerate() {
            assert!(
                Method::ALL[i + 1..].iter().all(|other| other != method),
                "{method:?} listed twice"
            );
            assert!(
                Method::ALL[i + 1..]
                    .iter()
                    .all(|other| other.name() != method.name()),
                "{} named twice",
                method.name()
            );
            assert_eq!(Method::parse(method.name()), Some(*method));
            assert_eq!(method.row().name, method.name());
        }
        assert_eq!(Method::parse("tools/calls"), None);
        assert_eq!(Method::parse("Ping"), None);
        assert_eq!(Method::parse(""), None);
    }

    #[test]
    fn a_name_says_its_kind_notifications_and_nothing_else_under_notifications() {
        for &method in Method::ALL {
            let row = method.row();
            assert_eq!(
                row.name.starts_with("notifications/"),
                row.kind == Kind::Notification,
                "{}",
                row.name
            );
            assert!(row.since <= row.until, "{} ends before it starts", row.name);
        }
    }

    #[test]
    fn the_handshake_methods_end_where_the_stateless_revision_begins() {
        for method in [
            Method::Initialize,
            Method::Initialized,
            Method::Ping,
            Method::SetLogLevel,
        ] {
            assert!(method.exists_in(Revision::V2025_11_25), "{method:?}");
            assert!(!method.exists_in(Revision::V2026_07_28), "{method:?}");
        }
        for method in [Method::Discover, Method::Listen, Method::ListenAcknowledged] {
            assert!(method.exists_in(Revision::V2026_07_28), "{method:?}");
            assert!(!method.exists_in(Revision::V2025_11_25), "{method:?}");
        }
        assert!(Method::Elicit.exists_in(Revision::V2025_06_18));
        assert!(!Method::Elicit.exists_in(Revision::V2025_03_26));
        assert!(Method::CallTool.exists_in(Revision::V2024_11_05));
        assert!(Method::CallTool.exists_in(Revision::V2026_07_28));
    }

    #[test]
    fn a_method_prints_as_its_quoted_wire_name_as_the_str_it_replaced() {
        assert_eq!(
            format!("{:?}", Method::Elicit),
            format!("{:?}", "elicitation/create")
        );
        assert_ne!(format!("{:?}", Method::Elicit), "Elicit");
    }

    #[test]
    fn the_questions_are_the_servers_requests_other_than_ping() {
        for &method in Method::ALL {
            let row = method.row();
            let servers_request = row.sender == Sender::Server && row.kind == Kind::Request;
            assert_eq!(method.is_question(), servers_request, "{}", row.name);
        }
        assert!(!Method::Ping.is_question());
    }
}
