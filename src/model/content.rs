//! Content blocks a tool result carries: text, image, audio, resource links
//! and embedded resources, each optionally annotated for the client.
//!
//! A block is built once and rendered per revision: a revision that does not
//! know a block type (audio before 2025-03-26, resource links before
//! 2025-06-18) gets a text block that says what was there, so the model is
//! never handed a message its client must reject. Likewise a field a
//! revision does not know (`lastModified` before 2025-06-18) is left out.

use serde_core::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

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
    /// The annotations as the revision spells them, `None` when the
    /// revision would get none of them.
    fn json(&self, revision: Revision) -> Option<AnnotationsJson<'_>> {
        let last_modified = self
            .last_modified
            .as_deref()
            .filter(|_| revision.has_last_modified());
        let any = !self.audience.is_empty() || self.priority.is_some() || last_modified.is_some();
        any.then_some(AnnotationsJson {
            audience: &self.audience,
            last_modified,
            priority: self.priority,
        })
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

    /// The block as the given revision spells it, to serialize in place.
    pub(crate) fn json(&self, revision: Revision) -> ContentJson<'_> {
        ContentJson(self, revision)
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

/// A content block as a revision spells it: the one spelling of every
/// block, written straight to a response's text (and to a tree, with
/// `serde_json::to_value`, where one is needed).
///
/// Members are written in the order a `Value` tree of the block would
/// write them (sorted by name), so that the text is the same whichever
/// way it was made; the golden tests below pin it per revision.
pub(crate) struct ContentJson<'a>(&'a Content, Revision);

impl Serialize for ContentJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let ContentJson(block, revision) = *self;
        // A block read from another server that this crate cannot
        // represent goes on as it was sent.
        if let Kind::Other(sent) = &block.kind {
            return sent.serialize(serializer);
        }
        let mut map = serializer.serialize_map(None)?;
        if let Some(annotations) = block.annotations.json(revision) {
            map.serialize_entry("annotations", &annotations)?;
        }
        match &block.kind {
            Kind::Text(text) => text_members(&mut map, text)?,
            Kind::Image { data, mime_type } => media_members(&mut map, "image", data, mime_type)?,
            Kind::Audio { data, mime_type } if revision.has_audio_content() => {
                media_members(&mut map, "audio", data, mime_type)?;
            }
            // A revision without audio gets a text block that says what
            // was there: a block its client must reject would lose the
            // whole result.
            Kind::Audio { mime_type, .. } => text_members(
                &mut map,
                &format!("[audio ({mime_type}) omitted: revision {revision} has no audio content]"),
            )?,
            Kind::Link(link) if revision.has_resource_links() => {
                if let Some(description) = &link.description {
                    map.serialize_entry("description", description)?;
                }
                if let Some(mime_type) = &link.mime_type {
                    map.serialize_entry("mimeType", mime_type)?;
                }
                map.serialize_entry("name", &link.name)?;
                if let Some(size) = link.size {
                    map.serialize_entry("size", &size)?;
                }
                if let Some(title) = &link.title {
                    map.serialize_entry("title", title)?;
                }
                map.serialize_entry("type", "resource_link")?;
                map.serialize_entry("uri", &link.uri)?;
            }
            Kind::Link(link) => {
                text_members(&mut map, &format!("resource {} ({})", link.name, link.uri))?;
            }
            Kind::Embedded(resource) => {
                map.serialize_entry("resource", &ResourceJson(resource))?;
                map.serialize_entry("type", "resource")?;
            }
            // Written whole above.
            Kind::Other(_) => {}
        }
        map.end()
    }
}

/// A text block's own members, `text` and `type`: shared by every block
/// that is text on the wire, including those a revision gets in place of
/// a type it lacks.
fn text_members<M: SerializeMap>(map: &mut M, text: &str) -> Result<(), M::Error> {
    map.serialize_entry("text", text)?;
    map.serialize_entry("type", "text")
}

/// An image's or an audio clip's members: the base64 data, its type and
/// the block's `type`.
fn media_members<M: SerializeMap>(
    map: &mut M,
    kind: &str,
    data: &str,
    mime_type: &str,
) -> Result<(), M::Error> {
    map.serialize_entry("data", data)?;
    map.serialize_entry("mimeType", mime_type)?;
    map.serialize_entry("type", kind)
}

/// A block's annotations, as [`Annotations::json`] found them for a
/// revision.
struct AnnotationsJson<'a> {
    audience: &'a [Role],
    last_modified: Option<&'a str>,
    priority: Option<f64>,
}

impl Serialize for AnnotationsJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        if !self.audience.is_empty() {
            map.serialize_entry("audience", &Audience(self.audience))?;
        }
        if let Some(when) = self.last_modified {
            map.serialize_entry("lastModified", when)?;
        }
        if let Some(priority) = self.priority {
            map.serialize_entry("priority", &priority)?;
        }
        map.end()
    }
}

