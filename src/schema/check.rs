//! Walking a value through the compiled nodes, and the words of each
//! violation.
//!
//! One walker serves two modes. *Collecting* gathers every violation with
//! its message, for the model. *Quiet* stops at the first one and builds no
//! text; `anyOf`, `oneOf`, `not`, `if` and `contains` only need a yes or no
//! from their subschemas, so they ask quietly.

use std::cmp::Ordering;
use std::collections::HashMap;

use serde_json::{Map, Number, Value};

use super::compile::{types, Node, NodeId};
use super::Violation;

/// Deeper values are refused rather than risking the stack (serde_json
/// refuses to parse deeper than 128 levels anyway).
const MAX_VALUE_DEPTH: usize = 256;

/// How many violations are kept with their text; the rest are only counted.
pub(super) const KEPT_VIOLATIONS: usize = 20;

/// The longest rendering of a value inside a message.
const SHOWN_VALUE_CHARS: usize = 60;

/// The most names listed in one message (`enum` values, allowed properties).
const LISTED_NAMES: usize = 8;

/// One step of a path into the value.
#[derive(Clone, Copy)]
enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// Where violations go.
pub(super) struct Out {
    collect: bool,
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

    fn quiet() -> Out {
        Out {
            collect: false,
            kept: Vec::new(),
            total: 0,
        }
    }

    /// Records a violation; `true` when the walk should go on looking for
    /// more (collecting), `false` when one is enough (quiet).
    fn fail(
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

/// Checks `value` against node `root`.
pub(super) fn check(nodes: &[Node], root: NodeId, value: &Value, out: &mut Out) -> bool {
    let mut path = Vec::new();
    Walker { nodes }.node(root, value, &mut path, out)
}

struct Walker<'s> {
    nodes: &'s [Node],
}

/// The instance-type bits a value has (an integer is also a number).
fn kind(value: &Value) -> u8 {
    match value {
        Value::Null => types::NULL,
        Value::Bool(_) => types::BOOLEAN,
        Value::Object(_) => types::OBJECT,
        Value::Array(_) => types::ARRAY,
        Value::String(_) => types::STRING,
        Value::Number(n) if n.is_i64() || n.is_u64() => types::INTEGER | types::NUMBER,
        Value::Number(_) => types::NUMBER,
    }
}

impl<'s> Walker<'s> {
    // Values are borrowed for 'v (which may be shorter than the schema's 's:
    // `propertyNames` checks a key as a fresh string).
    fn passes<'v>(&self, id: NodeId, value: &'v Value, path: &mut Vec<Seg<'v>>) -> bool {
        self.node(id, value, path, &mut Out::quiet())
    }

