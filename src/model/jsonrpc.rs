//! The JSON-RPC 2.0 vocabulary every peer shares — the host, both
//! clients, the gateway's upstreams, the stdio relay and the ACP driver:
//! the error codes, what an arriving message is ([`Message`]), and the
//! constructors of what goes out ([`request`], [`notification`],
//! [`success`], [`failure`]). A peer that needs more than the shape says so
//! where it reads: the host's strict reader of a POST body is here too
//! ([`parse`], [`classify_envelope`]).
//!
//! MCP ids are strings or integers, never null; the host refuses a message
//! whose id is anything else as an invalid request, answered without an id.

use std::fmt;

use serde_core::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_core::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

use super::member::{MemberName, Named};
use super::meta::{Meta, Params, RequestMeta};

mod message;

use message::{invalid, valid_id, NEITHER};
pub(crate) use message::{not_an_object, Invalid, Json, Members, Message};

/// Invalid JSON was received.
pub(crate) const PARSE_ERROR: i64 = -32700;
/// The JSON is not a valid request object.
pub(crate) const INVALID_REQUEST: i64 = -32600;
/// The method does not exist or is not available.
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters.
pub(crate) const INVALID_PARAMS: i64 = -32602;
/// Internal JSON-RPC error.
pub(crate) const INTERNAL_ERROR: i64 = -32603;
/// 2026-07-28: HTTP headers disagree with the body, or are missing.
pub(crate) const HEADER_MISMATCH: i64 = -32020;
/// 2026-07-28: the request needs a client capability it did not declare.
pub(crate) const MISSING_CLIENT_CAPABILITY: i64 = -32021;
/// 2026-07-28: the request's protocol version is not served.
pub(crate) const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
/// Implementation-defined server error: transport-level refusals (missing
/// session id, bad bearer) that have no code of their own.
pub(crate) const SERVER_ERROR: i64 = -32000;
/// Implementation-defined: the `Mcp-Session-Id` names no MCP session (the
/// code the official SDKs answer with).
pub(crate) const SESSION_NOT_FOUND: i64 = -32001;
/// Implementation-defined: the server sent nothing in time (the code the
/// official SDKs' clients give a request that timed out).
// Only the relay (feature `client`) answers with it.
#[cfg_attr(not(feature = "client"), allow(dead_code))]
pub(crate) const REQUEST_TIMEOUT: i64 = -32001;

/// A JSON-RPC error object.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RpcError {
    pub(crate) code: i64,
    pub(crate) message: String,
    pub(crate) data: Option<Value>,
}

impl RpcError {
    pub(crate) fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub(crate) fn invalid_params(message: impl Into<String>) -> RpcError {
        RpcError::new(INVALID_PARAMS, message)
    }

    /// Reads an error object as it arrived ([`Message::Error`]); `None`
    /// without an integer code and a string message.
    // Only the peers that read answers (features `client`, `acp-driver`)
    // use it; the host reads none.
    #[cfg_attr(not(any(feature = "client", feature = "acp-driver")), allow(dead_code))]
    pub(crate) fn read(error: &Value) -> Option<RpcError> {
        let mut read = RpcError::new(
            error.get("code")?.as_i64()?,
            error.get("message")?.as_str()?,
        );
        read.data = error.get("data").cloned();
        Some(read)
    }
}

/// A POST body as read: one message, a batch, or JSON that is neither an
/// object nor an array.
#[derive(Debug)]
pub(crate) enum Body {
    One(Envelope),
    Batch(Vec<Value>),
    NotAnObject,
}

/// One message as the host reads it: the members JSON-RPC gives a meaning
/// to, each as sent; any other member is read past (its JSON still
/// checked) and dropped. A body is read straight into this rather than into
/// a [`Value`] tree first: most of what a tree of a small request costs is
/// its top-level map and the keys it allocates. `params` is kept without
/// its `_meta`, whose members the host reads are `meta` (see
/// [`super::meta`]).
#[derive(Debug, Default)]
pub(crate) struct Envelope {
    members: Members<Value>,
    meta: Meta,
}

