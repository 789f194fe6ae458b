//! A call forwarded to the server: the agent's cancellation and deadline
//! passed on, the server's progress, log messages and questions relayed
//! back, and the result or the failure as the agent's tool outcome.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::call::ask::InputRequest;
use crate::call::context::CallContext;
use crate::client::{CallOptions, CancelHandle, ClientError, Refusal, ServerRequest};
use crate::model::jsonrpc::{INVALID_REQUEST, PARSE_ERROR};
use crate::model::ToolOutcome;

use super::Inner;

/// How long past a call's deadline the client waits, so that the host's
/// deadline — which names the setting and tells the server to stop — comes
/// first.
const DEADLINE_GRACE: Duration = Duration::from_secs(1);

impl Inner {
    pub(super) fn forward(&self, remote: &str, args: &Value, ctx: &CallContext) -> ToolOutcome {
        let cancel = CancelHandle::new();
        // The host's cancellation wakes the client's call, which blocks on
        // its socket (a handle cancelled after the call ended touches
        // nothing: the call has let go of its socket).
        let canceller = cancel.clone();
        ctx.cancel.on_cancel(Box::new(move || canceller.cancel()));
        let mut options = CallOptions::new()
            .cancel_with(&cancel)
            .on_progress(|p| ctx.progress(p.progress, p.total, p.message.as_deref()))
            .on_log(|message| match &message.logger {
                Some(logger) => ctx.log_as(message.level, logger, message.data.clone()),
                None => ctx.log(message.level, message.data.clone()),
            })
            // Beside the stream, so that the server's withdrawal of a
            // question is seen while the agent is still being asked.
            .on_request_beside_stream(|request| ask_agent(ctx, request));
        if let Some(deadline) = ctx.deadline() {
            // A moment past the deadline: the host's own watch ends the
            // call at the deadline and cancels it here, which tells the
            // server to stop; the client's timeout is only the backstop.
            let left = deadline.saturating_duration_since(Instant::now());
            options = options.timeout(left + DEADLINE_GRACE);
        }
        match self.call_remote(remote, args, options) {
            Ok(result) => ToolOutcome::from(result),
            // The server was told to stop; the call ends cancelled, not
            // declined (there is no verdict for the model to read).
            Err(ClientError::Cancelled) => ToolOutcome::cancelled(),
            // The standard JSON-RPC errors are the server's verdict on the
            // call itself (invalid params, an unknown tool): the model may
            // correct the call. Other codes say the server cannot serve.
            Err(ClientError::Rpc { code, message, .. }) if (PARSE_ERROR..=INVALID_REQUEST).contains(&code) => {
                ToolOutcome::declined(format!(
                    "The MCP server {:?} refused the call (error {code}): {message}",
                    self.name
                ))
            }
            // In 2026-07-28 the server's question ends the call when it
            // cannot be answered: the agent could not be asked.
            Err(ClientError::Unanswered {
                method,
                problem,
                cause: None,
            }) => ToolOutcome::declined(format!(
                "The MCP server {:?} needed an answer to {method} from the agent, which could not be asked: {problem}",
                self.name
            )),
            Err(ClientError::TooLarge {
                what, size, limit, ..
            }) => {
                let size = match size {
                    Some(size) => format!("{size} bytes"),
                    None => format!("more than {limit} bytes"),
                };
                self.too_large(remote, &what, &size, limit)
            }
            Err(ClientError::Timeout { waited }) => {
                self.report(format!(
                    "MCP server {:?}: tools/call of {remote:?} got nothing for {waited:?}",
                    self.name
                ));
                ToolOutcome::declined(format!(
                    "The MCP server {:?} sent nothing for {waited:?} (its client's timeout: ClientBuilder::timeout or StdioServer::timeout), so the call was given up.",
                    self.name
                ))
            }
            Err(err) => {
                self.report(format!(
                    "MCP server {:?}: tools/call of {remote:?} failed: {}",
                    self.name,
                    super::supervise::describe(&err)
                ));
                ToolOutcome::declined(format!(
                    "The MCP server {:?} that provides this tool is unavailable or failed, so the call did not complete. The other tools still work; try this one again later.",
                    self.name
                ))
            }
        }
    }
}

impl Inner {
    /// The tool error for a message of `size` past `limit`, and its report.
    fn too_large(&self, remote: &str, what: &str, size: &str, limit: usize) -> ToolOutcome {
        self.report(format!(
            "MCP server {:?}: tools/call of {remote:?} sent {what} of {size}, past the limit of {limit} bytes (McpServerBuilder::max_message_bytes); it was not read",
            self.name
        ));
        ToolOutcome::declined(format!(
            "The MCP server {:?} sent a message of {size} for this call, past the limit of {limit} bytes that the host relays (McpServerBuilder::max_message_bytes), so it was not read. Ask the tool for less (a smaller range, a filter, a page).",
            self.name
        ))
        .with_code(json!("result_too_large"))
    }
}

/// Puts the server's question to the agent when the agent can answer it,
/// until the server withdraws it; refuses it otherwise.
fn ask_agent(ctx: &CallContext, request: &ServerRequest) -> Result<Value, Refusal> {
    if ctx.revision().is_stateless() {
        // A 2026-07-28 agent answers by calling again, which would forward
        // the call to the server a second time.
        return Err(Refusal::new(
            "the agent speaks 2026-07-28, whose answers would repeat the call; it is not asked",
        ));
    }
    let Some(question) = InputRequest::relayed(&request.method, request.params.clone()) else {
        return Err(Refusal::new(format!(
            "{} is not relayed to the agent",
            request.method
        )));
    };
    // The server may withdraw its question while the agent thinks: the
    // wait then ends, the agent is told, and the refusal is not sent.
    ctx.ask_relayed(question, &|| request.withdrawn())
        .map_err(|err| Refusal::new(err.to_string()))
}