    fn node<'v>(
        &self,
        id: NodeId,
        value: &'v Value,
        path: &mut Vec<Seg<'v>>,
        out: &mut Out,
    ) -> bool {
        let node = &self.nodes[id];
        if let Some(verdict) = node.verdict {
            return verdict
                || !out.fail(path, None, || {
                    format!(
                        "expected no value here (the schema is false), got {}",
                        show(value)
                    )
                });
        }
        if path.len() > MAX_VALUE_DEPTH {
            out.fail(path, None, || {
                format!("expected at most {MAX_VALUE_DEPTH} levels of nesting")
            });
            return false;
        }
        let mut ok = true;
        macro_rules! fail {
            ($extra:expr, $($message:tt)+) => {{
                ok = false;
                if !out.fail(path, $extra, || format!($($message)+)) {
                    return false;
                }
            }};
        }
        if let Some(wanted) = node.types {
            if wanted & kind(value) == 0 {
                // Nothing else says more than a wrong type.
                out.fail(path, None, || {
                    format!("expected {}, got {}", type_names(wanted), show(value))
                });
                return false;
            }
        }
        if let Some(options) = &node.enumeration {
            if !options.iter().any(|option| equal(option, value)) {
                fail!(
                    None,
                    "expected one of {}, got {}",
                    list(options.iter().map(show)),
                    show(value)
                );
            }
        }
        if let Some(constant) = &node.constant {
            if !equal(constant, value) {
                fail!(None, "expected {}, got {}", show(constant), show(value));
            }
        }
        match value {
            Value::Number(n) => {
                let noun = if node.types == Some(types::INTEGER) {
                    "integer"
                } else {
                    "number"
                };
                let bounds = [
                    (&node.minimum, "≥", Ordering::Less, Ordering::Less),
                    (&node.maximum, "≤", Ordering::Greater, Ordering::Greater),
                    (
                        &node.exclusive_minimum,
                        ">",
                        Ordering::Less,
                        Ordering::Equal,
                    ),
                    (
                        &node.exclusive_maximum,
                        "<",
                        Ordering::Greater,
                        Ordering::Equal,
                    ),
                ];
                for (bound, sign, bad, also_bad) in bounds {
                    if let Some(bound) = bound {
                        let order = compare(n, bound);
                        if order.is_none_or(|o| o == bad || o == also_bad) {
                            fail!(None, "expected {noun} {sign} {bound}, got {n}");
                        }
                    }
                }
                if let Some(divisor) = &node.multiple_of {
                    if !is_multiple(n, divisor) {
                        fail!(None, "expected a multiple of {divisor}, got {n}");
                    }
                }
            }
            Value::String(s) => {
                if node.min_length.is_some() || node.max_length.is_some() {
                    let chars = s.chars().count() as u64;
                    if let Some(min) = node.min_length.filter(|&min| chars < min) {
                        fail!(
                            None,
                            "expected at least {min} {}, got {chars} ({})",
                            plural(min, "character"),
                            show(value)
                        );
                    }
                    if let Some(max) = node.max_length.filter(|&max| chars > max) {
                        fail!(
                            None,
                            "expected at most {max} {}, got {chars} ({})",
                            plural(max, "character"),
                            show(value)
                        );
                    }
                }
                if let Some((source, pattern)) = &node.pattern {
                    if !pattern.is_match(s) {
                        fail!(
                            None,
                            "expected a string matching the pattern {source}, got {}",
                            show(value)
                        );
                    }
                }
            }
            Value::Array(items) => ok &= self.array(node, items, path, out),
            Value::Object(map) => ok &= self.object(node, map, path, out),
            Value::Null | Value::Bool(_) => {}
        }
        if !ok && !out.collect {
            return false;
        }
        ok &= self.in_place(node, value, path, out);
        ok
    }

    /// The keywords that apply other schemas to this same value.
    fn in_place<'v>(
        &self,
        node: &Node,
        value: &'v Value,
        path: &mut Vec<Seg<'v>>,
        out: &mut Out,
    ) -> bool {
        let mut ok = true;
        for &id in node.reference.iter().chain(&node.all_of) {
            ok &= self.node(id, value, path, out);
            if !ok && !out.collect {
                return false;
            }
        }
        if let Value::Object(map) = value {
            for (trigger, id) in &node.dependent_schemas {
                if map.contains_key(trigger) {
                    ok &= self.node(*id, value, path, out);
                    if !ok && !out.collect {
                        return false;
                    }
                }
            }
        }
        if !node.any_of.is_empty() && !node.any_of.iter().any(|&id| self.passes(id, value, path)) {
            ok = false;
            if !self.no_alternative(&node.any_of, "anyOf", "at least one", value, path, out) {
                return false;
            }
        }
        if !node.one_of.is_empty() {
            let matching: Vec<usize> = (0..node.one_of.len())
                .filter(|&i| self.passes(node.one_of[i], value, path))
                .collect();
            if matching.is_empty() {
                ok = false;
                if !self.no_alternative(&node.one_of, "oneOf", "exactly one", value, path, out) {
                    return false;
                }
            } else if matching.len() > 1 {
                ok = false;
                let n = node.one_of.len();
                let which = list(matching.iter().map(|i| format!("#{i}")));
                if !out.fail(path, None, || {
                    format!("expected a value matching exactly one of the {n} \"oneOf\" schemas, got one matching {which}")
                }) {
                    return false;
                }
            }
        }
        if let Some(id) = node.not {
            if self.passes(id, value, path) {
                ok = false;
                if !out.fail(path, None, || {
                    format!(
                        "expected a value that does not match the \"not\" schema, got {}",
                        show(value)
                    )
                }) {
                    return false;
                }
            }
        }
        if let Some((condition, then, otherwise)) = node.if_then_else {
            let branch = if self.passes(condition, value, path) {
                then
            } else {
                otherwise
            };
            if let Some(id) = branch {
                ok &= self.node(id, value, path, out);
            }
        }
        ok
    }

    /// Reports that no alternative of `anyOf`/`oneOf` matched. When exactly
    /// one alternative accepts the value's type, its own violations say the
    /// most, so they are reported instead of a summary.
    fn no_alternative<'v>(
        &self,
        alternatives: &[NodeId],
        keyword: &str,
        how_many: &str,
        value: &'v Value,
        path: &mut Vec<Seg<'v>>,
        out: &mut Out,
    ) -> bool {
        let declared: Vec<Option<u8>> = alternatives
            .iter()
            .map(|&id| self.declared_types(id))
            .collect();
        let candidates: Vec<NodeId> = alternatives
            .iter()
            .zip(&declared)
            .filter(|(_, types)| types.is_none_or(|t| t & kind(value) != 0))
            .map(|(&id, _)| id)
            .collect();
        if let [only] = candidates[..] {
            if out.collect {
                self.node(only, value, path, out);
                return true;
            }
        }
        let expected = if declared.iter().all(Option::is_some) {
            type_names(declared.iter().flatten().fold(0, |all, t| all | t))
        } else {
            format!(
                "a value matching {how_many} of the {} \"{keyword}\" schemas",
                alternatives.len()
            )
        };
        out.fail(path, None, || {
            format!("expected {expected}, got {}", show(value))
        })
    }

    /// The `type` of a node, looking through `$ref` chains.
    fn declared_types(&self, mut id: NodeId) -> Option<u8> {
        for _ in 0..self.nodes.len() {
            let node = &self.nodes[id];
            if node.types.is_some() {
                return node.types;
            }
            id = node.reference?;
        }
        None
    }

    fn array<'v>(
        &self,
        node: &Node,
        items: &'v [Value],
        path: &mut Vec<Seg<'v>>,
        out: &mut Out,
    ) -> bool {
        let mut ok = true;
        let len = items.len() as u64;
        macro_rules! fail {
            ($extra:expr, $($message:tt)+) => {{
                ok = false;
                if !out.fail(path, $extra, || format!($($message)+)) {
                    return false;
                }
            }};
        }
        if let Some(min) = node.min_items.filter(|&min| len < min) {
            fail!(
                None,
                "expected at least {min} {}, got {len}",
                plural(min, "item")
            );
        }
        if let Some(max) = node.max_items.filter(|&max| len > max) {
            fail!(
                None,
                "expected at most {max} {}, got {len}",
                plural(max, "item")
            );
        }
        if node.unique_items {
            if let Some((first, i)) = first_duplicate(items) {
                fail!(
                    Some(Seg::Index(i)),
                    "expected unique items, got a duplicate of item {first}"
                );
            }
        }
        for (i, item) in items.iter().enumerate() {
            let schema = node.prefix_items.get(i).copied().or(node.items);
            if let Some(id) = schema {
                path.push(Seg::Index(i));
                ok &= self.node(id, item, path, out);
                path.pop();
                if !ok && !out.collect {
                    return false;
                }
            }
        }
        if let Some(id) = node.contains {
            let found = items
                .iter()
                .enumerate()
                .filter(|&(i, item)| {
                    path.push(Seg::Index(i));
                    let pass = self.passes(id, item, path);
                    path.pop();
                    pass
                })
                .count() as u64;
            let min = node.min_contains.unwrap_or(1);
            if found < min {
                fail!(
                    None,
                    "expected at least {min} {} matching \"contains\", got {found}",
                    plural(min, "item")
                );
            }
            if let Some(max) = node.max_contains.filter(|&max| found > max) {
                fail!(
                    None,
                    "expected at most {max} {} matching \"contains\", got {found}",
                    plural(max, "item")
                );
            }
        }
        ok
    }

    fn object<'v>(
        &self,
        node: &Node,
        map: &'v Map<String, Value>,
        path: &mut Vec<Seg<'v>>,
        out: &mut Out,
    ) -> bool {
        let mut ok = true;
        macro_rules! fail {
            ($extra:expr, $($message:tt)+) => {{
                ok = false;
                if !out.fail(path, $extra, || format!($($message)+)) {
                    return false;
                }
            }};
        }
        for name in &node.required {
            if !map.contains_key(name) {
                let wanted = node
                    .properties
                    .binary_search_by(|(key, _)| key.as_str().cmp(name))
                    .ok()
                    .and_then(|i| self.declared_types(node.properties[i].1))
                    .map_or_else(|| "a value".to_owned(), type_names);
                fail!(
                    Some(Seg::Key(name)),
                    "expected {wanted}, got nothing (required property is missing)"
                );
            }
        }
        let len = map.len() as u64;
        if let Some(min) = node.min_properties.filter(|&min| len < min) {
            fail!(
                None,
                "expected at least {min} {}, got {len}",
                plural(min, "property")
            );
        }
        if let Some(max) = node.max_properties.filter(|&max| len > max) {
            fail!(
                None,
                "expected at most {max} {}, got {len}",
                plural(max, "property")
            );
        }
        for (trigger, needed) in &node.dependent_required {
            if map.contains_key(trigger) {
                for name in needed.iter().filter(|name| !map.contains_key(*name)) {
                    fail!(
                        Some(Seg::Key(name)),
                        "expected a value because {trigger:?} is present, got nothing"
                    );
                }
            }
        }
        for (key, value) in map {
            path.push(Seg::Key(key));
            let mut matched = false;
            if let Ok(i) = node
                .properties
                .binary_search_by(|(name, _)| name.as_str().cmp(key))
            {
                matched = true;
                ok &= self.node(node.properties[i].1, value, path, out);
            }
            for (pattern, id) in &node.pattern_properties {
                if pattern.is_match(key) {
                    matched = true;
                    ok &= self.node(*id, value, path, out);
                }
            }
            if !matched {
                if let Some(id) = node.additional_properties {
                    if self.nodes[id].verdict == Some(false) {
                        ok = false;
                        let allowed = if node.properties.is_empty() {
                            "this object takes no properties".to_owned()
                        } else {
                            format!(
                                "allowed: {}",
                                list(node.properties.iter().map(|(name, _)| name.clone()))
                            )
                        };
                        out.fail(path, None, || format!("unexpected property ({allowed})"));
                    } else {
                        ok &= self.node(id, value, path, out);
                    }
                }
            }
            if let Some(id) = node.property_names {
                let name = Value::String(key.clone());
                if !self.node(id, &name, &mut Vec::new(), &mut Out::quiet()) {
                    ok = false;
                    out.fail(path, None, || {
                        format!(
                            "expected a property name matching \"propertyNames\", got {}",
                            show(&name)
                        )
                    });
                }
            }
            path.pop();
            if !ok && !out.collect {
                return false;
            }
        }
        ok
    }
}