impl Envelope {
    /// The envelope of a message already parsed (a batch's item); `None`
    /// when it is not an object.
    fn of(value: Value) -> Option<Envelope> {
        let mut members = value.into_members()?;
        let meta = members
            .params
            .as_mut()
            .map(|params| Box::new(RequestMeta::take_from(params)));
        Some(Envelope { members, meta })
    }

    /// The message's id, when it has a valid one: what a refusal decided
    /// before classification should still answer to.
    pub(crate) fn request_id(&self) -> Option<&Value> {
        self.members.id.as_ref().filter(|id| valid_id(id))
    }

    /// The members of the message's `params._meta` the host reads.
    pub(crate) fn meta(&self) -> &RequestMeta {
        RequestMeta::of(&self.meta)
    }
}

/// Reads a POST body. Errors are serde_json's, for a body that is not
/// JSON (or that nests deeper than it reads).
pub(crate) fn parse(body: &[u8]) -> Result<Body, serde_json::Error> {
    serde_json::from_slice(body)
}

impl<'de> Deserialize<'de> for Body {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Body, D::Error> {
        deserializer.deserialize_any(BodyVisitor)
    }
}

struct BodyVisitor;

impl<'de> Visitor<'de> for BodyVisitor {
    type Value = Body;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a JSON-RPC message or batch")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Body, A::Error> {
        let mut envelope = Envelope::default();
        while let Some(Named(member)) = map.next_key::<Named<Member>>()? {
            let members = &mut envelope.members;
            let slot = match member {
                Member::Jsonrpc => &mut members.jsonrpc,
                Member::Id => &mut members.id,
                Member::Method => &mut members.method,
                Member::Params => {
                    let Params(params, meta) = map.next_value()?;
                    members.params = Some(params);
                    envelope.meta = meta;
                    continue;
                }
                Member::Result => &mut members.result,
                Member::Error => &mut members.error,
                Member::Other => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            // A member sent twice keeps its last value, as a map would.
            *slot = Some(map.next_value()?);
        }
        Ok(Body::One(envelope))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Body, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Body::Batch(items))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Body, E> {
        Ok(Body::NotAnObject)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Body, E> {
        Ok(Body::NotAnObject)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Body, E> {
        Ok(Body::NotAnObject)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Body, E> {
        Ok(Body::NotAnObject)
    }

    fn visit_str<E>(self, _: &str) -> Result<Body, E> {
        Ok(Body::NotAnObject)
    }

    fn visit_unit<E>(self) -> Result<Body, E> {
        Ok(Body::NotAnObject)
    }
}

/// A member's name, matched without allocating it.
enum Member {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
    Other,
}

impl MemberName for Member {
    fn of(name: &str) -> Member {
        match name {
            "jsonrpc" => Member::Jsonrpc,
            "id" => Member::Id,
            "method" => Member::Method,
            "params" => Member::Params,
            "result" => Member::Result,
            "error" => Member::Error,
            _ => Member::Other,
        }
    }
}

/// Classifies one message of a batch, already parsed, as the host does
/// ([`classify_envelope`]).
pub(crate) fn classify(value: Value) -> Message {
    match Envelope::of(value) {
        Some(envelope) => classify_envelope(envelope),
        None => Message::Invalid(not_an_object()),
    }
}

/// Classifies one message the host received. Beyond the shape
/// ([`Message`]) the host holds its clients to the letter — `"jsonrpc":
/// "2.0"`, an id that is a string or an integer (MCP's rule), params that
/// are an object, a response it can tie to a request of its own — because
/// its answers must validate against each revision's schema, and a client
/// is better told at once what it got wrong.
pub(crate) fn classify_envelope(envelope: Envelope) -> Message {
    let Envelope { members, meta } = envelope;
    if members.jsonrpc.as_ref().and_then(Value::as_str) != Some("2.0") {
        return invalid(
            members.id.as_ref(),
            "the message must carry \"jsonrpc\": \"2.0\"",
        );
    }
    if members.id.as_ref().is_some_and(|id| !valid_id(id)) {
        return invalid(None, "an MCP request id must be a string or an integer");
    }
    match Message::shape(members, meta) {
        Message::Request {
            id,
            params: Some(params),
            ..
        } if !params.is_object() => Message::Invalid(Invalid {
            id: Some(id),
            error: RpcError::invalid_params("params must be a JSON object"),
        }),
        // With a valid id or none: no id, then.
        Message::Error { id: None, .. } => invalid(None, NEITHER),
        message => message,
    }
}

/// A request to send.
pub(crate) fn request(id: impl Into<Value>, method: &str, params: Value) -> Value {
    envelope(Some(id.into()), method, Some(params))
}

/// A notification to send; without `params` when `None`.
pub(crate) fn notification(method: &str, params: Option<Value>) -> Value {
    envelope(None, method, params)
}

/// `{"jsonrpc":"2.0","id":…,"method":…,"params":…}`, built member by
/// member: `json!` would copy `params` through `to_value`, which costs as
/// much as the rest of a small request.
fn envelope(id: Option<Value>, method: &str, params: Option<Value>) -> Value {
    let mut out = Map::new();
    out.insert("jsonrpc".into(), "2.0".into());
    if let Some(id) = id {
        out.insert("id".into(), id);
    }
    out.insert("method".into(), method.into());
    if let Some(params) = params {
        out.insert("params".into(), params);
    }
    Value::Object(out)
}

/// A successful response, as a tree: the envelope [`SuccessJson`] writes,
/// with `result` moved in.
pub(crate) fn success(id: &Value, result: Value) -> Value {
    // The envelope is written around a placeholder that `result` then
    // replaces: written through the serializer, `result` would be copied
    // whole, and a relayed result may be large. Writing a map of a string
    // and an id cannot fail; were it to, the response would still be an
    // object with its result.
    let placeholder = SuccessJson { id, result: &() };
    let mut envelope = serde_json::to_value(placeholder).unwrap_or_default();
    envelope[RESULT] = result;
    envelope
}

/// The member of a success that holds the result.
const RESULT: &str = "result";

/// The success envelope, `{"jsonrpc": "2.0", "id": …, "result": …}`: its
/// one spelling, written straight to text by [`success_serialized`] and
/// made a tree by [`success`].
struct SuccessJson<'a, R> {
    id: &'a Value,
    result: &'a R,
}

impl<R: Serialize> Serialize for SuccessJson<'_, R> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("jsonrpc", "2.0")?;
        map.serialize_entry("id", self.id)?;
        map.serialize_entry(RESULT, self.result)?;
        map.end()
    }
}

