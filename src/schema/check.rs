//! Walking a value through the compiled nodes.
//!
//! One walker serves two modes. *Collecting* gathers every violation with
//! its message, for the model. *Quiet* stops at the first one and builds no
//! text; `anyOf`, `oneOf`, `not`, `if` and `contains` only need a yes or no
//! from their subschemas, so they ask quietly.

use std::cmp::Ordering;

use serde_json::{Map, Value};

use super::node::{types, Node, NodeId};
use super::report::{list, plural, show, type_names, Out, Seg};
use super::values::{compare, equal, first_duplicate, is_multiple};

/// Deeper values are refused rather than risking the stack (serde_json
/// refuses to parse deeper than 128 levels anyway).
const MAX_VALUE_DEPTH: usize = 256;

/// Records a violation and marks the walk failed (`$ok = false`); in quiet
/// mode, where one violation is enough, returns `false` from the caller.
macro_rules! fail {
    ($ok:ident, $out:ident, $path:ident, $extra:expr, $($message:tt)+) => {{
        $ok = false;
        if !$out.fail($path, $extra, || format!($($message)+)) {
            return false;
        }
    }};
}

/// The message for a count of `noun`s outside `min..=max`, if it is.
fn count_out_of_bounds(min: Option<u64>, max: Option<u64>, len: u64, noun: &str) -> Option<String> {
    if let Some(min) = min.filter(|&min| len < min) {
        return Some(format!(
            "expected at least {min} {}, got {len}",
            plural(min, noun)
        ));
    }
    max.filter(|&max| len > max)
        .map(|max| format!("expected at most {max} {}, got {len}", plural(max, noun)))
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
            if !verdict {
                out.fail(path, None, || {
                    format!(
                        "expected no value here (the schema is false), got {}",
                        show(value)
                    )
                });
            }
            return verdict;
        }
        if path.len() > MAX_VALUE_DEPTH {
            out.fail(path, None, || {
                format!("expected at most {MAX_VALUE_DEPTH} levels of nesting")
            });
            return false;
        }
        let mut ok = true;
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
                    ok,
                    out,
                    path,
                    None,
                    "expected one of {}, got {}",
                    list(options.iter().map(show)),
                    show(value)
                );
            }
        }
        if let Some(constant) = &node.constant {
            if !equal(constant, value) {
                fail!(
                    ok,
                    out,
                    path,
                    None,
                    "expected {}, got {}",
                    show(constant),
                    show(value)
                );
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
                            fail!(
                                ok,
                                out,
                                path,
                                None,
                                "expected {noun} {sign} {bound}, got {n}"
                            );
                        }
                    }
                }
                if let Some(divisor) = &node.multiple_of {
                    if !is_multiple(n, divisor) {
                        fail!(
                            ok,
                            out,
                            path,
                            None,
                            "expected a multiple of {divisor}, got {n}"
                        );
                    }
                }
            }
            Value::String(s) => {
                if node.min_length.is_some() || node.max_length.is_some() {
                    let chars = s.chars().count() as u64;
                    if let Some(min) = node.min_length.filter(|&min| chars < min) {
                        fail!(
                            ok,
                            out,
                            path,
                            None,
                            "expected at least {min} {}, got {chars} ({})",
                            plural(min, "character"),
                            show(value)
                        );
                    }
                    if let Some(max) = node.max_length.filter(|&max| chars > max) {
                        fail!(
                            ok,
                            out,
                            path,
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
                            ok,
                            out,
                            path,
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
        // A `false` alternative accepts nothing, so it explains nothing.
        let open: Vec<NodeId> = alternatives
            .iter()
            .copied()
            .filter(|&id| self.nodes[id].verdict != Some(false))
            .collect();
        let declared: Vec<Option<u8>> = open.iter().map(|&id| self.declared_types(id)).collect();
        let candidates: Vec<NodeId> = open
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
        let expected = if !declared.is_empty() && declared.iter().all(Option::is_some) {
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
        if let Some(message) = count_out_of_bounds(node.min_items, node.max_items, len, "item") {
            fail!(ok, out, path, None, "{message}");
        }
        if node.unique_items {
            if let Some((first, i)) = first_duplicate(items) {
                fail!(
                    ok,
                    out,
                    path,
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
                    ok,
                    out,
                    path,
                    None,
                    "expected at least {min} {} matching \"contains\", got {found}",
                    plural(min, "item")
                );
            }
            if let Some(max) = node.max_contains.filter(|&max| found > max) {
                fail!(
                    ok,
                    out,
                    path,
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
        for name in &node.required {
            if !map.contains_key(name) {
                let wanted = node
                    .properties
                    .binary_search_by(|(key, _)| key.as_str().cmp(name))
                    .ok()
                    .and_then(|i| self.declared_types(node.properties[i].1))
                    .map_or_else(|| "a value".to_owned(), type_names);
                fail!(
                    ok,
                    out,
                    path,
                    Some(Seg::Key(name)),
                    "expected {wanted}, got nothing (required property is missing)"
                );
            }
        }
        let len = map.len() as u64;
        if let Some(message) =
            count_out_of_bounds(node.min_properties, node.max_properties, len, "property")
        {
            fail!(ok, out, path, None, "{message}");
        }
        for (trigger, needed) in &node.dependent_required {
            if map.contains_key(trigger) {
                for name in needed.iter().filter(|name| !map.contains_key(*name)) {
                    fail!(
                        ok,
                        out,
                        path,
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
