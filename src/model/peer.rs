//! Who calls, and what they want to hear: the client's self-description and
//! the log levels MCP orders messages by.

/// The client's self-description (`clientInfo`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientInfo {
    /// The client's name, for example `claude-code`.
    pub name: String,
    /// The client's version string.
    pub version: String,
}

impl ClientInfo {
    /// A `clientInfo` value, when well-formed: an object whose `name` and
    /// `version` are strings (any other member is ignored).
    pub(crate) fn read(info: &serde_json::Value) -> Option<ClientInfo> {
        Some(ClientInfo {
            name: info.get("name")?.as_str()?.to_owned(),
            version: info.get("version")?.as_str()?.to_owned(),
        })
    }
}

/// The severity of a log message, as MCP (and syslog) orders them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// Detailed debugging information.
    Debug,
    /// Normal operational messages.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The level's name on the wire (`"debug"`, `"info"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// Every level's wire name, least severe first, as one list for error
    /// messages.
    pub(crate) fn names() -> String {
        LogLevel::ALL.map(LogLevel::as_str).join(", ")
    }

    /// Parses a wire name; `None` for anything else.
    pub fn parse(text: &str) -> Option<LogLevel> {
        LogLevel::ALL.into_iter().find(|l| l.as_str() == text)
    }
}