/// A response to send: a tree, or its JSON text written already.
///
/// Most replies are small trees. A tool list is not: its tools are
/// rendered once and kept (see `Tool::rendered`), so its reply is written
/// straight to text around them ([`success_serialized`]) instead of being
/// built as a tree of copies, serialized and dropped on every request.
#[derive(Debug)]
pub(crate) enum Reply {
    Tree(Value),
    /// JSON text, as `serde_json` wrote it.
    Text(Vec<u8>),
}

impl From<Value> for Reply {
    fn from(value: Value) -> Reply {
        Reply::Tree(value)
    }
}

impl Reply {
    /// The reply's JSON text.
    pub(crate) fn into_text(self) -> Vec<u8> {
        match self {
            // Writing a `Value` cannot fail: its keys are strings.
            Reply::Tree(value) => serde_json::to_vec(&value).unwrap_or_default(),
            Reply::Text(text) => text,
        }
    }

    /// Appends the reply's JSON text to `out`.
    fn write_to(&self, out: &mut Vec<u8>) {
        match self {
            Reply::Tree(value) => drop(serde_json::to_writer(&mut *out, value)),
            Reply::Text(text) => out.extend_from_slice(text),
        }
    }

    /// A batch's replies as one JSON array.
    pub(crate) fn batch_text(replies: &[Reply]) -> Vec<u8> {
        let mut out = vec![b'['];
        for (n, reply) in replies.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            reply.write_to(&mut out);
        }
        out.push(b']');
        out
    }
}

