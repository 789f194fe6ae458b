//! How a tool presents itself to a client: behaviour hints and icons.
//!
//! Neither changes what the host does with a call; both are passed through
//! to clients whose revision knows them, which may show them to the user or
//! use them to decide when to ask for confirmation.

use serde_json::{Map, Value};

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
