//! A tool's JSON as `tools/list` sends it, rendered once per view and kept
//! with the tool's shared definition.
//!
//! The surface is asked for its tools on every `tools/list`, and a tool
//! built once is handed out as clones of one `Arc`; rendering it afresh
//! each time would copy its schemas into a new tree, serialize the tree
//! and drop it, for text that does not change. Kept here, the text is made
//! on first use and spliced into each response as it is.
//!
//! So is the fact that the definition passed `Tool::validate`, which both
//! `tools/list` (for every tool listed) and every call ask again.
//!
//! Invariant: a rendering, and the mark of a valid definition, always
//! match the definition beside them. Every builder method that changes a
//! definition goes through `Tool::edit`, which clears them, and a cloned
//! definition (what `Arc::make_mut` makes of a shared one) starts with
//! neither.

use std::fmt;
use std::sync::OnceLock;

use serde_json::value::RawValue;
use serde_json::Value;

use super::Revision;

/// How many views there are: see [`view`].
const VIEWS: usize = 5;

/// Which rendering of a tool a revision reads. Each tool field a revision
/// may or may not know (`annotations`, `title` and `outputSchema`, `_meta`,
/// `icons`) is known from some revision on, so the number of them a
/// revision knows tells which ones: revisions with the same count show a
/// tool alike and share its rendering (2025-11-25 and 2026-07-28 do).
pub(super) fn view(revision: Revision) -> usize {
    [
        revision.has_tool_annotations(),
        revision.has_structured_content(),
        revision.has_meta(),
        revision.has_icons(),
    ]
    .into_iter()
    .filter(|known| *known)
    .count()
}

/// The renderings of one definition, one slot per view, each made once;
/// and whether it was found valid.
#[derive(Default)]
pub(super) struct Renderings {
    views: [OnceLock<Box<RawValue>>; VIEWS],
    valid: OnceLock<()>,
}

impl Renderings {
    /// Whether the definition was found valid already.
    pub(super) fn known_valid(&self) -> bool {
        self.valid.get().is_some()
    }

    /// Marks the definition as valid.
    pub(super) fn mark_valid(&self) {
        let _ = self.valid.set(());
    }

    /// The rendering for `revision`, made by `render` the first time.
    pub(super) fn get(&self, revision: Revision, render: impl FnOnce() -> Value) -> &RawValue {
        self.views[view(revision)].get_or_init(|| {
            // Serializing a `Value` cannot fail: its keys are strings.
            serde_json::value::to_raw_value(&render()).unwrap_or_else(|_| RawValue::NULL.to_owned())
        })
    }
}

/// A copy is made to be changed (`Arc::make_mut`): it renders afresh.
impl Clone for Renderings {
    fn clone(&self) -> Renderings {
        Renderings::default()
    }
}

/// What a definition renders to is no part of what it is.
impl PartialEq for Renderings {
    fn eq(&self, _: &Renderings) -> bool {
        true
    }
}

impl fmt::Debug for Renderings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let made = self
            .views
            .iter()
            .filter(|slot| slot.get().is_some())
            .count();
        let valid = if self.known_valid() { ", valid" } else { "" };
        write!(f, "{made} of {VIEWS} views rendered{valid}")
    }
}
