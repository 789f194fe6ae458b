//! A request's `params._meta`, read into the members the host uses.
//!
//! A 2026-07-28 request carries its protocol version, the client's
//! capabilities and identity in `params._meta`, under keys forty bytes
//! long; any request may carry a progress token there. Built as a `Value`
//! tree, that map, its keys and their lookups would cost a stateless call
//! more than the rest of its params (BENCHMARKS.md). So a request's
//! `params` is read with `_meta` split off into [`RequestMeta`] (see
//! [`Params`]): the members the host reads are kept as sent, any other is
//! parsed (its JSON checked as strictly as the rest of `params`) and
//! dropped. Nothing else in the host reads `_meta`.

use std::fmt;
use std::sync::Arc;

use serde_core::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::member::{MemberName, Named};
use super::ClientInfo;

/// The namespace of the keys MCP itself puts in `_meta`.
pub(crate) const MODERN_PREFIX: &str = "io.modelcontextprotocol/";
/// `_meta` key: the request's progress token.
pub(crate) const PROGRESS_TOKEN: &str = "progressToken";
/// `_meta` key (2026-07-28): the revision the request speaks.
pub(crate) const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key (2026-07-28): the client's capabilities.
pub(crate) const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key (2026-07-28): the client's name and version.
pub(crate) const META_CLIENT: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key (2026-07-28): the log level the client asks for.
pub(crate) const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// The members of a request's `params._meta` the host reads, each as sent
/// (`None` when absent, or when `_meta` is not an object), but the client's
/// identity, which is read as it is kept.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct RequestMeta {
    pub(crate) progress_token: Option<Value>,
    pub(crate) protocol_version: Option<Value>,
    pub(crate) client_capabilities: Option<Value>,
    /// `clientInfo` when well-formed (see [`ClientInfo::read`]); `None`
    /// when absent or not.
    pub(crate) client_info: Option<Arc<ClientInfo>>,
    pub(crate) log_level: Option<Value>,
    /// Whether any key, read or not, is in the `io.modelcontextprotocol/`
    /// namespace (how a 2026-07-28 request is told from others).
    pub(crate) modern_keys: bool,
}

/// The `_meta` of a request that sent none.
static NO_META: RequestMeta = RequestMeta {
    progress_token: None,
    protocol_version: None,
    client_capabilities: None,
    client_info: None,
    log_level: None,
    modern_keys: false,
};

/// `_meta` as a message carries it: boxed, since most requests of the
/// stateful eras send none and a message is moved several times.
pub(crate) type Meta = Option<Box<RequestMeta>>;

impl RequestMeta {
    /// The members `meta` carries; none when the request sent no `_meta`.
    pub(crate) fn of(meta: &Meta) -> &RequestMeta {
        meta.as_deref().unwrap_or(&NO_META)
    }

    /// Takes `_meta` out of `params` parsed already as a tree (a batch's
    /// items are), leaving `params` as [`Params`] would have read it.
    pub(crate) fn take_from(params: &mut Value) -> RequestMeta {
        let Some(Value::Object(mut meta)) = params.as_object_mut().and_then(|p| p.remove("_meta"))
        else {
            return RequestMeta::default();
        };
        let modern_keys = meta.keys().any(|key| key.starts_with(MODERN_PREFIX));
        RequestMeta {
            modern_keys,
            progress_token: meta.remove(PROGRESS_TOKEN),
            protocol_version: meta.remove(META_VERSION),
            client_capabilities: meta.remove(META_CAPABILITIES),
            client_info: meta
                .remove(META_CLIENT)
                .as_ref()
                .and_then(ClientInfo::read)
                .map(Arc::new),
            log_level: meta.remove(META_LOG_LEVEL),
        }
    }

    fn slot(&mut self, key: MetaKey) -> Option<&mut Option<Value>> {
        match key {
            MetaKey::ProgressToken => Some(&mut self.progress_token),
            MetaKey::Version => Some(&mut self.protocol_version),
            MetaKey::Capabilities => Some(&mut self.client_capabilities),
            MetaKey::LogLevel => Some(&mut self.log_level),
            MetaKey::Client | MetaKey::OtherModern | MetaKey::Other => None,
        }
    }
}

/// A request's `params` as read from the body: the params without `_meta`
/// (exactly the tree serde_json would build for everything else, any JSON
/// type), and `_meta`'s members when it was sent.
pub(crate) struct Params(pub(crate) Value, pub(crate) Meta);

