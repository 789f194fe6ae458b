//! The signed `requestState` of 2026-07-28 multi round-trip calls.
//!
//! The state carries what a re-run handler needs from earlier rounds (the
//! answers so far), so it must come back exactly as it left: it is
//! `base64(payload) "." base64(HMAC-SHA256(host key, payload))`, with a key
//! drawn from the OS when the host starts. The payload binds the state to
//! the session, the tool and its arguments, and carries when it was issued,
//! a nonce, and the keys of the questions its round asked: a retry's
//! `inputResponses` count only for those keys. A state is accepted once,
//! within its lifetime, so a replayed or tampered one is refused; its nonce
//! is remembered until the state expires, never forgotten earlier (a full
//! set refuses new states instead).
//!
//! The spent nonces are kept per session ([`SpentStates`], in the
//! session's entry), not per host: a state opens only in the session it
//! is bound to, so that is where its replay must be refused, and one
//! bearer holder spending states as fast as it can fills only its own
//! session's set. With one set for the host, one session filled it in
//! about ten seconds, and every session's multi-round calls were refused
//! for up to ten minutes after.

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Map, Value};

use crate::base64::{base64_decode, base64_encode};
use crate::crypto::hmac::{hmac_sha256, sha256};
use crate::crypto::{constant_time_eq, hex, random_bytes};
use crate::sync::lock;

/// How long a state may take to come back.
pub(crate) const STATE_LIFETIME: Duration = Duration::from_secs(600);

/// How many spent nonces a session remembers, each until its state
/// expires. Forgetting one early would let its state be replayed, so a
/// full set refuses the session's further states until some expire. A
/// round of a real multi-round call waits on a person or a model, so an
/// agent spends a few states a minute; 4,096 within the ten minutes a
/// state lives is seven a second, and costs a session at most ~400 KiB.
pub(crate) const MAX_SPENT: usize = 4096;

/// What an opened state carries: the answers of earlier rounds, and the
/// keys of the questions its round asked, the only ones a retry may answer.
#[derive(Debug, PartialEq)]
pub(crate) struct Opened {
    pub(crate) answers: Map<String, Value>,
    pub(crate) asked: Vec<String>,
}

/// Signs and checks request states for one host.
pub(crate) struct StateSigner {
    key: [u8; 32],
}

/// The nonces of the states one session has spent, each with when its
/// state was issued.
#[derive(Default)]
pub(crate) struct SpentStates(std::sync::Mutex<HashMap<String, u64>>);

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// What a state is for: the session (by its `binding`), the tool, the
/// arguments.
pub(crate) fn fingerprint(binding: &[u8], tool: &str, arguments: &Value) -> String {
    let mut material = binding.to_vec();
    material.extend_from_slice(tool.as_bytes());
    material.push(0);
    material.extend_from_slice(arguments.to_string().as_bytes());
    hex(&sha256(&material))
}

impl StateSigner {
    pub(crate) fn new() -> StateSigner {
        let mut key = [0u8; 32];
        random_bytes(&mut key);
        StateSigner { key }
    }

