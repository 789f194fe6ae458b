//! Content blocks a tool result carries: text, image, audio, resource links
//! and embedded resources.
//!
//! A block is built once and rendered per revision: a revision that does not
//! know a block type (audio before 2025-03-26, resource links before
//! 2025-06-18) gets a text block that says what was there, so the model is
//! never handed a message its client must reject.

use serde_json::{json, Map, Value};

use crate::base64::base64_encode;
use crate::mcp::Revision;

/// One content block of a tool result.
///
/// ```
/// use toolhost::Content;
///
/// let png = Content::image(&[0x89, b'P', b'N', b'G'], "image/png");
/// let text = Content::text("done");
/// # let _ = (png, text);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Content {
    kind: Kind,
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Text(String),
    Image { data: String, mime_type: String },
    Audio { data: String, mime_type: String },
    Link(ResourceLink),
    Embedded(EmbeddedResource),
}

#[derive(Clone, Debug, PartialEq)]
struct ResourceLink {
    uri: String,
    name: String,
    mime_type: Option<String>,
    description: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
struct EmbeddedResource {
    uri: String,
    mime_type: Option<String>,
    body: ResourceBody,
}

#[derive(Clone, Debug, PartialEq)]
enum ResourceBody {
    Text(String),
    /// Base64 of the bytes.
    Blob(String),
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Content {
        Content {
            kind: Kind::Text(text.into()),
        }
    }

    /// An image block from raw bytes, base64-encoded here.
    pub fn image(bytes: &[u8], mime_type: impl Into<String>) -> Content {
        Content::image_base64(base64_encode(bytes), mime_type)
    }

    /// An image block from data that is already base64.
    pub fn image_base64(data: impl Into<String>, mime_type: impl Into<String>) -> Content {
        Content {
            kind: Kind::Image {
                data: data.into(),
                mime_type: mime_type.into(),
            },
        }
    }

    /// An audio block from raw bytes, base64-encoded here.
    pub fn audio(bytes: &[u8], mime_type: impl Into<String>) -> Content {
        Content::audio_base64(base64_encode(bytes), mime_type)
    }

    /// An audio block from data that is already base64.
    pub fn audio_base64(data: impl Into<String>, mime_type: impl Into<String>) -> Content {
        Content {
            kind: Kind::Audio {
                data: data.into(),
                mime_type: mime_type.into(),
            },
        }
    }

    /// A link to a resource the client may fetch itself.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Content {
        Content {
            kind: Kind::Link(ResourceLink {
                uri: uri.into(),
                name: name.into(),
                mime_type: None,
                description: None,
            }),
        }
    }

    /// An embedded resource whose contents are text.
    pub fn resource_text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Content {
        Content {
            kind: Kind::Embedded(EmbeddedResource {
                uri: uri.into(),
                mime_type: Some(mime_type.into()),
                body: ResourceBody::Text(text.into()),
            }),
        }
    }

    /// An embedded resource whose contents are bytes, base64-encoded here.
    pub fn resource_blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        bytes: &[u8],
    ) -> Content {
        Content {
            kind: Kind::Embedded(EmbeddedResource {
                uri: uri.into(),
                mime_type: Some(mime_type.into()),
                body: ResourceBody::Blob(base64_encode(bytes)),
            }),
        }
    }

    /// Sets the MIME type of a resource link; other blocks are unchanged.
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Content {
        if let Kind::Link(link) = &mut self.kind {
            link.mime_type = Some(mime_type.into());
        }
        self
    }

    /// Sets the description of a resource link; other blocks are unchanged.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Content {
        if let Kind::Link(link) = &mut self.kind {
            link.description = Some(description.into());
        }
        self
    }

    /// The text of a text block, `None` for any other block.
    pub fn as_text(&self) -> Option<&str> {
        match &self.kind {
            Kind::Text(text) => Some(text),
            _ => None,
        }
    }

    /// The block as the given revision spells it.
    pub(crate) fn to_json(&self, revision: Revision) -> Value {
        match &self.kind {
            Kind::Text(text) => json!({"type": "text", "text": text}),
            Kind::Image { data, mime_type } => {
                json!({"type": "image", "data": data, "mimeType": mime_type})
            }
            Kind::Audio { data, mime_type } if revision.has_audio_content() => {
                json!({"type": "audio", "data": data, "mimeType": mime_type})
            }
            Kind::Audio { mime_type, .. } => json!({
                "type": "text",
                "text": format!("[audio ({mime_type}) omitted: revision {revision} has no audio content]"),
            }),
            Kind::Link(link) if revision.has_resource_links() => {
                let mut out = Map::new();
                out.insert("type".into(), "resource_link".into());
                out.insert("uri".into(), link.uri.clone().into());
                out.insert("name".into(), link.name.clone().into());
                if let Some(mime) = &link.mime_type {
                    out.insert("mimeType".into(), mime.clone().into());
                }
                if let Some(description) = &link.description {
                    out.insert("description".into(), description.clone().into());
                }
                Value::Object(out)
            }
            Kind::Link(link) => json!({
                "type": "text",
                "text": format!("resource {} ({})", link.name, link.uri),
            }),
            Kind::Embedded(resource) => {
                let mut inner = Map::new();
                inner.insert("uri".into(), resource.uri.clone().into());
                if let Some(mime) = &resource.mime_type {
                    inner.insert("mimeType".into(), mime.clone().into());
                }
                match &resource.body {
                    ResourceBody::Text(text) => inner.insert("text".into(), text.clone().into()),
                    ResourceBody::Blob(blob) => inner.insert("blob".into(), blob.clone().into()),
                };
                json!({"type": "resource", "resource": Value::Object(inner)})
            }
        }
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Content {
        Content::text(text)
    }
}

impl From<String> for Content {
    fn from(text: String) -> Content {
        Content::text(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audio_becomes_text_for_a_revision_without_audio() {
        let audio = Content::audio(b"RIFF", "audio/wav");
        assert_eq!(audio.to_json(Revision::V2025_03_26)["type"], "audio");
        let old = audio.to_json(Revision::V2024_11_05);
        assert_eq!(old["type"], "text");
        assert!(old["text"]
            .as_str()
            .is_some_and(|t| t.contains("audio/wav")));
    }

    #[test]
    fn resource_links_become_text_before_2025_06_18() {
        let link = Content::resource_link("file:///a.txt", "a.txt").with_mime_type("text/plain");
        let new = link.to_json(Revision::V2025_06_18);
        assert_eq!(new["type"], "resource_link");
        assert_eq!(new["mimeType"], "text/plain");
        assert_eq!(link.to_json(Revision::V2025_03_26)["type"], "text");
    }
}
