//! The signed `requestState` of 2026-07-28 multi round-trip calls.
//!
//! The state carries what a re-run handler needs from earlier rounds (the
//! answers so far), so it must come back exactly as it left: it is
//! `base64(payload) "." base64(HMAC-SHA256(host key, payload))`, with a key
//! drawn from the OS when the host starts. The payload binds the state to
//! the session, the tool and its arguments, and carries when it was issued
//! and a nonce; a state is accepted once, within its lifetime, so a replayed
//! or tampered one is refused.

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Map, Value};

use crate::base64::{base64_decode, base64_encode};
use crate::crypto::hmac::{hmac_sha256, sha256};
use crate::crypto::{constant_time_eq, hex, random_bytes};
use crate::sync::lock;

/// How long a state may take to come back.
pub(crate) const STATE_LIFETIME: Duration = Duration::from_secs(600);

/// How many spent nonces are remembered (each for the state lifetime); past
/// it the oldest are forgotten, which only shortens replay protection for
/// states already near expiry.
const MAX_SPENT: usize = 16_384;

/// Signs and checks request states for one host.
pub(crate) struct StateSigner {
    key: [u8; 32],
    spent: std::sync::Mutex<HashMap<String, u64>>,
}

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
        StateSigner {
            key,
            spent: std::sync::Mutex::default(),
        }
    }

    /// A state holding `answers`, bound to `fingerprint`.
    pub(crate) fn sign(&self, fingerprint: &str, answers: &Map<String, Value>) -> String {
        let mut nonce = [0u8; 16];
        random_bytes(&mut nonce);
        let payload = json!({
            "for": fingerprint,
            "iat": now_secs(),
            "nonce": hex(&nonce),
            "answers": answers,
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
    /// and not seen before; else why not.
    pub(crate) fn open(
        &self,
        state: &str,
        fingerprint: &str,
    ) -> Result<Map<String, Value>, String> {
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
            let mut spent = lock(&self.spent);
            spent.retain(|_, at| now.saturating_sub(*at) <= STATE_LIFETIME.as_secs());
            if spent.contains_key(&nonce) {
                return Err("requestState was already used; each state answers one retry".into());
            }
            if spent.len() >= MAX_SPENT {
                if let Some(oldest) = spent
                    .iter()
                    .min_by_key(|(_, at)| **at)
                    .map(|(n, _)| n.clone())
                {
                    spent.remove(&oldest);
                }
            }
            spent.insert(nonce, issued);
        }
        Ok(payload["answers"].as_object().cloned().unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_opens_once_for_its_own_call_and_never_when_altered() {
        let signer = StateSigner::new();
        let mut answers = Map::new();
        answers.insert("name".into(), json!({"action": "accept"}));
        let state = signer.sign("call-a", &answers);
        assert_eq!(signer.open(&state, "call-a"), Ok(answers));
        assert!(signer
            .open(&state, "call-a")
            .unwrap_err()
            .contains("already used"));

        let fresh = signer.sign("call-a", &Map::new());
        assert!(signer
            .open(&fresh, "call-b")
            .unwrap_err()
            .contains("another tool call"));
        let tampered = format!("{fresh}-TAMPERED");
        assert!(signer
            .open(&tampered, "call-a")
            .unwrap_err()
            .contains("altered"));
        let other_host = StateSigner::new().sign("call-a", &Map::new());
        assert!(signer
            .open(&other_host, "call-a")
            .unwrap_err()
            .contains("altered"));
    }
}