    /// A state holding `answers` and the keys of the questions `asked`,
    /// bound to `fingerprint`.
    pub(crate) fn sign<'a>(
        &self,
        fingerprint: &str,
        answers: &Map<String, Value>,
        asked: impl IntoIterator<Item = &'a str>,
    ) -> String {
        let asked: Vec<&str> = asked.into_iter().collect();
        let mut nonce = [0u8; 16];
        random_bytes(&mut nonce);
        let payload = json!({
            "for": fingerprint,
            "iat": now_secs(),
            "nonce": hex(&nonce),
            "answers": answers,
            "asked": asked,
        })
        .to_string();
        let tag = hmac_sha256(&self.key, payload.as_bytes());
        format!(
            "{}.{}",
            base64_encode(payload.as_bytes()),
            base64_encode(&tag)
        )
    }

    /// The answers a state carries, if it is genuine, for this call, fresh,
    /// and not among the session's `spent` states (where it then goes);
    /// else why not.
    pub(crate) fn open(
        &self,
        state: &str,
        fingerprint: &str,
        spent: &SpentStates,
    ) -> Result<Opened, String> {
        let tampered = || "requestState was altered or was not issued by this server".to_owned();
        let (payload, tag) = state.split_once('.').ok_or_else(tampered)?;
        let payload = base64_decode(payload).ok_or_else(tampered)?;
        let tag = base64_decode(tag).ok_or_else(tampered)?;
        if !constant_time_eq(&hmac_sha256(&self.key, &payload), &tag) {
            return Err(tampered());
        }
        let payload: Value = serde_json::from_slice(&payload).map_err(|_| tampered())?;
        if payload["for"].as_str() != Some(fingerprint) {
            return Err(
                "requestState belongs to another tool call (tool, arguments or session differ)"
                    .into(),
            );
        }
        let issued = payload["iat"].as_u64().unwrap_or(0);
        let now = now_secs();
        if now.saturating_sub(issued) > STATE_LIFETIME.as_secs() {
            return Err(format!(
                "requestState expired: it is valid for {} s; call the tool again without it",
                STATE_LIFETIME.as_secs()
            ));
        }
        let nonce = payload["nonce"].as_str().unwrap_or("").to_owned();
        {
            let mut spent = lock(&spent.0);
            spent.retain(|_, at| now.saturating_sub(*at) <= STATE_LIFETIME.as_secs());
            if spent.contains_key(&nonce) {
                return Err("requestState was already used; each state answers one retry".into());
            }
            if spent.len() >= MAX_SPENT {
                let oldest = spent.values().min().copied().unwrap_or(now);
                let wait = (oldest + STATE_LIFETIME.as_secs()).saturating_sub(now) + 1;
                return Err(format!(
                    "too many multi-round tool calls are under way in this session ({MAX_SPENT} states used within {} s); retry in {wait} s",
                    STATE_LIFETIME.as_secs()
                ));
            }
            spent.insert(nonce, issued);
        }
        let asked = payload["asked"]
            .as_array()
            .map(|keys| {
                keys.iter()
                    .filter_map(|key| key.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        Ok(Opened {
            answers: payload["answers"].as_object().cloned().unwrap_or_default(),
            asked,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_opens_once_for_its_own_call_and_never_when_altered() {
        let signer = StateSigner::new();
        let spent = SpentStates::default();
        let mut answers = Map::new();
        answers.insert("name".into(), json!({"action": "accept"}));
        let state = signer.sign("call-a", &answers, ["next"]);
        assert_eq!(
            signer.open(&state, "call-a", &spent),
            Ok(Opened {
                answers,
                asked: vec!["next".to_owned()]
            })
        );
        assert!(signer
            .open(&state, "call-a", &spent)
            .unwrap_err()
            .contains("already used"));

        let fresh = signer.sign("call-a", &Map::new(), []);
        assert!(signer
            .open(&fresh, "call-b", &spent)
            .unwrap_err()
            .contains("another tool call"));
        let tampered = format!("{fresh}-TAMPERED");
        assert!(signer
            .open(&tampered, "call-a", &spent)
            .unwrap_err()
            .contains("altered"));
        let other_host = StateSigner::new().sign("call-a", &Map::new(), []);
        assert!(signer
            .open(&other_host, "call-a", &spent)
            .unwrap_err()
            .contains("altered"));
    }

    #[test]
    fn spent_states_are_remembered_until_they_expire_and_a_full_set_refuses_new_ones() {
        let signer = StateSigner::new();
        let spent = SpentStates::default();
        let first = signer.sign("call", &Map::new(), []);
        assert!(signer.open(&first, "call", &spent).is_ok());
        // Fill the set with other spent states, as an attacker with many
        // rounds would.
        {
            let mut spent = lock(&spent.0);
            let now = now_secs();
            for i in 0..MAX_SPENT - 1 {
                spent.insert(format!("filler-{i}"), now);
            }
        }
        // The first state is still remembered: its replay is refused...
        assert!(signer
            .open(&first, "call", &spent)
            .unwrap_err()
            .contains("already used"));
        // ...and a new state is refused with a clear error, not accepted
        // by forgetting an old one.
        let fresh = signer.sign("call", &Map::new(), []);
        let refused = signer.open(&fresh, "call", &spent).unwrap_err();
        assert!(
            refused.contains("too many") && refused.contains("retry in"),
            "{refused}"
        );
        assert_eq!(lock(&spent.0).len(), MAX_SPENT);
        // Another session's set is its own: the same host opens its states.
        let other = SpentStates::default();
        let theirs = signer.sign("their-call", &Map::new(), []);
        assert!(signer.open(&theirs, "their-call", &other).is_ok());
        // Once states expire, room is made again.
        {
            let mut spent = lock(&spent.0);
            let long_ago = now_secs() - STATE_LIFETIME.as_secs() - 1;
            spent.values_mut().for_each(|at| *at = long_ago);
        }
        assert!(signer.open(&fresh, "call", &spent).is_ok());
    }
}
