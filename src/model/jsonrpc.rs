//! The JSON-RPC 2.0 envelope: classifying what arrived, and spelling replies.
//!
//! MCP ids are strings or integers, never null; a message whose id is
//! anything else is an invalid request, answered without an id.

use std::fmt;

use serde_core::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_core::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

use super::member::{MemberName, Named};
use super::meta::{Meta, Params, RequestMeta};

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
}

/// A message from the client, classified.
#[derive(Debug, PartialEq)]
pub(crate) enum Message {
    /// A request: needs a response.
    Request {
        id: Value,
        method: String,
        /// Without `_meta`, whose members are `meta`.
        params: Option<Value>,
        meta: Meta,
    },
    /// A notification: no response.
    Notification {
        method: String,
        params: Option<Value>,
    },
    /// The client's response to a request of ours: its result, or its
    /// error object.
    Response {
        id: Value,
        outcome: Result<Value, Value>,
    },
}

/// Why a message could not be classified, with the id to answer when one was
/// readable.
#[derive(Debug, PartialEq)]
pub(crate) struct Invalid {
    pub(crate) id: Option<Value>,
    pub(crate) error: RpcError,
}

fn valid_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

/// A POST body as read: one message, a batch, or JSON that is neither an
/// object nor an array.
#[derive(Debug)]
pub(crate) enum Body {
    One(Envelope),
    Batch(Vec<Value>),
    NotAnObject,
}

/// The members of one message that JSON-RPC gives a meaning to, each as
/// sent; any other member is read past (its JSON still checked) and
/// dropped. A body is read straight into this rather than into a
/// [`Value`] tree first: most of what a tree of a small request costs is
/// its top-level map and the keys it allocates. `params` is kept without
/// its `_meta`, whose members the host reads are `meta` (see
/// [`super::meta`]).
#[derive(Debug, Default)]
pub(crate) struct Envelope {
    jsonrpc: Option<Value>,
    id: Option<Value>,
    method: Option<Value>,
    params: Option<Value>,
    meta: Meta,
    result: Option<Value>,
    error: Option<Value>,
}

impl Envelope {
    /// The envelope of a message already parsed (a batch's item); `None`
    /// when it is not an object.
    fn of(value: Value) -> Option<Envelope> {
        let Value::Object(mut object) = value else {
            return None;
        };
        let mut params = object.remove("params");
        let meta = params
            .as_mut()
            .map(|params| Box::new(RequestMeta::take_from(params)));
        Some(Envelope {
            jsonrpc: object.remove("jsonrpc"),
            id: object.remove("id"),
            method: object.remove("method"),
            params,
            meta,
            result: object.remove("result"),
            error: object.remove("error"),
        })
    }

    /// The message's id, when it has a valid one: what a refusal decided
    /// before classification should still answer to.
    pub(crate) fn request_id(&self) -> Option<&Value> {
        self.id.as_ref().filter(|id| valid_id(id))
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
            let slot = match member {
                Member::Jsonrpc => &mut envelope.jsonrpc,
                Member::Id => &mut envelope.id,
                Member::Method => &mut envelope.method,
                Member::Params => {
                    let Params(params, meta) = map.next_value()?;
                    envelope.params = Some(params);
                    envelope.meta = meta;
                    continue;
                }
                Member::Result => &mut envelope.result,
                Member::Error => &mut envelope.error,
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

/// Classifies one JSON-RPC message already parsed.
pub(crate) fn classify(value: Value) -> Result<Message, Invalid> {
    match Envelope::of(value) {
        Some(envelope) => classify_envelope(envelope),
        None => Err(not_an_object()),
    }
}

/// Why a body that is neither an object nor a batch is refused.
pub(crate) fn not_an_object() -> Invalid {
    Invalid {
        id: None,
        error: RpcError::new(INVALID_REQUEST, "a JSON-RPC message must be a JSON object"),
    }
}

/// Classifies one JSON-RPC message by its envelope.
pub(crate) fn classify_envelope(envelope: Envelope) -> Result<Message, Invalid> {
    let Envelope {
        jsonrpc,
        id,
        method,
        params,
        meta,
        result,
        error,
    } = envelope;
    let readable_id = id.clone().filter(valid_id);
    let invalid = |message: &str| Invalid {
        id: readable_id.clone(),
        error: RpcError::new(INVALID_REQUEST, message),
    };
    if jsonrpc.as_ref().and_then(Value::as_str) != Some("2.0") {
        return Err(invalid("the message must carry \"jsonrpc\": \"2.0\""));
    }
    if let Some(id) = &id {
        if !valid_id(id) {
            return Err(invalid("an MCP request id must be a string or an integer"));
        }
    }
    match (method, id) {
        (Some(Value::String(method)), Some(id)) => {
            if params.as_ref().is_some_and(|p| !p.is_object()) {
                return Err(Invalid {
                    id: Some(id),
                    error: RpcError::invalid_params("params must be a JSON object"),
                });
            }
            Ok(Message::Request {
                id,
                method,
                params,
                meta,
            })
        }
        (Some(Value::String(method)), None) => Ok(Message::Notification { method, params }),
        (Some(_), _) => Err(invalid("method must be a string")),
        (None, Some(id)) if result.is_some() || error.is_some() => {
            let outcome = match result {
                Some(result) => Ok(result),
                None => Err(error.unwrap_or(Value::Null)),
            };
            Ok(Message::Response { id, outcome })
        }
        (None, _) => Err(invalid(
            "the message is neither a request, a notification nor a response",
        )),
    }
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

    #[test]
    fn requests_notifications_and_responses_are_told_apart() {
        let request = classify(json!({"jsonrpc":"2.0","id":1,"method":"ping"})).unwrap();
        assert!(matches!(request, Message::Request { ref method, .. } if method == "ping"));
        let note = classify(json!({"jsonrpc":"2.0","method":"notifications/initialized"})).unwrap();
        assert_eq!(
            note,
            Message::Notification {
                method: "notifications/initialized".into(),
                params: None
            }
        );
        let response = classify(json!({"jsonrpc":"2.0","id":"a","result":{}})).unwrap();
        assert_eq!(
            response,
            Message::Response {
                id: json!("a"),
                outcome: Ok(json!({}))
            }
        );
    }

    #[test]
    fn null_float_and_object_ids_are_invalid_and_unanswerable() {
        for id in [json!(null), json!(1.5), json!({}), json!(true)] {
            let err = classify(json!({"jsonrpc":"2.0","id":id,"method":"ping"})).unwrap_err();
            assert_eq!(err.error.code, INVALID_REQUEST);
            assert_eq!(err.id, None);
        }
    }

    #[test]
    fn a_missing_version_or_non_object_params_are_refused_with_the_id() {
        let err = classify(json!({"id":7,"method":"ping"})).unwrap_err();
        assert_eq!((err.id, err.error.code), (Some(json!(7)), INVALID_REQUEST));
        let err =
            classify(json!({"jsonrpc":"2.0","id":7,"method":"ping","params":[1]})).unwrap_err();
        assert_eq!((err.id, err.error.code), (Some(json!(7)), INVALID_PARAMS));
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
