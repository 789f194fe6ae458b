//! How a tool presents itself to a client: behaviour hints and icons.
//!
//! Neither changes what the host does with a call; both are passed through
//! to clients whose revision knows them, which may show them to the user or
//! use them to decide when to ask for confirmation.

use serde_core::ser::{Serialize, Serializer};
use serde_json::{Map, Value};

/// The hints as a client reads them in `tools/list`: set hints only.
impl Serialize for ToolAnnotations {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
}

/// The icon as a client reads it in `tools/list`.
impl Serialize for Icon {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
}

/// Hints about what a tool does, for clients that decide how to present or
/// confirm a call. They are hints: MCP tells clients never to trust them
/// from an untrusted server. Unset hints are not sent (clients then assume
/// MCP's defaults: not read-only, destructive, not idempotent, open world).
///
/// ```
/// use toolhost::{Tool, ToolAnnotations};
///
/// let delete = Tool::new("delete_note", "Deletes a note by id.").annotations(
///     ToolAnnotations::new()
///         .title("Delete note")
///         .read_only(false)
///         .destructive(true)
///         .idempotent(true)
///         .open_world(false),
/// );
/// # let _ = delete;
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolAnnotations {
    title: Option<String>,
    read_only: Option<bool>,
    destructive: Option<bool>,
    idempotent: Option<bool>,
    open_world: Option<bool>,
}

impl ToolAnnotations {
    /// No hints.
    pub fn new() -> ToolAnnotations {
        ToolAnnotations::default()
    }

    /// A display title (`title`); [`Tool::title`](crate::Tool::title) takes precedence where
    /// the revision has it.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> ToolAnnotations {
        self.title = Some(title.into());
        self
    }

    /// The tool does not modify its environment (`readOnlyHint`).
    #[must_use]
    pub fn read_only(mut self, yes: bool) -> ToolAnnotations {
        self.read_only = Some(yes);
        self
    }

    /// The tool may destroy or overwrite, rather than only add
    /// (`destructiveHint`; meaningful when not read-only).
    #[must_use]
    pub fn destructive(mut self, yes: bool) -> ToolAnnotations {
        self.destructive = Some(yes);
        self
    }

    /// Repeating a call with the same arguments has no further effect
    /// (`idempotentHint`; meaningful when not read-only).
    #[must_use]
    pub fn idempotent(mut self, yes: bool) -> ToolAnnotations {
        self.idempotent = Some(yes);
        self
    }

    /// The tool reaches an open world of external entities, such as the web
    /// (`openWorldHint`), rather than a closed domain.
    #[must_use]
    pub fn open_world(mut self, yes: bool) -> ToolAnnotations {
        self.open_world = Some(yes);
        self
    }

    pub(super) fn is_empty(&self) -> bool {
        *self == ToolAnnotations::default()
    }

    /// Reads another server's `annotations` object: the title and the four
    /// hints, each kept when it has the right type (a bridged tool shows
    /// what its server said, and nothing it could not have meant). Only the
    /// bridge (feature `client`) reads other servers' definitions.
    #[cfg(feature = "client")]
    pub(crate) fn from_json(value: &Value) -> ToolAnnotations {
        let hint = |key: &str| value.get(key).and_then(Value::as_bool);
        ToolAnnotations {
            title: value
                .get("title")
                .and_then(Value::as_str)
                .map(str::to_owned),
            read_only: hint("readOnlyHint"),
            destructive: hint("destructiveHint"),
            idempotent: hint("idempotentHint"),
            open_world: hint("openWorldHint"),
        }
    }

    pub(super) fn to_json(&self) -> Value {
        let mut out = Map::new();
        if let Some(title) = &self.title {
            out.insert("title".into(), title.clone().into());
        }
        let hints = [
            ("readOnlyHint", self.read_only),
            ("destructiveHint", self.destructive),
            ("idempotentHint", self.idempotent),
            ("openWorldHint", self.open_world),
        ];
        for (key, hint) in hints {
            if let Some(hint) = hint {
                out.insert(key.into(), hint.into());
            }
        }
        Value::Object(out)
    }
}

