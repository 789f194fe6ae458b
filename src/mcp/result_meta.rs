//! What every 2026-07-28 result carries beyond its own fields:
//! `resultType`, the server's identity in `_meta` (one spelling, written
//! straight to text for a call's result and as a tree elsewhere), and a
//! list's caching hints. Shared by the stateless dispatcher, the tool
//! calls and the result writer, which is why it is not in any of them.

use serde_core::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

use super::Server;

/// The `_meta` key of the server's identity.
const META_SERVER: &str = "io.modelcontextprotocol/serverInfo";

/// Adds what every 2026-07-28 result carries: `resultType` and the server's
/// identity in `_meta`.
pub(crate) fn complete(server: &Server, mut result: Value) -> Value {
    if let Value::Object(fields) = &mut result {
        complete_fields(server, fields);
    }
    result
}

/// [`complete`], on a result's fields.
pub(super) fn complete_fields(server: &Server, fields: &mut Map<String, Value>) {
    fields
        .entry("resultType")
        .or_insert_with(|| "complete".into());
    let meta = fields
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    // The identity as `ServerMeta` spells it for the results written
    // straight to text, so that the two ways cannot drift apart.
    if let (Value::Object(meta), Ok(Value::Object(identity))) =
        (meta, serde_json::to_value(ServerMeta(server)))
    {
        meta.extend(identity);
    }
}

/// The server's identity in a result's `_meta`: its one spelling, written
/// straight to text for a call's result and made a tree by [`complete`].
pub(super) struct ServerMeta<'a>(pub(super) &'a Server);

impl Serialize for ServerMeta<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Identity<'a>(&'a Server);
        impl Serialize for Identity<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("name", &self.0.server_name)?;
                map.serialize_entry("version", &self.0.server_version)?;
                map.end()
            }
        }
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry(META_SERVER, &Identity(self.0))?;
        map.end()
    }
}

/// Adds the caching hints 2026-07-28 gives with every list.
pub(super) fn add_cache_hints(server: &Server, fields: &mut Map<String, Value>) {
    fields.insert("ttlMs".into(), server.tools_cache.ttl_ms.into());
    fields.insert(
        "cacheScope".into(),
        server.tools_cache.scope.as_str().into(),
    );
}
