//! The one error type of the ACP driver.

use std::fmt;
use std::io;
use std::time::Duration;

use serde_json::Value;

use crate::model::jsonrpc::SERVER_ERROR;

/// ACP's error code for "authenticate first": JSON-RPC's generic server
/// error, which ACP gives that meaning.
pub(super) const AUTH_REQUIRED: i64 = SERVER_ERROR;

/// Why driving an agent failed. Each `Display` names the ACP method and
/// what to try.
#[derive(Debug)]
#[non_exhaustive]
pub enum AcpError {
    /// The agent's program could not be started.
    Spawn {
        /// The program, as given.
        program: String,
        /// What the operating system said.
        source: io::Error,
    },
    /// The agent did not answer in time.
    Timeout {
        /// The ACP method waited on, e.g. `initialize`.
        method: String,
        /// How long the driver waited.
        waited: Duration,
    },
    /// The agent is gone: its process exited, its output ended, or its
    /// input broke. Noticed at once, not at a timeout; the reason names
    /// the exit status (or signal) and the last lines of its stderr.
    Closed {
        /// The ACP method waited on.
        method: String,
        /// What the driver saw.
        reason: String,
    },
    /// The agent answered with a JSON-RPC error.
    Agent {
        /// The ACP method it refused.
        method: String,
        /// The error code (JSON-RPC's generic server error asks to
        /// authenticate first, as ACP's `auth_required`).
        code: i64,
        /// The agent's message.
        message: String,
        /// The error's `data`, when present.
        data: Option<Value>,
    },
    /// The agent's answer breaks the protocol, or the driver was used out
    /// of order (a session before `initialize`).
    Protocol {
        /// The ACP method concerned.
        method: String,
        /// What is wrong.
        problem: String,
    },
    /// The `mcpServers` entry could not be made (see
    /// [`ToolSession::acp_mcp_servers_for`](crate::ToolSession::acp_mcp_servers_for)).
    Entry(crate::Error),
}

impl AcpError {
    pub(super) fn protocol(method: &str, problem: impl Into<String>) -> AcpError {
        AcpError::Protocol {
            method: method.to_owned(),
            problem: problem.into(),
        }
    }

    /// The JSON-RPC error code, when the agent answered with one.
    ///
    /// ```
    /// use toolhost::acp::AcpError;
    ///
    /// let err = AcpError::Closed { method: "initialize".into(), reason: "exited".into() };
    /// assert_eq!(err.agent_code(), None);
    /// ```
    pub fn agent_code(&self) -> Option<i64> {
        match self {
            AcpError::Agent { code, .. } => Some(*code),
            _ => None,
        }
    }
}

impl fmt::Display for AcpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AcpError::Spawn { program, source } => write!(
                f,
                "could not start {program:?}: {source}; is it installed and on PATH?"
            ),
            AcpError::Timeout { method, waited } => write!(
                f,
                "{method}: no answer within {waited:?}; the agent may be stuck, or need longer (a first run of npx downloads the agent)"
            ),
            AcpError::Closed { method, reason } => write!(f, "{method}: {reason}"),
            AcpError::Agent {
                method,
                code,
                message,
                ..
            } if *code == AUTH_REQUIRED => write!(
                f,
                "{method}: the agent wants a login first ({message}); call authenticate with one of its auth methods, or run it once on its own"
            ),
            AcpError::Agent {
                method,
                code,
                message,
                ..
            } => write!(f, "{method}: the agent answered with error {code}: {message}"),
            AcpError::Protocol { method, problem } => write!(f, "{method}: {problem}"),
            AcpError::Entry(err) => write!(f, "session/new: {err}"),
        }
    }
}

impl std::error::Error for AcpError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AcpError::Spawn { source, .. } => Some(source),
            AcpError::Entry(err) => Some(err),
            _ => None,
        }
    }
}