/// `string`, `string or null`, …
fn type_names(bits: u8) -> String {
    let names: Vec<&str> = types::NAMES
        .iter()
        .filter(|(_, bit)| bits & bit != 0)
        .map(|(name, _)| *name)
        .collect();
    names.join(" or ")
}

/// A value as a message shows it: compact JSON, cut short.
fn show(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= SHOWN_VALUE_CHARS {
        return text;
    }
    let mut cut: String = text.chars().take(SHOWN_VALUE_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// `a, b, c` with at most [`LISTED_NAMES`] entries.
fn list(items: impl ExactSizeIterator<Item = String>) -> String {
    let total = items.len();
    let mut shown: Vec<String> = items.take(LISTED_NAMES).collect();
    if total > LISTED_NAMES {
        shown.push(format!("… ({} more)", total - LISTED_NAMES));
    }
    shown.join(", ")
}

fn plural(n: u64, noun: &str) -> String {
    match (n, noun) {
        (1, _) => noun.to_owned(),
        (_, "property") => "properties".to_owned(),
        _ => format!("{noun}s"),
    }
}

/// Numbers by value (`1` and `1.0` are one number), exactly for integers.
fn compare(a: &Number, b: &Number) -> Option<Ordering> {
    match (as_integer(a), as_integer(b)) {
        (Some(a), Some(b)) => Some(a.cmp(&b)),
        _ => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

fn as_integer(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

/// Exact for integers; for fractions, within a relative 1e-9 of a whole
/// quotient, so that `0.3` is a multiple of `0.1` despite binary floats.
fn is_multiple(n: &Number, divisor: &Number) -> bool {
    if let (Some(n), Some(d)) = (as_integer(n), as_integer(divisor)) {
        return d != 0 && n % d == 0;
    }
    let (Some(n), Some(d)) = (n.as_f64(), divisor.as_f64()) else {
        return false;
    };
    let quotient = n / d;
    quotient.is_finite() && (quotient - quotient.round()).abs() <= 1e-9 * quotient.abs().max(1.0)
}

/// JSON Schema equality: numbers by value, objects regardless of key order.
fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => compare(a, b) == Some(Ordering::Equal),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| equal(a, b))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(key, a)| b.get(key).is_some_and(|b| equal(a, b)))
        }
        _ => a == b,
    }
}

