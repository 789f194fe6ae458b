//! How violations are recorded and worded: paths as JSON pointers, values
//! cut short, lists capped, so that no message grows with the input.

use serde_json::Value;

use super::node::types;
use super::Violation;

/// How many violations are kept with their text; the rest are only counted.
const KEPT_VIOLATIONS: usize = 20;

/// The longest rendering of a value inside a message.
const SHOWN_VALUE_CHARS: usize = 60;

/// The most names listed in one message (`enum` values, allowed properties).
const LISTED_NAMES: usize = 8;

/// One step of a path into the value.
#[derive(Clone, Copy)]
pub(super) enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// Where violations go.
pub(super) struct Out {
    pub(super) collect: bool,
    pub(super) kept: Vec<Violation>,
    pub(super) total: usize,
}

impl Out {
    pub(super) fn collecting() -> Out {
        Out {
            collect: true,
            kept: Vec::new(),
            total: 0,
        }
    }

    pub(super) fn quiet() -> Out {
        Out {
            collect: false,
            kept: Vec::new(),
            total: 0,
        }
    }

    /// Records a violation; `true` when the walk should go on looking for
    /// more (collecting), `false` when one is enough (quiet).
    pub(super) fn fail(
        &mut self,
        path: &[Seg<'_>],
        extra: Option<Seg<'_>>,
        message: impl FnOnce() -> String,
    ) -> bool {
        self.total += 1;
        if self.collect && self.kept.len() < KEPT_VIOLATIONS {
            self.kept.push(Violation {
                path: render_path(path, extra),
                message: message(),
            });
        }
        self.collect
    }
}

/// The JSON pointer of a path; `/` for the value itself.
fn render_path(path: &[Seg<'_>], extra: Option<Seg<'_>>) -> String {
    let mut out = String::new();
    for seg in path.iter().chain(extra.as_ref()) {
        out.push('/');
        match seg {
            Seg::Key(key) if key.chars().count() > SHOWN_VALUE_CHARS => {
                let cut: String = key.chars().take(SHOWN_VALUE_CHARS - 1).collect();
                out.push_str(&super::compile::escape_token(&cut));
                out.push('…');
            }
            Seg::Key(key) => out.push_str(&super::compile::escape_token(key)),
            Seg::Index(i) => out.push_str(&i.to_string()),
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    out
}

/// `string`, `string or null`, …
pub(super) fn type_names(bits: u8) -> String {
    let names: Vec<&str> = types::NAMES
        .iter()
        .filter(|(_, bit)| bits & bit != 0)
        .map(|(name, _)| *name)
        .collect();
    names.join(" or ")
}

/// A value as a message shows it: compact JSON, cut short.
pub(super) fn show(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= SHOWN_VALUE_CHARS {
        return text;
    }
    let mut cut: String = text.chars().take(SHOWN_VALUE_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// `a, b, c` with at most [`LISTED_NAMES`] entries.
pub(super) fn list(items: impl ExactSizeIterator<Item = String>) -> String {
    let total = items.len();
    let mut shown: Vec<String> = items.take(LISTED_NAMES).collect();
    if total > LISTED_NAMES {
        shown.push(format!("… ({} more)", total - LISTED_NAMES));
    }
    shown.join(", ")
}

pub(super) fn plural(n: u64, noun: &str) -> String {
    match (n, noun) {
        (1, _) => noun.to_owned(),
        (_, "property") => "properties".to_owned(),
        _ => format!("{noun}s"),
    }
}
