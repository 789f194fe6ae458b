//! Content blocks a tool result carries: text, image, audio, resource links
//! and embedded resources, each optionally annotated for the client.
//!
//! A block is built once and rendered per revision: a revision that does not
//! know a block type (audio before 2025-03-26, resource links before
//! 2025-06-18) gets a text block that says what was there, so the model is
//! never handed a message its client must reject. Likewise a field a
//! revision does not know (`lastModified` before 2025-06-18) is left out.

use serde_core::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{json, Map, Value};

use super::revision::Revision;
use crate::base64::base64_encode;

mod decode;

/// One content block of a tool result.
///
/// ```
/// use toolhost::{Content, Role, ToolOutcome};
///
/// let outcome = ToolOutcome::content([
///     Content::text("Rendered the chart; the raw data is attached."),
///     Content::image(&[0x89, b'P', b'N', b'G'], "image/png").with_audience([Role::User]),
///     Content::resource_text("file:///data.csv", "text/csv", "x,y\n1,2\n")
///         .with_priority(0.2)
///         .with_last_modified("2025-01-12T15:00:58Z"),
///     Content::resource_link("file:///report.pdf", "report.pdf")
///         .with_mime_type("application/pdf")
///         .with_size(48_213),
/// ]);
/// # let _ = outcome;
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Content {
    kind: Kind,
    annotations: Annotations,
}

/// Who a content block is meant for, in its annotations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The person using the client.
    User,
    /// The model.
    Assistant,
}

impl Role {
    fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// MCP's `Annotations` of a block; all optional, sent only when set.
#[derive(Clone, Debug, Default, PartialEq)]
struct Annotations {
    audience: Vec<Role>,
    priority: Option<f64>,
    last_modified: Option<String>,
}

impl Annotations {
    /// The annotations as the revision spells them, `None` when there are none.
    fn to_json(&self, revision: Revision) -> Option<Value> {
        let mut out = Map::new();
        if !self.audience.is_empty() {
            let audience: Vec<Value> = self.audience.iter().map(|r| r.as_str().into()).collect();
            out.insert("audience".into(), audience.into());
        }
        if let Some(priority) = self.priority {
            out.insert("priority".into(), priority.into());
        }
        if let Some(when) = self
            .last_modified
            .as_ref()
            .filter(|_| revision.has_last_modified())
        {
            out.insert("lastModified".into(), when.clone().into());
        }
        (!out.is_empty()).then_some(Value::Object(out))
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Text(String),
    Image {
        data: String,
        mime_type: String,
    },
    Audio {
        data: String,
        mime_type: String,
    },
    Link(ResourceLink),
    Embedded(EmbeddedResource),
    /// A block read from another server that this crate cannot represent
    /// (a type it does not know, or one missing a field its type needs),
    /// kept as sent and sent on as it came.
    Other(Value),
}

#[derive(Clone, Debug, PartialEq)]
struct ResourceLink {
    uri: String,
    name: String,
    title: Option<String>,
    mime_type: Option<String>,
    description: Option<String>,
    size: Option<u64>,
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
    fn of(kind: Kind) -> Content {
        Content {
            kind,
            annotations: Annotations::default(),
        }
    }

    /// A text block.
    pub fn text(text: impl Into<String>) -> Content {
        Content::of(Kind::Text(text.into()))
    }

    /// An image block from raw bytes, base64-encoded here.
    pub fn image(bytes: &[u8], mime_type: impl Into<String>) -> Content {
        Content::image_base64(base64_encode(bytes), mime_type)
    }

    /// An image block from data that is already base64.
    pub fn image_base64(data: impl Into<String>, mime_type: impl Into<String>) -> Content {
        Content::of(Kind::Image {
            data: data.into(),
            mime_type: mime_type.into(),
        })
    }

    /// An audio block from raw bytes, base64-encoded here. Revisions before
    /// 2025-03-26 have no audio; they get a text block naming what was left
    /// out.
    pub fn audio(bytes: &[u8], mime_type: impl Into<String>) -> Content {
        Content::audio_base64(base64_encode(bytes), mime_type)
    }

    /// An audio block from data that is already base64.
    pub fn audio_base64(data: impl Into<String>, mime_type: impl Into<String>) -> Content {
        Content::of(Kind::Audio {
            data: data.into(),
            mime_type: mime_type.into(),
        })
    }

    /// A link to a resource the client may fetch itself. Revisions before
    /// 2025-06-18 have no links; they get a text block with the name and URI.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Content {
        Content::of(Kind::Link(ResourceLink {
            uri: uri.into(),
            name: name.into(),
            title: None,
            mime_type: None,
            description: None,
            size: None,
        }))
    }

    /// An embedded resource whose contents are text.
    pub fn resource_text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Content {
        Content::of(Kind::Embedded(EmbeddedResource {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            body: ResourceBody::Text(text.into()),
        }))
    }

    /// An embedded resource whose contents are bytes, base64-encoded here.
    pub fn resource_blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        bytes: &[u8],
    ) -> Content {
        Content::of(Kind::Embedded(EmbeddedResource {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            body: ResourceBody::Blob(base64_encode(bytes)),
        }))
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

    /// Sets the display title of a resource link; other blocks are unchanged.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Content {
        if let Kind::Link(link) = &mut self.kind {
            link.title = Some(title.into());
        }
        self
    }

    /// Sets the size in bytes of a resource link's raw content, which helps a
    /// client judge the context it would cost; other blocks are unchanged.
    #[must_use]
    pub fn with_size(mut self, bytes: u64) -> Content {
        if let Kind::Link(link) = &mut self.kind {
            link.size = Some(bytes);
        }
        self
    }

