//! Side answers: the server's questions answered on side threads, beside
//! the call's event stream. Each question's handler runs on a scoped thread
//! of its own while the stream keeps being read, so that the server's
//! `notifications/cancelled` naming a question is seen while its handler
//! still works on the answer — the handler reads it as
//! [`ServerRequest::withdrawn`], and a withdrawn question's answer is not
//! sent (MCP: no response to a cancelled request).
//!
//! Only a call whose options say so (`CallOptions::on_request_beside_stream`)
//! answers this way, and a thread starts only when a question comes: a
//! call that is asked nothing costs nothing more. The scope joins every
//! thread before the call returns; when the call ends, every question still
//! being answered is withdrawn first, so that no handler keeps waiting for
//! an answer that nobody reads.

use std::collections::HashMap;
use std::thread::Scope;

use serde_json::Value;

use crate::client::answer::{cancelled_request, ServerRequest, SharedHandler, Withdrawal};
use crate::client::rpc::Mode;
use crate::client::Settings;

use super::{post_answer, Link};

/// Why the questions still open when the call ends are withdrawn.
const CALL_ENDED: &str = "the call ended before the question was answered";

/// The questions of one call being answered beside its stream.
pub(super) struct Beside<'scope, 'env> {
    scope: &'scope Scope<'scope, 'env>,
    handler: &'env SharedHandler<'env>,
    settings: &'env Settings,
    mode: &'env Mode,
    /// By the question's id as JSON text.
    open: HashMap<String, Withdrawal>,
}

impl<'scope, 'env> Beside<'scope, 'env> {
    pub(super) fn new(
        scope: &'scope Scope<'scope, 'env>,
        handler: &'env SharedHandler<'env>,
        settings: &'env Settings,
        mode: &'env Mode,
    ) -> Beside<'scope, 'env> {
        Beside {
            scope,
            handler,
            settings,
            mode,
            open: HashMap::new(),
        }
    }

    /// Starts answering question `id` on a thread of its own. An answer
    /// that cannot be sent is dropped: the server, left without it, ends
    /// the call as it decides (its deadline), and the call's result or
    /// error says how it ended.
    pub(super) fn answer(&mut self, id: Value, request: ServerRequest) {
        self.open
            .insert(id.to_string(), request.withdrawal().clone());
        let (handler, settings, mode) = (self.handler, self.settings, self.mode);
        self.scope.spawn(move || {
            let answer = handler(&request);
            if request.withdrawn().is_none() {
                let _ = post_answer(&mut Link::default(), settings, mode, &id, answer);
            }
        });
    }

    /// The server's `notifications/cancelled`: withdraws the question it
    /// names, if one is being answered.
    pub(super) fn cancelled(&mut self, params: &Value) {
        let Some((id, reason)) = cancelled_request(params) else {
            return;
        };
        if let Some(withdrawal) = self.open.remove(&id.to_string()) {
            withdrawal.withdraw(reason);
        }
    }
}

impl Drop for Beside<'_, '_> {
    /// The call is over: whatever is still being answered is moot.
    fn drop(&mut self) {
        for (_, withdrawal) in self.open.drain() {
            withdrawal.withdraw(CALL_ENDED.to_owned());
        }
    }
}