/// An audience, as the roles' names.
struct Audience<'a>(&'a [Role]);

impl Serialize for Audience<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|role| role.as_str()))
    }
}

/// An embedded resource's `resource` member: its URI, type and body.
struct ResourceJson<'a>(&'a EmbeddedResource);

impl Serialize for ResourceJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let resource = self.0;
        let mut map = serializer.serialize_map(None)?;
        if let ResourceBody::Blob(blob) = &resource.body {
            map.serialize_entry("blob", blob)?;
        }
        if let Some(mime_type) = &resource.mime_type {
            map.serialize_entry("mimeType", mime_type)?;
        }
        if let ResourceBody::Text(text) = &resource.body {
            map.serialize_entry("text", text)?;
        }
        map.serialize_entry("uri", &resource.uri)?;
        map.end()
    }
}

/// A text block with no annotations, `{"text": …, "type": "text"}`: what
/// the host writes for the model when a call has no content of its own
/// (a decline's reason, a failure, a cancellation).
pub(crate) struct TextBlock<'a>(pub(crate) &'a str);

impl Serialize for TextBlock<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        text_members(&mut map, self.0)?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::revision::{per_revision, Goldens};
    use serde_json::{json, Value};

    const R2024: Revision = Revision::V2024_11_05;
    const R2025_03: Revision = Revision::V2025_03_26;
    const R2025_06: Revision = Revision::V2025_06_18;
    const R2025_11: Revision = Revision::V2025_11_25;
    const R2026: Revision = Revision::V2026_07_28;

    /// The block as written to a response.
    fn text(block: &Content, revision: Revision) -> String {
        serde_json::to_string(&block.json(revision)).unwrap()
    }

    /// The block as a tree, derived from the same writer.
    fn tree(block: &Content, revision: Revision) -> Value {
        serde_json::to_value(block.json(revision)).unwrap()
    }

    /// Every kind of block, with and without annotations, and the exact
    /// text each revision gets of it. Every revision is named once per
    /// block.
    fn goldens() -> Vec<(Content, Goldens)> {
        let all: &[Revision] = &Revision::ALL;
        vec![
            (
                Content::text("plain \"quoted\"\n"),
                vec![(all, r#"{"text":"plain \"quoted\"\n","type":"text"}"#)],
            ),
            (
                Content::text("seen")
                    .with_audience([Role::User, Role::Assistant])
                    .with_priority(0.5)
                    .with_last_modified("2025-01-12T15:00:58Z"),
                vec![
                    (
                        &[R2024, R2025_03],
                        r#"{"annotations":{"audience":["user","assistant"],"priority":0.5},"text":"seen","type":"text"}"#,
                    ),
                    (
                        &[R2025_06, R2025_11, R2026],
                        r#"{"annotations":{"audience":["user","assistant"],"lastModified":"2025-01-12T15:00:58Z","priority":0.5},"text":"seen","type":"text"}"#,
                    ),
                ],
            ),
            (
                Content::text("dated").with_last_modified("2025-01-12T15:00:58Z"),
                vec![
                    (&[R2024, R2025_03], r#"{"text":"dated","type":"text"}"#),
                    (
                        &[R2025_06, R2025_11, R2026],
                        r#"{"annotations":{"lastModified":"2025-01-12T15:00:58Z"},"text":"dated","type":"text"}"#,
                    ),
                ],
            ),
            (
                Content::image(b"PNG", "image/png"),
                vec![(
                    all,
                    r#"{"data":"UE5H","mimeType":"image/png","type":"image"}"#,
                )],
            ),
            (
                Content::image_base64("UE5H", "image/png").with_priority(3.0),
                vec![(
                    all,
                    r#"{"annotations":{"priority":1.0},"data":"UE5H","mimeType":"image/png","type":"image"}"#,
                )],
            ),
            (
                Content::audio(b"RIFF", "audio/wav"),
                vec![
                    (
                        &[R2024],
                        r#"{"text":"[audio (audio/wav) omitted: revision 2024-11-05 has no audio content]","type":"text"}"#,
                    ),
                    (
                        &[R2025_03, R2025_06, R2025_11, R2026],
                        r#"{"data":"UklGRg==","mimeType":"audio/wav","type":"audio"}"#,
                    ),
                ],
            ),
            (
                Content::audio_base64("UklGRg==", "audio/wav").with_audience([Role::Assistant]),
                vec![
                    (
                        &[R2024],
                        r#"{"annotations":{"audience":["assistant"]},"text":"[audio (audio/wav) omitted: revision 2024-11-05 has no audio content]","type":"text"}"#,
                    ),
                    (
                        &[R2025_03, R2025_06, R2025_11, R2026],
                        r#"{"annotations":{"audience":["assistant"]},"data":"UklGRg==","mimeType":"audio/wav","type":"audio"}"#,
                    ),
                ],
            ),
            (
                Content::resource_link("file:///a.txt", "a.txt"),
                vec![
                    (
                        &[R2024, R2025_03],
                        r#"{"text":"resource a.txt (file:///a.txt)","type":"text"}"#,
                    ),
                    (
                        &[R2025_06, R2025_11, R2026],
                        r#"{"name":"a.txt","type":"resource_link","uri":"file:///a.txt"}"#,
                    ),
                ],
            ),
            (
                Content::resource_link("file:///report.pdf", "report.pdf")
                    .with_title("Report")
                    .with_mime_type("application/pdf")
                    .with_description("The quarter's report.")
                    .with_size(48_213)
                    .with_priority(0.2),
                vec![
                    (
                        &[R2024, R2025_03],
                        r#"{"annotations":{"priority":0.2},"text":"resource report.pdf (file:///report.pdf)","type":"text"}"#,
                    ),
                    (
                        &[R2025_06, R2025_11, R2026],
                        r#"{"annotations":{"priority":0.2},"description":"The quarter's report.","mimeType":"application/pdf","name":"report.pdf","size":48213,"title":"Report","type":"resource_link","uri":"file:///report.pdf"}"#,
                    ),
                ],
            ),
            (
                Content::resource_text("file:///data.csv", "text/csv", "x,y\n1,2\n"),
                vec![(
                    all,
                    r#"{"resource":{"mimeType":"text/csv","text":"x,y\n1,2\n","uri":"file:///data.csv"},"type":"resource"}"#,
                )],
            ),
            (
                Content::resource_blob("file:///z.bin", "application/octet-stream", &[1, 2])
                    .with_audience([Role::User]),
                vec![(
                    all,
                    r#"{"annotations":{"audience":["user"]},"resource":{"blob":"AQI=","mimeType":"application/octet-stream","uri":"file:///z.bin"},"type":"resource"}"#,
                )],
            ),
        ]
    }

    #[test]
    fn every_block_is_written_as_its_golden_text_in_every_revision() {
        for (block, goldens) in goldens() {
            for (revision, golden) in per_revision(&goldens) {
                assert_eq!(text(&block, revision), golden, "{block:?} in {revision}");
            }
        }
    }

    #[test]
    fn a_block_as_a_tree_is_its_golden_text_read_back() {
        for (block, goldens) in goldens() {
            for (revision, golden) in per_revision(&goldens) {
                let tree = tree(&block, revision);
                assert_eq!(tree, serde_json::from_str::<Value>(golden).unwrap());
                assert_eq!(serde_json::to_string(&tree).unwrap(), golden, "same bytes");
            }
        }
        // A tree that differs is told apart: the check has teeth.
        let other = tree(&Content::text("other"), R2025_06);
        assert_ne!(
            serde_json::to_string(&other).unwrap(),
            text(&Content::text("x"), R2025_06)
        );
    }

    #[test]
    fn a_plain_text_block_written_alone_is_the_content_block_of_that_text() {
        for revision in Revision::ALL {
            let alone = serde_json::to_string(&TextBlock("why \"not\"")).unwrap();
            assert_eq!(alone, text(&Content::text("why \"not\""), revision));
            assert_ne!(
                alone,
                text(&Content::text("why \"not\"").with_priority(0.1), revision)
            );
        }
    }

    #[test]
    fn audio_becomes_text_for_a_revision_without_audio() {
        let audio = Content::audio(b"RIFF", "audio/wav");
        assert_eq!(tree(&audio, R2025_03)["type"], "audio");
        let old = tree(&audio, R2024);
        assert_eq!(old["type"], "text");
        assert!(old["text"]
            .as_str()
            .is_some_and(|t| t.contains("audio/wav")));
    }

    #[test]
    fn resource_links_become_text_before_2025_06_18() {
        let link = Content::resource_link("file:///a.txt", "a.txt").with_mime_type("text/plain");
        let new = tree(&link, R2025_06);
        assert_eq!(new["type"], "resource_link");
        assert_eq!(new["mimeType"], "text/plain");
        assert_eq!(tree(&link, R2025_03)["type"], "text");
    }

    #[test]
    fn last_modified_is_left_out_before_2025_06_18_and_the_rest_kept() {
        let block = Content::text("x")
            .with_audience([Role::Assistant])
            .with_priority(3.0)
            .with_last_modified("2025-01-12T15:00:58Z");
        let old = tree(&block, R2025_03);
        assert_eq!(
            old["annotations"],
            json!({"audience": ["assistant"], "priority": 1.0})
        );
        let new = tree(&block, R2025_06);
        assert_eq!(new["annotations"]["lastModified"], "2025-01-12T15:00:58Z");
        assert!(tree(&Content::text("x"), R2025_11)
            .get("annotations")
            .is_none());
    }
}