    /// Says who the block is for: the user, the model, or both.
    #[must_use]
    pub fn with_audience(mut self, audience: impl IntoIterator<Item = Role>) -> Content {
        self.annotations.audience = audience.into_iter().collect();
        self
    }

    /// How much the block matters, from 0.0 (entirely optional) to 1.0
    /// (effectively required). Values outside are clamped into that range;
    /// NaN clears the priority.
    #[must_use]
    pub fn with_priority(mut self, priority: f64) -> Content {
        self.annotations.priority = (!priority.is_nan()).then(|| priority.clamp(0.0, 1.0));
        self
    }

    /// When the underlying data last changed, as an ISO 8601 timestamp such
    /// as `"2025-01-12T15:00:58Z"` (sent from revision 2025-06-18 on).
    #[must_use]
    pub fn with_last_modified(mut self, timestamp: impl Into<String>) -> Content {
        self.annotations.last_modified = Some(timestamp.into());
        self
    }

    /// The text of a text block, `None` for any other block.
    pub fn as_text(&self) -> Option<&str> {
        match &self.kind {
            Kind::Text(text) => Some(text),
            _ => None,
        }
    }

    /// A block read from another server (a [`ToolResult`](crate::ToolResult)'s
    /// content) that this crate cannot represent — a type it does not
    /// know, or one missing a field its type needs — as it was sent; `None`
    /// for every block it can.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolhost::Content;
    ///
    /// assert_eq!(Content::text("hi").as_unknown(), None);
    /// ```
    pub fn as_unknown(&self) -> Option<&Value> {
        match &self.kind {
            Kind::Other(block) => Some(block),
            _ => None,
        }
    }

    /// The block as the given revision spells it, to serialize in place:
    /// a plain text block, by far the most common, is written without a
    /// tree built for it first.
    pub(crate) fn json(&self, revision: Revision) -> ContentJson<'_> {
        ContentJson(self, revision)
    }

    /// The block as the given revision spells it.
    pub(crate) fn to_json(&self, revision: Revision) -> Value {
        let mut block = self.kind_json(revision);
        if let (Some(annotations), Value::Object(map)) =
            (self.annotations.to_json(revision), &mut block)
        {
            map.insert("annotations".into(), annotations);
        }
        block
    }

    fn kind_json(&self, revision: Revision) -> Value {
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
                let optional = [
                    ("title", link.title.clone().map(Value::from)),
                    ("mimeType", link.mime_type.clone().map(Value::from)),
                    ("description", link.description.clone().map(Value::from)),
                    ("size", link.size.map(Value::from)),
                ];
                for (key, value) in optional {
                    if let Some(value) = value {
                        out.insert(key.into(), value);
                    }
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
            Kind::Other(block) => block.clone(),
        }
    }
}

/// The block as a client of the newest revision (2026-07-28) reads it, a
/// block this crate cannot represent as it was sent; for tests that
/// compare blocks read by [`toolhost::client`](crate::client) by their JSON.
///
/// ```
/// use serde_json::json;
/// use toolhost::Content;
///
/// let block = Content::image_base64("iVBORw0KGgo=", "image/png");
/// assert_eq!(
///     serde_json::to_value(&block)?,
///     json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}),
/// );
/// # Ok::<(), serde_json::Error>(())
/// ```
impl Serialize for Content {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.json(Revision::V2026_07_28).serialize(serializer)
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

/// A content block as a revision spells it, serialized as
/// [`Content::to_json`]'s tree would be.
pub(crate) struct ContentJson<'a>(&'a Content, Revision);

impl Serialize for ContentJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0.kind {
            Kind::Text(text) if self.0.annotations.to_json(self.1).is_none() => {
                TextBlock(text).serialize(serializer)
            }
            _ => self.0.to_json(self.1).serialize(serializer),
        }
    }
}

/// A text block, `{"text": …, "type": "text"}` (in the order a tree of it
/// would be written).
pub(crate) struct TextBlock<'a>(pub(crate) &'a str);

impl Serialize for TextBlock<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("text", self.0)?;
        map.serialize_entry("type", "text")?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_serialized_in_place_reads_as_its_tree() {
        let blocks = [
            Content::text("plain \"quoted\"\n"),
            Content::text("seen").with_audience([Role::User]),
            Content::text("dated").with_last_modified("2025-01-12T15:00:58Z"),
            Content::image(b"PNG", "image/png").with_priority(0.5),
            Content::audio(b"RIFF", "audio/wav"),
            Content::resource_link("file:///a.txt", "a.txt"),
        ];
        for revision in Revision::ALL {
            for block in &blocks {
                let text = serde_json::to_vec(&block.json(revision)).unwrap();
                let tree = block.to_json(revision);
                assert_eq!(serde_json::from_slice::<Value>(&text).unwrap(), tree);
                assert_eq!(text, serde_json::to_vec(&tree).unwrap(), "same bytes");
            }
        }
    }

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

    #[test]
    fn last_modified_is_left_out_before_2025_06_18_and_the_rest_kept() {
        let block = Content::text("x")
            .with_audience([Role::Assistant])
            .with_priority(3.0)
            .with_last_modified("2025-01-12T15:00:58Z");
        let old = block.to_json(Revision::V2025_03_26);
        assert_eq!(
            old["annotations"],
            json!({"audience": ["assistant"], "priority": 1.0})
        );
        let new = block.to_json(Revision::V2025_06_18);
        assert_eq!(new["annotations"]["lastModified"], "2025-01-12T15:00:58Z");
        assert!(Content::text("x")
            .to_json(Revision::V2025_06_18)
            .get("annotations")
            .is_none());
    }
}