#[cfg(test)]
impl Reply {
    /// The reply as a tree, to look into.
    pub(crate) fn to_value(&self) -> Value {
        match self {
            Reply::Tree(value) => value.clone(),
            Reply::Text(text) => serde_json::from_slice(text).unwrap(),
        }
    }
}

/// A successful response, written at once as text around `result` (which
/// may splice in text rendered earlier, as
/// [`RawValue`](serde_json::value::RawValue)s); `size` is about
/// how long it will be. A result that cannot be serialized (a map with
/// non-string keys) is answered with an internal error.
pub(crate) fn success_serialized(id: &Value, result: &impl Serialize, size: usize) -> Reply {
    let mut text = Vec::with_capacity(size + 64);
    match serde_json::to_writer(&mut text, &SuccessJson { id, result }) {
        Ok(()) => Reply::Text(text),
        Err(err) => Reply::Tree(failure(
            Some(id),
            &RpcError::new(
                INTERNAL_ERROR,
                format!("internal error: the result could not be serialized: {err}"),
            ),
        )),
    }
}

/// An error response; `id` is left out when the request's id was unreadable.
pub(crate) fn failure(id: Option<&Value>, error: &RpcError) -> Value {
    let mut body = Map::new();
    body.insert("code".into(), error.code.into());
    body.insert("message".into(), error.message.clone().into());
    if let Some(data) = &error.data {
        body.insert("data".into(), data.clone());
    }
    let mut out = Map::new();
    out.insert("jsonrpc".into(), "2.0".into());
    if let Some(id) = id {
        out.insert("id".into(), id.clone());
    }
    out.insert("error".into(), Value::Object(body));
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn refusal(message: Message) -> Invalid {
        match message {
            Message::Invalid(invalid) => invalid,
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn the_host_reads_requests_notifications_and_responses_by_their_shape() {
        let request = classify(json!({"jsonrpc":"2.0","id":1,"method":"ping"}));
        assert!(matches!(request, Message::Request { ref method, .. } if method == "ping"));
        let note = classify(json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
        assert_eq!(
            note,
            Message::Notification {
                method: "notifications/initialized".into(),
                params: None
            }
        );
        let response = classify(json!({"jsonrpc":"2.0","id":"a","result":{}}));
        assert_eq!(
            response,
            Message::Result {
                id: json!("a"),
                result: json!({})
            }
        );
        let error = json!({"code": INTERNAL_ERROR, "message": "no"});
        assert_eq!(
            classify(json!({"jsonrpc":"2.0","id":"a","error":error})),
            Message::Error {
                id: Some(json!("a")),
                error
            }
        );
    }

    #[test]
    fn the_host_takes_meta_out_of_params_and_a_peer_leaves_it() {
        let message = json!({"jsonrpc":"2.0","id":1,"method":"tools/list",
            "params":{"cursor":"c","_meta":{"progressToken":"t"}}});
        let Message::Request { params, meta, .. } = classify(message.clone()) else {
            panic!("not a request");
        };
        assert_eq!(params, Some(json!({"cursor": "c"})));
        assert!(meta.is_some());
        let Message::Request { params, meta, .. } = Message::of(&message) else {
            panic!("not a request");
        };
        assert_eq!(params, Some(&message["params"]));
        assert!(meta.is_none());
    }

    #[test]
    fn null_float_and_object_ids_are_invalid_and_unanswerable() {
        for id in [json!(null), json!(1.5), json!({}), json!(true)] {
            for message in [
                json!({"jsonrpc":"2.0","id":id,"method":"ping"}),
                json!({"jsonrpc":"2.0","id":id,"result":{}}),
                json!({"jsonrpc":"2.0","id":id,"error":{}}),
            ] {
                let err = refusal(classify(message));
                assert_eq!(err.error.code, INVALID_REQUEST);
                assert_eq!(err.id, None);
            }
            // A peer takes the shape as it comes.
            let peer = json!({"jsonrpc":"2.0","id":id,"method":"ping"});
            assert!(matches!(Message::of(&peer), Message::Request { .. }));
        }
    }

    #[test]
    fn a_missing_version_or_non_object_params_are_refused_with_the_id() {
        let err = refusal(classify(json!({"id":7,"method":"ping"})));
        assert_eq!((err.id, err.error.code), (Some(json!(7)), INVALID_REQUEST));
        let err = refusal(classify(
            json!({"jsonrpc":"2.0","id":7,"method":"ping","params":[1]}),
        ));
        assert_eq!((err.id, err.error.code), (Some(json!(7)), INVALID_PARAMS));
        let err = refusal(classify(
            json!({"jsonrpc":"2.0","id":7,"method":"ping","params":null}),
        ));
        assert_eq!((err.id, err.error.code), (Some(json!(7)), INVALID_PARAMS));
        // Neither reaches a peer's reader as invalid.
        for peer in [
            json!({"id":7,"method":"ping"}),
            json!({"jsonrpc":"2.0","id":7,"method":"ping","params":[1]}),
        ] {
            assert!(matches!(Message::of(&peer), Message::Request { .. }));
        }
    }

    #[test]
    fn the_host_refuses_an_error_it_cannot_tie_to_a_request_of_its_own() {
        let err = refusal(classify(
            json!({"jsonrpc":"2.0","error":{"code":1,"message":"m"}}),
        ));
        assert_eq!((err.id, err.error.code), (None, INVALID_REQUEST));
        let err = refusal(classify(json!([])));
        assert_eq!(err, not_an_object());
    }

    #[test]
    fn the_host_reads_a_body_as_it_reads_a_batch_item() {
        for message in [
            json!({"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"progressToken":1}}}),
            json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}),
            json!({"jsonrpc":"2.0","id":"x","result":{"roots":[]}}),
            json!({"jsonrpc":"2.0","id":"x","error":{"code":1,"message":"m"}}),
            json!({"jsonrpc":"1.0","id":1,"method":"ping"}),
            json!({"jsonrpc":"2.0","id":1,"result":{},"error":{}}),
            json!({"jsonrpc":"2.0","id":1}),
        ] {
            let Body::One(envelope) = parse(message.to_string().as_bytes()).unwrap() else {
                panic!("not one message");
            };
            assert_eq!(
                classify_envelope(envelope),
                classify(message.clone()),
                "{message}"
            );
        }
    }

    /// serde_json's maps keep their keys sorted in this build (no
    /// `preserve_order`): the exact texts below are what goes on the wire,
    /// the same as the `json!` each constructor replaced.
    #[test]
    fn constructors_write_the_envelope_byte_for_byte() {
        let text = |message: &Value| serde_json::to_string(message).unwrap();
        let request = request(7, "tools/list", json!({"cursor": "c"}));
        assert_eq!(
            text(&request),
            r#"{"id":7,"jsonrpc":"2.0","method":"tools/list","params":{"cursor":"c"}}"#
        );
        assert_eq!(
            request,
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"cursor": "c"}})
        );
        assert_eq!(
            text(&super::request("toolhost-ask-1", "roots/list", json!({}))),
            r#"{"id":"toolhost-ask-1","jsonrpc":"2.0","method":"roots/list","params":{}}"#
        );
        assert_eq!(
            text(&notification("notifications/tools/list_changed", None)),
            r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#
        );
        assert_eq!(
            text(&notification(
                "session/cancel",
                Some(json!({"sessionId": "s"}))
            )),
            r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#
        );
        assert_eq!(
            text(&success(&json!("a"), json!({}))),
            r#"{"id":"a","jsonrpc":"2.0","result":{}}"#
        );
        let mut error = RpcError::new(METHOD_NOT_FOUND, "no");
        assert_eq!(
            text(&failure(Some(&json!(4)), &error)),
            r#"{"error":{"code":-32601,"message":"no"},"id":4,"jsonrpc":"2.0"}"#
        );
        error.data = Some(json!({"x": 1}));
        assert_eq!(
            text(&failure(None, &error)),
            r#"{"error":{"code":-32601,"data":{"x":1},"message":"no"},"jsonrpc":"2.0"}"#
        );
    }

    #[test]
    fn an_error_object_is_read_only_with_a_code_and_a_message() {
        let mut read = RpcError::new(PARSE_ERROR, "parse");
        assert_eq!(
            RpcError::read(&json!({"code": PARSE_ERROR, "message": "parse"})),
            Some(read.clone())
        );
        read.data = Some(json!([1]));
        assert_eq!(
            RpcError::read(&json!({"code": PARSE_ERROR, "message": "parse", "data": [1]})),
            Some(read)
        );
        for broken in [
            json!({"message": "no code"}),
            json!({"code": 1}),
            json!({"code": 1.5, "message": "m"}),
            json!({"code": 1, "message": 2}),
            json!("text"),
        ] {
            assert_eq!(RpcError::read(&broken), None, "{broken}");
        }
    }

    #[test]
    fn a_serialized_success_reads_as_the_built_one() {
        let result = json!({"tools": [{"name": "t"}], "resultType": "complete"});
        let id = json!("a");
        let serialized = success_serialized(&id, &result, 0);
        assert!(matches!(serialized, Reply::Text(_)));
        assert_eq!(serialized.to_value(), success(&id, result.clone()));
        let tree = Reply::from(json!({"x": 1}));
        let batch = Reply::batch_text(&[serialized, tree]);
        let batch: Value = serde_json::from_slice(&batch).unwrap();
        assert_eq!(batch, json!([success(&id, result), {"x": 1}]));
        assert_eq!(Reply::batch_text(&[]), b"[]");
    }

    #[test]
    fn a_success_is_the_same_envelope_as_text_and_as_a_tree() {
        // The text keeps the writer's order; a tree sorts its keys. Both
        // are what goes on the wire today, for the replies built each way.
        let cases = [
            (
                json!(7),
                r#"{"jsonrpc":"2.0","id":7,"result":{"a":[1],"b":null}}"#,
                r#"{"id":7,"jsonrpc":"2.0","result":{"a":[1],"b":null}}"#,
            ),
            (
                json!("call-7"),
                r#"{"jsonrpc":"2.0","id":"call-7","result":{"a":[1],"b":null}}"#,
                r#"{"id":"call-7","jsonrpc":"2.0","result":{"a":[1],"b":null}}"#,
            ),
        ];
        for (id, text, tree) in cases {
            let result = json!({"b": null, "a": [1]});
            let written = success_serialized(&id, &result, 0).into_text();
            assert_eq!(String::from_utf8(written).unwrap(), text);
            let built = success(&id, result.clone());
            assert_eq!(serde_json::to_string(&built).unwrap(), tree);
            assert_ne!(
                built,
                success(&id, json!({})),
                "the result is the one given"
            );
        }
    }

    #[test]
    fn a_result_that_cannot_be_serialized_is_an_internal_error() {
        let mut keys = std::collections::BTreeMap::new();
        keys.insert(vec![1u8], 1);
        let reply = success_serialized(&json!(9), &keys, 0).to_value();
        assert_eq!(reply["id"], 9);
        assert_eq!(reply["error"]["code"], INTERNAL_ERROR);
        assert!(reply.get("result").is_none());
    }

    #[test]
    fn failure_leaves_out_an_unknown_id() {
        let body = failure(None, &RpcError::new(PARSE_ERROR, "bad"));
        assert!(body.get("id").is_none());
        assert_eq!(body["error"]["code"], PARSE_ERROR);
    }
}