/// The first repeated item of a list: `(first index, repeat index)`.
/// Short lists compare pairwise (no allocation); long ones hash a canonical
/// text of each item, so the cost stays linear.
fn first_duplicate(items: &[Value]) -> Option<(usize, usize)> {
    const PAIRWISE_UP_TO: usize = 16;
    if items.len() <= PAIRWISE_UP_TO {
        return (1..items.len()).find_map(|i| {
            (0..i)
                .find(|&j| equal(&items[j], &items[i]))
                .map(|j| (j, i))
        });
    }
    let mut first_seen: HashMap<String, usize> = HashMap::with_capacity(items.len());
    items.iter().enumerate().find_map(|(i, item)| {
        let first = *first_seen.entry(canonical(item)).or_insert(i);
        (first != i).then_some((first, i))
    })
}

/// A text that is the same for exactly the values [`equal`] calls equal,
/// so `uniqueItems` is one hash lookup per item instead of a pairwise scan.
fn canonical(value: &Value) -> String {
    fn write(value: &Value, out: &mut String) {
        match value {
            Value::Number(n) => match (as_integer(n), n.as_f64()) {
                (Some(i), _) => out.push_str(&i.to_string()),
                (None, Some(f)) if f.fract() == 0.0 && f.abs() < 1e18 => {
                    out.push_str(&format!("{f:.0}"));
                }
                _ => out.push_str(&n.to_string()),
            },
            Value::Array(items) => {
                out.push('[');
                for item in items {
                    write(item, out);
                    out.push(',');
                }
                out.push(']');
            }
            Value::Object(map) => {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_by_key(|(key, _)| *key);
                out.push('{');
                for (key, item) in entries {
                    out.push_str(&Value::String(key.clone()).to_string());
                    out.push(':');
                    write(item, out);
                    out.push(',');
                }
                out.push('}');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    write(value, &mut out);
    out
}
