//! The JSON-RPC message a case starts from, one of each method of each
//! revision, and its mutations: JSON type swaps, huge numbers, deep
//! nesting, odd unicode, raw fragments, byte flips and truncation.

use serde_json::{json, Value};

use crate::rng::Rng;
use crate::{MAX_BODY, REVISIONS, STATELESS};

/// A JSON value to be replaced by raw text after serialization.
fn fragment(frags: &mut Vec<String>, text: String) -> Value {
    frags.push(text);
    Value::String(format!("\u{1}frag{}\u{1}", frags.len() - 1))
}

pub(crate) fn render(value: &Value, frags: &[String]) -> Vec<u8> {
    let mut text = value.to_string();
    for (n, frag) in frags.iter().enumerate() {
        text = text.replace(&format!("\"\\u0001frag{n}\\u0001\""), frag);
    }
    text.into_bytes()
}

pub(crate) fn meta(rng: &mut Rng) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "1"},
    });
    if rng.chance(20) {
        meta["io.modelcontextprotocol/logLevel"] = json!(rng.pick(&["debug", "error", "loud"]));
    }
    if rng.chance(20) {
        meta["progressToken"] = json!(rng.below(100));
    }
    meta
}

/// A real message of revision `rev`: its method, tool name and JSON.
pub(crate) fn template(rng: &mut Rng, rev: usize) -> (String, String, Value) {
    let id = json!(rng.below(1000));
    let tool = (*rng.pick(&[
        "echo", "add", "progress", "decline", "boom", "route", "nope",
    ]))
    .to_owned();
    let args = match tool.as_str() {
        "echo" => json!({"text": "hello"}),
        "add" => json!({"a": 1, "b": 2.5}),
        "route" => json!({"region": "eu-west"}),
        _ => json!({}),
    };
    let mut call_params = json!({"name": tool, "arguments": args});
    if rng.chance(20) {
        call_params["_meta"] = json!({"progressToken": "p1"});
    }
    let request = |method: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let notification =
        |method: &str, params: Value| json!({"jsonrpc": "2.0", "method": method, "params": params});
    let (method, message) = if rev == STATELESS {
        let method = *rng.pick(&[
            "server/discover",
            "tools/list",
            "tools/call",
            "tools/call",
            "subscriptions/listen",
            "prompts/list",
            "resources/read",
            "initialize",
            "notifications/cancelled",
        ]);
        let mut params = match method {
            "tools/call" => call_params,
            "subscriptions/listen" => json!({"notifications": {"toolsListChanged": true}}),
            "resources/read" => json!({"uri": "file:///x"}),
            "notifications/cancelled" => json!({"requestId": 1}),
            _ => json!({}),
        };
        params["_meta"] = meta(rng);
        if method.starts_with("notifications/") {
            (method, notification(method, params))
        } else {
            (method, request(method, params))
        }
    } else {
        match rng.below(12) {
            0 => (
                "initialize",
                request(
                    "initialize",
                    json!({"protocolVersion": REVISIONS[rev], "capabilities": {},
                        "clientInfo": {"name": "fuzz", "version": "1"}}),
                ),
            ),
            1 => (
                "notifications/initialized",
                notification("notifications/initialized", json!({})),
            ),
            2 => ("ping", request("ping", json!({}))),
            3 => ("tools/list", request("tools/list", json!({"cursor": null}))),
            4..=6 => ("tools/call", request("tools/call", call_params)),
            7 => (
                "logging/setLevel",
                request("logging/setLevel", json!({"level": "info"})),
            ),
            8 => (
                "notifications/cancelled",
                notification(
                    "notifications/cancelled",
                    json!({"requestId": id, "reason": "fuzz"}),
                ),
            ),
            9 => (
                "response",
                json!({"jsonrpc": "2.0", "id": id, "result": {}}),
            ),
            _ => (
                "batch",
                json!([
                    request("ping", json!({})),
                    request("tools/call", call_params),
                    notification("notifications/initialized", json!({})),
                ]),
            ),
        }
    };
    (method.to_owned(), tool, message)
}

