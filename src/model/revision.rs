//! Protocol revisions and version negotiation.
//!
//! MCP names its revisions by date. The host serves every revision in
//! [`Revision::ALL`] on one endpoint: the stateful ones are chosen per MCP
//! session at `initialize`, the stateless 2026-07-28 per request, from the
//! request's own `_meta`.

use std::fmt;

/// An MCP protocol revision the host can speak.
///
/// The host picks the revision per MCP session: a client that asks for a
/// supported revision at `initialize` gets it, any other client gets the
/// newest stateful revision and decides for itself whether to go on.
///
/// ```
/// use toolhost::Revision;
///
/// assert_eq!(Revision::parse("2025-06-18"), Some(Revision::V2025_06_18));
/// assert_eq!(Revision::V2025_06_18.as_str(), "2025-06-18");
/// assert!(Revision::V2025_03_26 < Revision::V2025_06_18);
/// assert!(Revision::V2026_07_28.is_stateless());
/// ```
///
/// What each revision's messages may carry is the host's business: it
/// spells every message for the revision it speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Revision {
    /// 2024-11-05, the first public revision (served over Streamable HTTP here).
    V2024_11_05,
    /// 2025-03-26: Streamable HTTP, `Mcp-Session-Id`, JSON-RPC batches, tool annotations.
    V2025_03_26,
    /// 2025-06-18: `MCP-Protocol-Version` header, `structuredContent`, `outputSchema`, no batches.
    V2025_06_18,
    /// 2025-11-25: tool-name rules, input-validation errors as tool errors, icons.
    V2025_11_25,
    /// 2026-07-28: stateless; no `initialize`, every request carries its
    /// version, client and capabilities in `_meta`.
    V2026_07_28,
}

impl Revision {
    /// Every revision the host serves, oldest first.
    pub const ALL: [Revision; 5] = [
        Revision::V2024_11_05,
        Revision::V2025_03_26,
        Revision::V2025_06_18,
        Revision::V2025_11_25,
        Revision::V2026_07_28,
    ];

    /// The newest revision negotiated through `initialize`.
    pub const LATEST_STATEFUL: Revision = Revision::V2025_11_25;

    /// The revision's date string, as it appears on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Revision::V2024_11_05 => "2024-11-05",
            Revision::V2025_03_26 => "2025-03-26",
            Revision::V2025_06_18 => "2025-06-18",
            Revision::V2025_11_25 => "2025-11-25",
            Revision::V2026_07_28 => "2026-07-28",
        }
    }

    /// Parses a revision date string; `None` for one the host does not serve.
    pub fn parse(text: &str) -> Option<Revision> {
        Revision::ALL.into_iter().find(|r| r.as_str() == text)
    }

    /// What `initialize` answers to a client that asked for `requested`:
    /// the same revision when it is a stateful one the host serves, else the
    /// newest stateful one.
    pub(crate) fn negotiate(requested: &str) -> Revision {
        Revision::parse(requested)
            .filter(|r| !r.is_stateless())
            .unwrap_or(Revision::LATEST_STATEFUL)
    }

    /// Whether this revision is stateless (2026-07-28 on): no `initialize`,
    /// no `Mcp-Session-Id`, version and capabilities in every request. A
    /// handler asks it of [`CallContext::revision`](crate::CallContext::revision):
    /// in a stateless call a dropped connection is a cancellation.
    pub fn is_stateless(self) -> bool {
        self >= Revision::V2026_07_28
    }

    /// Whether this revision accepts JSON-RPC batches (only 2025-03-26 does).
    pub(crate) fn allows_batches(self) -> bool {
        self == Revision::V2025_03_26
    }

    /// Whether results may carry `structuredContent` and tools `outputSchema`
    /// and `title` (2025-06-18 on).
    pub(crate) fn has_structured_content(self) -> bool {
        self >= Revision::V2025_06_18
    }

    /// Whether tools may carry `annotations` (2025-03-26 on).
    pub(crate) fn has_tool_annotations(self) -> bool {
        self >= Revision::V2025_03_26
    }

    /// Whether content blocks may be `audio` (2025-03-26 on).
    pub(crate) fn has_audio_content(self) -> bool {
        self >= Revision::V2025_03_26
    }

    /// Whether content blocks may be `resource_link` (2025-06-18 on).
    pub(crate) fn has_resource_links(self) -> bool {
        self >= Revision::V2025_06_18
    }

    /// Whether tools and content blocks may carry `_meta` (2025-06-18 on).
    pub(crate) fn has_meta(self) -> bool {
        self >= Revision::V2025_06_18
    }

    /// Whether content annotations may carry `lastModified` (2025-06-18 on).
    pub(crate) fn has_last_modified(self) -> bool {
        self >= Revision::V2025_06_18
    }

    /// Whether tools and implementations may carry `icons` (2025-11-25 on).
    pub(crate) fn has_icons(self) -> bool {
        self >= Revision::V2025_11_25
    }

    /// Whether a dropped response stream may be resumed with
    /// `Last-Event-ID` (the Streamable HTTP revisions before 2026-07-28).
    pub(crate) fn resumes_streams(self) -> bool {
        self >= Revision::V2025_03_26 && !self.is_stateless()
    }

    /// Whether a response stream opens with an id-only priming event
    /// (2025-11-25; 2026-07-28 streams are not resumable).
    pub(crate) fn primes_streams(self) -> bool {
        self == Revision::V2025_11_25
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Revision {
    /// The supported revisions' wire names, oldest first.
    pub(crate) fn supported() -> Vec<&'static str> {
        Revision::ALL.iter().map(|r| r.as_str()).collect()
    }

    /// The supported revisions as one human-readable list, for error
    /// messages.
    pub(crate) fn supported_list() -> String {
        Revision::supported().join(", ")
    }
}

/// Golden texts for tests: groups of revisions, each with the exact text
/// every revision in it gets.
#[cfg(test)]
pub(crate) type Goldens = Vec<(&'static [Revision], &'static str)>;

/// The golden text of each revision, oldest first. Panics unless every
/// revision is named exactly once, so that no revision goes unchecked.
#[cfg(test)]
pub(crate) fn per_revision(goldens: &Goldens) -> Vec<(Revision, &'static str)> {
    let mut each: Vec<(Revision, &'static str)> = goldens
        .iter()
        .flat_map(|(revisions, text)| revisions.iter().map(move |&r| (r, *text)))
        .collect();
    each.sort_by_key(|(revision, _)| *revision);
    let named: Vec<Revision> = each.iter().map(|(revision, _)| *revision).collect();
    assert_eq!(named, Revision::ALL, "each revision once");
    each
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation_keeps_a_supported_revision_and_upgrades_an_unknown_one() {
        assert_eq!(Revision::negotiate("2025-03-26"), Revision::V2025_03_26);
        assert_eq!(Revision::negotiate("2099-01-01"), Revision::LATEST_STATEFUL);
        assert_eq!(Revision::negotiate(""), Revision::LATEST_STATEFUL);
        assert_eq!(Revision::negotiate("2026-07-28"), Revision::LATEST_STATEFUL);
    }

    #[test]
    fn only_2025_03_26_allows_batches() {
        let batching: Vec<_> = Revision::ALL
            .into_iter()
            .filter(|r| r.allows_batches())
            .collect();
        assert_eq!(batching, vec![Revision::V2025_03_26]);
    }

    #[test]
    fn every_revision_round_trips_through_its_string() {
        for r in Revision::ALL {
            assert_eq!(Revision::parse(r.as_str()), Some(r));
        }
        assert_eq!(Revision::parse("2025-6-18"), None);
    }
}
