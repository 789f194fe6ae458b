//! The MCP methods this crate speaks, each spelled once: its wire name,
//! whether it is a request or a notification, which peer sends it, and the
//! revisions whose schema has it.
//!
//! Every peer in the crate — the host's dispatch, both clients, the relay
//! and the gateway's passthrough, ask-back — names a method through
//! [`Method`], so a misspelt method is a compile error and a search for one
//! variant finds every place that sends, answers or routes it. A method the
//! crate starts to speak is one row in [`Method::row`] and one entry in
//! [`Method::ALL`]; the exhaustive `match` points at the row that is missing.
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

/// An MCP method (request or notification) some part of the crate sends,
/// answers or routes. Its `Debug` is its wire name, quoted, as the `&str`
/// it replaced printed.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
// Without the `client` feature the host alone speaks, and the rows only a
// client sends, and the lookup only clients and the relay make, go unused;
// the table stays whole so that it reads the same in every build.
#[cfg_attr(not(feature = "client"), allow(dead_code))]
pub(crate) enum Method {
    /// `tools/call`.
    CallTool,
    /// `tools/list`.
    ListTools,
    /// `ping`.
    Ping,
    /// `initialize`.
    Initialize,
    /// `notifications/initialized`.
    Initialized,
    /// `notifications/cancelled`.
    Cancelled,
    /// `notifications/progress`.
    Progress,
    /// `notifications/message`: a log message.
    LogMessage,
    /// `logging/setLevel`.
    SetLogLevel,
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// `server/discover`.
    Discover,
    /// `subscriptions/listen`.
    Listen,
    /// `notifications/subscriptions/acknowledged`.
    ListenAcknowledged,
    /// `prompts/list`.
    ListPrompts,
    /// `prompts/get`.
    GetPrompt,
    /// `resources/list`.
    ListResources,
    /// `resources/templates/list`.
    ListResourceTemplates,
    /// `resources/read`.
    ReadResource,
    /// `elicitation/create`.
    Elicit,
    /// `sampling/createMessage`.
    CreateMessage,
    /// `roots/list`.
    ListRoots,
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

use Kind::{Notification, Request};
use Revision::{V2024_11_05 as FIRST, V2025_06_18, V2025_11_25, V2026_07_28 as LAST};
use Sender::{Client, Either, Server};

const fn row(
    name: &'static str,
    kind: Kind,
    sender: Sender,
    since: Revision,
    until: Revision,
) -> Row {
    Row {
        name,
        kind,
        sender,
        since,
        until,
    }
}

#[cfg_attr(not(feature = "client"), allow(dead_code))]
impl Method {
    /// Every method, hottest first: [`Method::parse`] scans in this order.
    pub(crate) const ALL: [Method; 21] = [
        Method::CallTool,
        Method::ListTools,
        Method::Ping,
        Method::Cancelled,
        Method::Progress,
        Method::LogMessage,
        Method::ToolsListChanged,
        Method::Initialize,
        Method::Initialized,
        Method::SetLogLevel,
        Method::Discover,
        Method::Listen,
        Method::ListenAcknowledged,
        Method::Elicit,
        Method::CreateMessage,
        Method::ListRoots,
        Method::ListPrompts,
        Method::GetPrompt,
        Method::ListResources,
        Method::ListResourceTemplates,
        Method::ReadResource,
    ];

    /// The table: the one place a method's name and properties are written.
    pub(crate) const fn row(self) -> Row {
        match self {
            Method::CallTool => row("tools/call", Request, Client, FIRST, LAST),
            Method::ListTools => row("tools/list", Request, Client, FIRST, LAST),
            Method::Ping => row("ping", Request, Either, FIRST, V2025_11_25),
            Method::Initialize => row("initialize", Request, Client, FIRST, V2025_11_25),
            Method::Initialized => row(
                "notifications/initialized",
                Notification,
                Client,
                FIRST,
                V2025_11_25,
            ),
            Method::Cancelled => row("notifications/cancelled", Notification, Either, FIRST, LAST),
            Method::Progress => row("notifications/progress", Notification, Either, FIRST, LAST),
            Method::LogMessage => row("notifications/message", Notification, Server, FIRST, LAST),
            Method::SetLogLevel => row("logging/setLevel", Request, Client, FIRST, V2025_11_25),
            Method::ToolsListChanged => row(
                "notifications/tools/list_changed",
                Notification,
                Server,
                FIRST,
                LAST,
            ),
            Method::Discover => row("server/discover", Request, Client, LAST, LAST),
            Method::Listen => row("subscriptions/listen", Request, Client, LAST, LAST),
            Method::ListenAcknowledged => row(
                "notifications/subscriptions/acknowledged",
                Notification,
                Server,
                LAST,
                LAST,
            ),
            Method::ListPrompts => row("prompts/list", Request, Client, FIRST, LAST),
            Method::GetPrompt => row("prompts/get", Request, Client, FIRST, LAST),
            Method::ListResources => row("resources/list", Request, Client, FIRST, LAST),
            Method::ListResourceTemplates => {
                row("resources/templates/list", Request, Client, FIRST, LAST)
            }
            Method::ReadResource => row("resources/read", Request, Client, FIRST, LAST),
            Method::Elicit => row("elicitation/create", Request, Server, V2025_06_18, LAST),
            Method::CreateMessage => row("sampling/createMessage", Request, Server, FIRST, LAST),
            Method::ListRoots => row("roots/list", Request, Server, FIRST, LAST),
        }
    }

    /// The method's name on the wire.
    pub(crate) const fn name(self) -> &'static str {
        self.row().name
    }

    /// The method named `name`, or `None` for one the crate does not speak.
    pub(crate) fn parse(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.name() == name)
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
        }
        assert_eq!(Method::parse("tools/calls"), None);
        assert_eq!(Method::parse("Ping"), None);
        assert_eq!(Method::parse(""), None);
    }

    #[test]
    fn a_name_says_its_kind_notifications_and_nothing_else_under_notifications() {
        for method in Method::ALL {
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
    fn the_questions_are_the_servers_requests_other_than_ping() {
        for method in Method::ALL {
            let row = method.row();
            let servers_request = row.sender == Sender::Server && row.kind == Kind::Request;
            assert_eq!(method.is_question(), servers_request, "{}", row.name);
        }
        assert!(!Method::Ping.is_question());
    }
}
