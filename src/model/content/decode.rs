//! Content blocks read from another server's `CallToolResult`, as
//! [`crate::client`] receives them.
//!
//! Reading is lenient, as a client must be across revisions: a field this
//! crate does not model (a block's `_meta`, a role it does not know) is
//! passed over, and a block it cannot represent at all — a type it does
//! not know, or one missing a field its type needs — is kept whole, as
//! sent ([`Content::as_unknown`]), never refused: one odd block must not
//! cost the caller the rest of the result.

use serde_json::Value;

use super::{Annotations, Content, EmbeddedResource, Kind, ResourceBody, ResourceLink, Role};

impl Content {
    /// Reads one block of a `CallToolResult`'s `content`.
    pub(crate) fn from_json(block: Value) -> Content {
        match read_kind(&block) {
            Some(kind) => Content {
                kind,
                annotations: block
                    .get("annotations")
                    .map(read_annotations)
                    .unwrap_or_default(),
            },
            None => Content::of(Kind::Other(block)),
        }
    }
}

/// A string field of `value`.
fn text(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// The block's kind, when it is one this crate knows and has every field
/// that kind needs.
fn read_kind(block: &Value) -> Option<Kind> {
    match block.get("type").and_then(Value::as_str)? {
        "text" => text(block, "text").map(Kind::Text),
        "image" => Some(Kind::Image {
            data: text(block, "data")?,
            mime_type: text(block, "mimeType")?,
        }),
        "audio" => Some(Kind::Audio {
            data: text(block, "data")?,
            mime_type: text(block, "mimeType")?,
        }),
        "resource_link" => Some(Kind::Link(ResourceLink {
            uri: text(block, "uri")?,
            name: text(block, "name")?,
            title: text(block, "title"),
            mime_type: text(block, "mimeType"),
            description: text(block, "description"),
            size: block.get("size").and_then(Value::as_u64),
        })),
        "resource" => {
            let resource = block.get("resource")?;
            // A resource is text or bytes, never both: one with both (or
            // neither) is kept as sent rather than read as half of itself.
            let body = match (text(resource, "text"), text(resource, "blob")) {
                (Some(text), None) => ResourceBody::Text(text),
                (None, Some(blob)) => ResourceBody::Blob(blob),
                _ => return None,
            };
            Some(Kind::Embedded(EmbeddedResource {
                uri: text(resource, "uri")?,
                mime_type: text(resource, "mimeType"),
                body,
            }))
        }
        _ => None,
    }
}

/// A block's `annotations`: the audience's known roles, the priority and
/// `lastModified`, each kept when it has the right type.
fn read_annotations(value: &Value) -> Annotations {
    let audience = value
        .get("audience")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|role| match role.as_str()? {
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            _ => None,
        })
        .collect();
    Annotations {
        audience,
        priority: value.get("priority").and_then(Value::as_f64),
        last_modified: text(value, "lastModified"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::model::Revision;

    #[test]
    fn every_content_type_of_the_schema_is_read_and_unknown_ones_are_kept_as_sent() {
        let read = |block: Value| Content::from_json(block);
        assert_eq!(
            read(json!({"type": "text", "text": "a"})),
            Content::text("a")
        );
        assert_eq!(
            read(json!({"type": "image", "data": "AAA=", "mimeType": "image/png"})),
            Content::image_base64("AAA=", "image/png")
        );
        assert_eq!(
            read(json!({"type": "audio", "data": "BBB=", "mimeType": "audio/wav"})),
            Content::audio_base64("BBB=", "audio/wav")
        );
        assert_eq!(
            read(
                json!({"type": "resource_link", "uri": "file:///x", "name": "x",
                "mimeType": "text/plain", "size": 3})
            ),
            Content::resource_link("file:///x", "x")
                .with_mime_type("text/plain")
                .with_size(3)
        );
        assert_eq!(
            read(json!({"type": "resource",
                "resource": {"uri": "file:///y", "mimeType": "text/csv", "text": "why"}})),
            Content::resource_text("file:///y", "text/csv", "why")
        );
        assert_eq!(
            read(json!({"type": "resource",
                "resource": {"uri": "file:///z", "mimeType": "application/octet-stream", "blob": "AQI="}})),
            Content::resource_blob("file:///z", "application/octet-stream", &[1, 2])
        );
        let untyped =
            read(json!({"type": "resource", "resource": {"uri": "file:///w", "text": "t"}}));
        assert_eq!(untyped.as_unknown(), None);
        assert_eq!(
            serde_json::to_value(&untyped).unwrap(),
            json!({"type": "resource", "resource": {"uri": "file:///w", "text": "t"}})
        );
        for unknown in [
            json!({"type": "hologram", "frames": 3}),
            json!({"type": "text"}),
            json!({"type": "image", "data": "AAA="}),
            json!({"type": "resource", "resource": {"uri": "file:///v", "text": "t", "blob": "AA=="}}),
            json!({"text": "no type"}),
        ] {
            let block = read(unknown.clone());
            assert_eq!(block.as_unknown(), Some(&unknown));
            assert_eq!(block.as_text(), None);
            for revision in Revision::ALL {
                assert_eq!(
                    serde_json::to_value(block.json(revision)).unwrap(),
                    unknown,
                    "sent on as it came"
                );
            }
        }
    }

    #[test]
    fn annotations_are_read_with_the_roles_this_crate_knows() {
        let block = Content::from_json(json!({
            "type": "text", "text": "x", "_meta": {"k": 1},
            "annotations": {"audience": ["user", "robot"], "priority": 0.5,
                "lastModified": "2025-01-12T15:00:58Z"},
        }));
        assert_eq!(
            block,
            Content::text("x")
                .with_audience([Role::User])
                .with_priority(0.5)
                .with_last_modified("2025-01-12T15:00:58Z")
        );
        assert_ne!(block, Content::text("x"));
    }
}