/// An icon a client may display for a tool: an `https:` or `data:` URI,
/// optionally with its MIME type, sizes and theme.
///
/// ```
/// use toolhost::{Icon, IconTheme};
///
/// let icon = Icon::new("data:image/svg+xml;base64,PHN2Zy8+")
///     .mime_type("image/svg+xml")
///     .sizes(["any"])
///     .theme(IconTheme::Dark);
/// # let _ = icon;
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Icon {
    src: String,
    mime_type: Option<String>,
    sizes: Vec<String>,
    theme: Option<IconTheme>,
}

/// The background an [`Icon`] is designed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IconTheme {
    /// For a light background.
    Light,
    /// For a dark background.
    Dark,
}

impl Icon {
    /// An icon at `src`, a URI clients can fetch or decode.
    pub fn new(src: impl Into<String>) -> Icon {
        Icon {
            src: src.into(),
            mime_type: None,
            sizes: Vec::new(),
            theme: None,
        }
    }

    /// The MIME type, when the URI does not make it plain.
    #[must_use]
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Icon {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// The sizes the icon suits, as `"48x48"` strings or `"any"`.
    #[must_use]
    pub fn sizes<S: Into<String>>(mut self, sizes: impl IntoIterator<Item = S>) -> Icon {
        self.sizes = sizes.into_iter().map(Into::into).collect();
        self
    }

    /// The background the icon is designed for.
    #[must_use]
    pub fn theme(mut self, theme: IconTheme) -> Icon {
        self.theme = Some(theme);
        self
    }

    /// Reads one of another server's `icons`; `None` without a string
    /// `src`. Fields of the wrong type, and an unknown theme, are left out.
    #[cfg(feature = "client")]
    pub(crate) fn from_json(value: &Value) -> Option<Icon> {
        let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
        Some(Icon {
            src: text("src")?,
            mime_type: text("mimeType"),
            sizes: value
                .get("sizes")
                .and_then(Value::as_array)
                .map(|sizes| {
                    sizes
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            theme: match value.get("theme").and_then(Value::as_str) {
                Some("light") => Some(IconTheme::Light),
                Some("dark") => Some(IconTheme::Dark),
                _ => None,
            },
        })
    }

    pub(crate) fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("src".into(), self.src.clone().into());
        if let Some(mime) = &self.mime_type {
            out.insert("mimeType".into(), mime.clone().into());
        }
        if !self.sizes.is_empty() {
            out.insert("sizes".into(), self.sizes.clone().into());
        }
        if let Some(theme) = self.theme {
            let theme = match theme {
                IconTheme::Light => "light",
                IconTheme::Dark => "dark",
            };
            out.insert("theme".into(), theme.into());
        }
        Value::Object(out)
    }
}

#[cfg(all(test, feature = "client"))]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn another_servers_annotations_and_icons_read_back_as_they_were_written() {
        let annotations = json!({"title": "Delete", "readOnlyHint": false,
            "destructiveHint": true, "idempotentHint": true, "openWorldHint": false});
        assert_eq!(
            ToolAnnotations::from_json(&annotations).to_json(),
            annotations
        );
        // Wrong types are left out, never guessed.
        let odd = json!({"title": 7, "readOnlyHint": "yes", "openWorldHint": true});
        assert_eq!(
            ToolAnnotations::from_json(&odd).to_json(),
            json!({"openWorldHint": true})
        );
        let icon = json!({"src": "https://x/i.png", "mimeType": "image/png",
            "sizes": ["48x48", "any"], "theme": "dark"});
        assert_eq!(Icon::from_json(&icon).unwrap().to_json(), icon);
        assert_eq!(
            Icon::from_json(&json!({"src": "data:,", "theme": "sepia", "sizes": [1]}))
                .unwrap()
                .to_json(),
            json!({"src": "data:,"})
        );
        assert!(Icon::from_json(&json!({"mimeType": "image/png"})).is_none());
    }
}