/// A random node of `value`, to mutate in place.
fn random_node<'a>(rng: &mut Rng, value: &'a mut Value) -> &'a mut Value {
    let children = match value {
        Value::Object(map) => map.len(),
        Value::Array(items) => items.len(),
        _ => 0,
    };
    if children == 0 || rng.chance(30) {
        return value;
    }
    let n = rng.below(children);
    match value {
        Value::Object(map) => match map.values_mut().nth(n) {
            Some(child) => random_node(rng, child),
            None => unreachable!("n is below the length"),
        },
        Value::Array(items) => random_node(rng, &mut items[n]),
        _ => unreachable!("only containers have children"),
    }
}

const HUGE_NUMBERS: [&str; 9] = [
    "1e400",
    "-1e400",
    "18446744073709551616",
    "-9223372036854775809",
    "123456789012345678901234567890123456789",
    "4.9e-324",
    "-0",
    "1E+2",
    "0.30000000000000004",
];
const BROKEN_JSON: [&str; 10] = [
    "NaN",
    "Infinity",
    "'x'",
    "01",
    "\"\\ud800\"",
    "\"\\udc00\\ud800\"",
    "\"\\u00\"",
    "tru",
    "[1,]",
    "\"\u{1}\"",
];
const UNICODE: [&str; 9] = [
    "grüße",
    "𝕏🙂",
    "\u{202e}evil",
    "\u{0}",
    "\u{feff}bom",
    "名前",
    "\u{10ffff}",
    "a\u{300}\u{300}",
    "\\\"",
];

fn random_value(rng: &mut Rng) -> Value {
    match rng.below(7) {
        0 => Value::Null,
        1 => json!(rng.chance(50)),
        2 => json!(rng.next() as i64),
        3 => json!(f64::from(rng.below(1000) as u32) / 7.0),
        4 => json!(rng.pick(&UNICODE)),
        5 => json!([1, "two", null]),
        _ => json!({"k": "v"}),
    }
}

pub(crate) fn mutate_json(rng: &mut Rng, message: &mut Value, frags: &mut Vec<String>) {
    let node = random_node(rng, message);
    match rng.below(9) {
        0 => *node = random_value(rng),
        1 => match node {
            Value::Object(map) if !map.is_empty() => {
                let key = map.keys().nth(rng.below(map.len())).cloned().unwrap();
                map.remove(&key);
            }
            other => *other = Value::Null,
        },
        2 => match node {
            Value::Object(map) => {
                map.insert((*rng.pick(&UNICODE)).to_owned(), random_value(rng));
            }
            other => *other = json!({"wrapped": other.take()}),
        },
        3 => *node = fragment(frags, (*rng.pick(&HUGE_NUMBERS)).to_owned()),
        4 => {
            let depth = *rng.pick(&[64, 127, 128, 129, 500, 5_000]);
            let nested = if rng.chance(50) {
                format!("{}{}", "[".repeat(depth), "]".repeat(depth))
            } else {
                format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth))
            };
            *node = fragment(frags, nested);
        }
        5 => *node = json!(rng.pick(&UNICODE).repeat(1 + rng.below(50))),
        6 => *node = fragment(frags, (*rng.pick(&BROKEN_JSON)).to_owned()),
        7 => *node = json!([node.take()]),
        _ => *node = json!("x".repeat(rng.below(2 * MAX_BODY))),
    }
}

pub(crate) fn mutate_bytes(rng: &mut Rng, bytes: &mut Vec<u8>) {
    for _ in 0..=rng.below(3) {
        if bytes.is_empty() {
            bytes.push(rng.next() as u8);
            continue;
        }
        let at = rng.below(bytes.len());
        match rng.below(6) {
            0 => bytes[at] ^= 1 << rng.below(8),
            1 => bytes.truncate(at),
            2 => bytes.insert(at, rng.next() as u8),
            3 => {
                let end = (at + 1 + rng.below(16)).min(bytes.len());
                bytes.drain(at..end);
            }
            4 => {
                let end = (at + 1 + rng.below(64)).min(bytes.len());
                let span = bytes[at..end].to_vec();
                bytes.splice(at..at, span);
            }
            _ => bytes[at] = *rng.pick(b"{}[]\",:\\\0\xff\r\n"),
        }
    }
}
