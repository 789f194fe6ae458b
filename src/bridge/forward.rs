//! A call forwarded to the server: the agent's cancellation and deadline
//! passed on, the server's progress, log messages and questions relayed
//! back, and the result or the failure as the agent's tool outcome.

use std::time::Instant;

use serde_json::Value;

use crate::call::ask::InputRequest;
use crate::call::context::CallContext;
use crate::client::{CallOptions, CancelHandle, ClientError, Refusal, ServerRequest};
use crate::model::ToolOutcome;

use super::Inner;

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
            options = options.timeout(deadline.saturating_duration_since(Instant::now()));
        }
        match self.call_remote(remote, args, options) {
            Ok(result) => ToolOutcome::relayed(result.raw),
            // The server was told to stop; the call ends cancelled, not
            // declined (there is no verdict for the model to read).
            Err(ClientError::Cancelled) => ToolOutcome::cancelled(),
            // The standard JSON-RPC errors are the server's verdict on the
            // call itself (invalid params, an unknown tool): the model may
            // correct the call. Other codes say the server cannot serve.
            Err(ClientError::Rpc { code, message, .. }) if (-32700..=-32600).contains(&code) => {
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
            Err(err) => {
                self.report(format!(
                    "MCP server {:?}: tools/call of {remote:?} failed: {err}",
                    self.name
                ));
                ToolOutcome::declined(format!(
                    "The MCP server {:?} that provides this tool is unavailable or failed, so the call did not complete. The other tools still work; try this one again later.",
                    self.name
                ))
            }
        }
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