impl<'de> Deserialize<'de> for Params {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Params, D::Error> {
        deserializer.deserialize_any(ParamsVisitor)
    }
}

struct ParamsVisitor;

impl<'de> Visitor<'de> for ParamsVisitor {
    type Value = Params;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("JSON-RPC params")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Params, A::Error> {
        let mut members = Map::new();
        let mut meta = None;
        while let Some(key) = map.next_key::<ParamsKey>()? {
            match key {
                // Sent twice, the last one counts, as in a map.
                ParamsKey::Meta => meta = Some(Box::new(map.next_value()?)),
                ParamsKey::Other(name) => {
                    members.insert(name, map.next_value()?);
                }
            }
        }
        Ok(Params(Value::Object(members), meta))
    }

    // Not an object: the value as a tree, for the envelope to refuse.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Params, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(plain(Value::Array(items)))
    }

    fn visit_bool<E>(self, value: bool) -> Result<Params, E> {
        Ok(plain(value.into()))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Params, E> {
        Ok(plain(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Params, E> {
        Ok(plain(value.into()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Params, E> {
        Ok(plain(value.into()))
    }

    fn visit_str<E>(self, value: &str) -> Result<Params, E> {
        Ok(plain(value.into()))
    }

    fn visit_string<E>(self, value: String) -> Result<Params, E> {
        Ok(plain(value.into()))
    }

    fn visit_unit<E>(self) -> Result<Params, E> {
        Ok(plain(Value::Null))
    }
}

fn plain(value: Value) -> Params {
    Params(value, None)
}

/// A key of `params`: `_meta`, or any other, owned for the tree.
enum ParamsKey {
    Meta,
    Other(String),
}

impl<'de> Deserialize<'de> for ParamsKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ParamsKey, D::Error> {
        deserializer.deserialize_string(ParamsKeyVisitor)
    }
}

struct ParamsKeyVisitor;

impl Visitor<'_> for ParamsKeyVisitor {
    type Value = ParamsKey;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a member name")
    }

    fn visit_str<E>(self, name: &str) -> Result<ParamsKey, E> {
        Ok(match name {
            "_meta" => ParamsKey::Meta,
            other => ParamsKey::Other(other.to_owned()),
        })
    }

    fn visit_string<E>(self, name: String) -> Result<ParamsKey, E> {
        Ok(match name.as_str() {
            "_meta" => ParamsKey::Meta,
            _ => ParamsKey::Other(name),
        })
    }
}

/// The `visit_*` methods of a visitor for which any JSON but an object
/// reads as `$value`'s default. The value is still parsed in full (an
/// array's items too), so that it is held to the same JSON as the rest of
/// params.
macro_rules! others_read_as_default {
    ($de:lifetime, $value:ty) => {
        fn visit_seq<A: SeqAccess<$de>>(self, mut seq: A) -> Result<$value, A::Error> {
            while seq.next_element::<Value>()?.is_some() {}
            Ok(<$value>::default())
        }

        fn visit_bool<E>(self, _: bool) -> Result<$value, E> {
            Ok(<$value>::default())
        }

        fn visit_i64<E>(self, _: i64) -> Result<$value, E> {
            Ok(<$value>::default())
        }

        fn visit_u64<E>(self, _: u64) -> Result<$value, E> {
            Ok(<$value>::default())
        }

        fn visit_f64<E>(self, _: f64) -> Result<$value, E> {
            Ok(<$value>::default())
        }

        fn visit_str<E>(self, _: &str) -> Result<$value, E> {
            Ok(<$value>::default())
        }

        fn visit_unit<E>(self) -> Result<$value, E> {
            Ok(<$value>::default())
        }
    };
}

impl<'de> Deserialize<'de> for RequestMeta {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<RequestMeta, D::Error> {
        deserializer.deserialize_any(MetaVisitor)
    }
}

struct MetaVisitor;

impl<'de> Visitor<'de> for MetaVisitor {
    type Value = RequestMeta;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("params._meta")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RequestMeta, A::Error> {
        let mut meta = RequestMeta::default();
        while let Some(Named(key)) = map.next_key::<Named<MetaKey>>()? {
            meta.modern_keys |= !matches!(key, MetaKey::ProgressToken | MetaKey::Other);
            if let MetaKey::Client = key {
                let Identity(info) = map.next_value()?;
                meta.client_info = info.map(Arc::new);
                continue;
            }
            // Every member is parsed in full, so that `_meta` is held to
            // the same JSON as the rest of params (a number out of range
            // is a parse error anywhere in them).
            let value: Value = map.next_value()?;
            if let Some(slot) = meta.slot(key) {
                *slot = Some(value);
            }
        }
        Ok(meta)
    }

    // `_meta` that is not an object has none of the members.
    others_read_as_default!('de, RequestMeta);
}

/// `clientInfo` read straight into what the host keeps of it, as
/// [`ClientInfo::read`] reads it from a tree: `None` unless an object whose
/// (last) `name` and `version` are strings. Every member is still parsed in
/// full. Its tree was a map, four strings and their frees on every
/// 2026-07-28 request.
#[derive(Default)]
struct Identity(Option<ClientInfo>);

impl<'de> Deserialize<'de> for Identity {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Identity, D::Error> {
        deserializer.deserialize_any(IdentityVisitor)
    }
}

struct IdentityVisitor;

impl<'de> Visitor<'de> for IdentityVisitor {
    type Value = Identity;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("clientInfo")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Identity, A::Error> {
        let (mut name, mut version) = (None, None);
        while let Some(Named(key)) = map.next_key::<Named<IdentityKey>>()? {
            let text = match map.next_value()? {
                Value::String(text) => Some(text),
                _ => None,
            };
            match key {
                IdentityKey::Name => name = text,
                IdentityKey::Version => version = text,
                IdentityKey::Other => {}
            }
        }
        Ok(Identity(
            name.zip(version)
                .map(|(name, version)| ClientInfo { name, version }),
        ))
    }

    // `clientInfo` that is not an object names no client.
    others_read_as_default!('de, Identity);
}

/// A key of `clientInfo`, matched without allocating it.
enum IdentityKey {
    Name,
    Version,
    Other,
}

impl MemberName for IdentityKey {
    fn of(name: &str) -> IdentityKey {
        match name {
            "name" => IdentityKey::Name,
            "version" => IdentityKey::Version,
            _ => IdentityKey::Other,
        }
    }
}

/// A key of `_meta`, matched without allocating it.
#[derive(Clone, Copy)]
enum MetaKey {
    ProgressToken,
    Version,
    Capabilities,
    Client,
    LogLevel,
    /// Another key in the `io.modelcontextprotocol/` namespace.
    OtherModern,
    Other,
}

impl MemberName for MetaKey {
    fn of(name: &str) -> MetaKey {
        match name {
            PROGRESS_TOKEN => MetaKey::ProgressToken,
            META_VERSION => MetaKey::Version,
            META_CAPABILITIES => MetaKey::Capabilities,
            META_CLIENT => MetaKey::Client,
            META_LOG_LEVEL => MetaKey::LogLevel,
            other if other.starts_with(MODERN_PREFIX) => MetaKey::OtherModern,
            _ => MetaKey::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Reading `params` from text splits `_meta` off exactly as
    /// [`RequestMeta::take_from`] splits it off a tree.
    fn both(params: Value) -> (Value, RequestMeta) {
        let Params(read, meta) = serde_json::from_str(&params.to_string()).unwrap();
        let meta = meta.map(|meta| *meta).unwrap_or_default();
        let mut taken = params;
        let from_tree = RequestMeta::take_from(&mut taken);
        assert_eq!(
            (&read, &meta),
            (&taken, &from_tree),
            "text and tree disagree"
        );
        (read, meta)
    }

    #[test]
    fn the_members_the_host_reads_are_kept_and_the_rest_of_params_is_untouched() {
        let (rest, meta) = both(json!({
            "name": "echo",
            "arguments": {"text": "hi", "_meta": "stays"},
            "_meta": {
                "progressToken": 7,
                META_VERSION: "2026-07-28",
                META_CAPABILITIES: {"elicitation": {}},
                META_CLIENT: {"name": "c", "version": "1"},
                META_LOG_LEVEL: "debug",
                "vendor/other": [1, 2]
            }
        }));
        assert_eq!(
            rest,
            json!({"name": "echo", "arguments": {"text": "hi", "_meta": "stays"}})
        );
        assert_eq!(meta.progress_token, Some(json!(7)));
        assert_eq!(meta.protocol_version, Some(json!("2026-07-28")));
        assert_eq!(meta.client_capabilities, Some(json!({"elicitation": {}})));
        assert_eq!(
            meta.client_info.as_deref(),
            Some(&ClientInfo {
                name: "c".into(),
                version: "1".into()
            })
        );
        assert_eq!(meta.log_level, Some(json!("debug")));
        assert!(meta.modern_keys);
    }

    #[test]
    fn a_key_in_mcps_namespace_is_noticed_even_when_not_read() {
        let (_, meta) = both(json!({"_meta": {"io.modelcontextprotocol/related": 1}}));
        assert!(meta.modern_keys);
        assert_eq!(meta.protocol_version, None);
        let (_, meta) = both(json!({"_meta": {"progressToken": 1, "vendor/x": 2}}));
        assert!(!meta.modern_keys);
    }

    #[test]
    fn meta_that_is_not_an_object_has_no_members_and_wrong_types_are_kept_as_sent() {
        for odd in [
            json!(5),
            json!("x"),
            json!([1, {"a": 2}]),
            json!(null),
            json!(true),
        ] {
            let (rest, meta) = both(json!({"name": "echo", "_meta": odd}));
            assert_eq!(rest, json!({"name": "echo"}));
            assert_eq!(meta, RequestMeta::default());
        }
        let (_, meta) = both(json!({"_meta": {META_VERSION: 2026, META_CAPABILITIES: "all"}}));
        assert_eq!(meta.protocol_version, Some(json!(2026)));
        assert_eq!(meta.client_capabilities, Some(json!("all")));
    }

    #[test]
    fn client_info_is_kept_only_when_name_and_version_are_strings() {
        let info = |value: Value| both(json!({"_meta": {META_CLIENT: value}})).1;
        for odd in [
            json!("claude"),
            json!(["claude", "1"]),
            json!(null),
            json!({"name": "claude"}),
            json!({"name": "claude", "version": 1}),
            json!({"name": {"first": "claude"}, "version": "1"}),
        ] {
            let meta = info(odd.clone());
            assert_eq!(meta.client_info, None, "{odd}");
            assert!(
                meta.modern_keys,
                "the key is MCP's even when its value is odd"
            );
        }
        let meta =
            info(json!({"title": "Claude", "version": "2", "name": "claude", "extra": [1e3]}));
        assert_eq!(
            meta.client_info.as_deref(),
            Some(&ClientInfo {
                name: "claude".into(),
                version: "2".into()
            })
        );
        let text = format!(
            r#"{{"_meta": {{"{META_CLIENT}": {{"name": "a", "version": "1", "name": 5}}}}}}"#
        );
        let Params(_, meta) = serde_json::from_str(&text).unwrap();
        assert_eq!(meta.unwrap().client_info, None, "the last name counts");
        let text =
            format!(r#"{{"_meta": {{"{META_CLIENT}": {{"name": "a", "version": 1e400}}}}}}"#);
        assert!(serde_json::from_str::<Params>(&text).is_err());
    }

    #[test]
    fn params_that_are_not_an_object_are_read_as_they_are() {
        for odd in [
            json!([1, 2]),
            json!("x"),
            json!(1.5),
            json!(-3),
            json!(null),
            json!(false),
        ] {
            let (read, meta) = both(odd.clone());
            assert_eq!(read, odd);
            assert_eq!(meta, RequestMeta::default());
        }
    }

    #[test]
    fn a_member_sent_twice_keeps_its_last_value() {
        let text = r#"{"_meta": {"progressToken": 1}, "name": "a", "name": "b", "_meta": {"progressToken": 2, "progressToken": 3}}"#;
        let Params(rest, meta) = serde_json::from_str(text).unwrap();
        assert_eq!(rest, json!({"name": "b"}));
        assert_eq!(meta.unwrap().progress_token, Some(json!(3)));
    }

    #[test]
    fn a_number_out_of_range_in_meta_is_a_parse_error_as_anywhere_in_params() {
        for text in [
            r#"{"_meta": {"vendor/x": 1e400}}"#,
            r#"{"_meta": [1e400]}"#,
            r#"{"a": 1e400}"#,
        ] {
            assert!(serde_json::from_str::<Params>(text).is_err(), "{text}");
        }
    }
}
