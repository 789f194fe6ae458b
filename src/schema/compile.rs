//! From a schema document to the node arena that [`super::check`] walks.
//!
//! Every subschema becomes one [`Node`] whose keywords are already parsed
//! (numbers as numbers, patterns as programs, `$ref` as an index), so a
//! call only walks. Nodes are keyed by their JSON pointer in the document:
//! a `$ref` to a place already compiled reuses its node, which is what lets
//! a recursive schema (a tree whose children are trees) compile to a finite
//! graph.
//!
//! Invariant for the walker: no cycle of in-place edges (`$ref`, `allOf`,
//! `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, `dependentSchemas`). Such a
//! cycle never descends into the value, so validating it would never end;
//! it is refused here, once, instead of guarded on every call.

use std::collections::HashMap;

use serde_json::{Map, Number, Value};

use super::node::{types, Node, NodeId};
use super::pattern::{Pattern, PatternError};
use crate::error::Error;

/// Deeper schemas are refused rather than risking the stack.
const MAX_SCHEMA_DEPTH: usize = 128;

/// Keywords that only describe: accepted silently, never checked.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$comment",
    "$anchor",
    "$dynamicAnchor",
    "$vocabulary",
    "$defs",
    "definitions",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "format",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
    // Meaningless without `if`; ignored, as JSON Schema says.
    "then",
    "else",
    // Read together with `items` (array form) below.
    "additionalItems",
];

/// Validation keywords this validator does not check.
const UNIMPLEMENTED: &[&str] = &[
    "unevaluatedProperties",
    "unevaluatedItems",
    "$dynamicRef",
    "$recursiveRef",
    "$recursiveAnchor",
];

/// The compiled arena (root first) and the warnings for the keywords left
/// unchecked.
pub(super) fn compile(root: &Value) -> Result<(Vec<Node>, Vec<String>), Error> {
    let mut compiler = Compiler {
        root,
        nodes: Vec::new(),
        pointers: Vec::new(),
        by_pointer: HashMap::new(),
        warnings: Vec::new(),
    };
    compiler.subschema(String::new(), root, 0)?;
    compiler.refuse_in_place_cycles()?;
    Ok((compiler.nodes, compiler.warnings))
}

struct Compiler<'a> {
    root: &'a Value,
    nodes: Vec<Node>,
    /// The JSON pointer of each node, for messages.
    pointers: Vec<String>,
    by_pointer: HashMap<String, NodeId>,
    warnings: Vec<String>,
}

/// `#` plus the pointer: how schema locations read in messages.
pub(super) fn location(pointer: &str) -> String {
    format!("#{pointer}")
}

fn invalid(pointer: &str, problem: impl Into<String>) -> Error {
    Error::InvalidSchema {
        at: location(pointer),
        problem: problem.into(),
    }
}

/// One JSON pointer token, escaped (RFC 6901).
pub(super) fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// A value's JSON type with its article, for messages: "a string", "null".
pub(crate) fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl<'a> Compiler<'a> {
    fn warn(&mut self, pointer: &str, message: impl AsRef<str>) {
        self.warnings
            .push(format!("{}: {}", location(pointer), message.as_ref()));
    }

    fn subschema(
        &mut self,
        pointer: String,
        value: &'a Value,
        depth: usize,
    ) -> Result<NodeId, Error> {
        if let Some(&id) = self.by_pointer.get(&pointer) {
            return Ok(id);
        }
        if depth > MAX_SCHEMA_DEPTH {
            return Err(invalid(
                &pointer,
                format!("the schema nests deeper than {MAX_SCHEMA_DEPTH} levels"),
            ));
        }
        let id = self.nodes.len();
        self.nodes.push(Node::default());
        self.pointers.push(pointer.clone());
        self.by_pointer.insert(pointer.clone(), id);
        let node = match value {
            Value::Bool(verdict) => Node {
                verdict: Some(*verdict),
                ..Node::default()
            },
            Value::Object(map) => self.keywords(&pointer, map, depth)?,
            other => {
                return Err(invalid(
                    &pointer,
                    format!(
                        "a schema must be an object or a boolean, got {}",
                        describe(other)
                    ),
                ))
            }
        };
        self.nodes[id] = node;
        Ok(id)
    }

    fn child(
        &mut self,
        pointer: &str,
        key: &str,
        value: &'a Value,
        depth: usize,
    ) -> Result<NodeId, Error> {
        self.subschema(format!("{pointer}/{}", escape_token(key)), value, depth + 1)
    }

    fn schema_list(
        &mut self,
        pointer: &str,
        key: &str,
        value: &'a Value,
        depth: usize,
    ) -> Result<Vec<NodeId>, Error> {
        let here = format!("{pointer}/{key}");
        let Some(list) = value.as_array().filter(|list| !list.is_empty()) else {
            return Err(invalid(
                &here,
                format!("\"{key}\" must be a non-empty array of schemas"),
            ));
        };
        list.iter()
            .enumerate()
            .map(|(i, sub)| self.subschema(format!("{here}/{i}"), sub, depth + 1))
            .collect()
    }

    fn schema_map(
        &mut self,
        pointer: &str,
        key: &str,
        value: &'a Value,
        depth: usize,
    ) -> Result<Vec<(String, NodeId)>, Error> {
        let here = format!("{pointer}/{key}");
        let map = value
            .as_object()
            .ok_or_else(|| invalid(&here, format!("\"{key}\" must be an object of schemas")))?;
        let mut out = Vec::with_capacity(map.len());
        for (name, sub) in map {
            out.push((name.clone(), self.child(&here, name, sub, depth)?));
        }
        Ok(out)
    }

    #[allow(clippy::too_many_lines)] // one arm per keyword reads best as one table
    fn keywords(
        &mut self,
        pointer: &str,
        map: &'a Map<String, Value>,
        depth: usize,
    ) -> Result<Node, Error> {
        let mut node = Node::default();
        let mut tuple_items = false;
        let mut unchecked_pattern_properties = false;
        let mut exclusive_flags = (false, false);
        for (key, value) in map {
            let here = format!("{pointer}/{}", escape_token(key));
            match key.as_str() {
                "type" => node.types = Some(parse_types(&here, value)?),
                "enum" => {
                    let list = value
                        .as_array()
                        .ok_or_else(|| invalid(&here, "\"enum\" must be an array"))?;
                    node.enumeration = Some(list.clone());
                }
                "const" => node.constant = Some(value.clone()),
                "properties" => {
                    node.properties = self.schema_map(pointer, key, value, depth)?;
                    node.properties.sort_by(|a, b| a.0.cmp(&b.0));
                }
                "patternProperties" => {
                    let entries = self.schema_map(pointer, key, value, depth)?;
                    for (source, id) in entries {
                        match Pattern::new(&source) {
                            Ok(pattern) => node.pattern_properties.push((pattern, id)),
                            Err(PatternError::Unsupported(why)) => {
                                unchecked_pattern_properties = true;
                                self.warn(&here, format!("{source:?}: {why}; properties matching it are not checked"));
                            }
                            Err(PatternError::Invalid(why)) => {
                                return Err(invalid(&here, format!("{source:?} is not a valid regular expression: {why}")))
                            }
                        }
                    }
                }
                "additionalProperties" => node.additional_properties = Some(self.subschema(here, value, depth + 1)?),
                "required" => node.required = strings(&here, key, value)?,
                "minProperties" => node.min_properties = Some(count(&here, key, value)?),
                "maxProperties" => node.max_properties = Some(count(&here, key, value)?),
                "propertyNames" => node.property_names = Some(self.subschema(here, value, depth + 1)?),
                "dependentRequired" => node.dependent_required = self.dependent_required(&here, value)?,
                "dependentSchemas" => node.dependent_schemas = self.schema_map(pointer, key, value, depth)?,
                "dependencies" => {
                    // Draft 7: an array is dependentRequired, a schema dependentSchemas.
                    let map = value
                        .as_object()
                        .ok_or_else(|| invalid(&here, "\"dependencies\" must be an object"))?;
                    for (name, dependency) in map {
                        if dependency.is_array() {
                            let names = strings(&format!("{here}/{}", escape_token(name)), name, dependency)?;
                            node.dependent_required.push((name.clone(), names));
                        } else {
                            let id = self.child(&here, name, dependency, depth)?;
                            node.dependent_schemas.push((name.clone(), id));
                        }
                    }
                }
                "items" if value.is_array() => {
                    // Draft 7 tuple form; `additionalItems` then covers the rest.
                    node.prefix_items = self.schema_list(pointer, key, value, depth)?;
                    tuple_items = true;
                }
                "items" => {
                    if !tuple_items {
                        node.items = Some(self.subschema(here, value, depth + 1)?);
                    }
                }
                "prefixItems" => {
                    if !tuple_items {
                        node.prefix_items = self.schema_list(pointer, key, value, depth)?;
                    }
                }
                "minItems" => node.min_items = Some(count(&here, key, value)?),
                "maxItems" => node.max_items = Some(count(&here, key, value)?),
                "uniqueItems" => {
                    node.unique_items = value
                        .as_bool()
                        .ok_or_else(|| invalid(&here, "\"uniqueItems\" must be a boolean"))?;
                }
                "contains" => node.contains = Some(self.subschema(here, value, depth + 1)?),
                "minContains" => node.min_contains = Some(count(&here, key, value)?),
                "maxContains" => node.max_contains = Some(count(&here, key, value)?),
                "minimum" => node.minimum = Some(number(&here, key, value)?),
                "maximum" => node.maximum = Some(number(&here, key, value)?),
                "exclusiveMinimum" | "exclusiveMaximum" => {
                    let minimum = key == "exclusiveMinimum";
                    if let Some(flag) = value.as_bool() {
                        // Draft 4: a flag on `minimum`/`maximum`.
                        if minimum {
                            exclusive_flags.0 = flag;
                        } else {
                            exclusive_flags.1 = flag;
                        }
                    } else if minimum {
                        node.exclusive_minimum = Some(number(&here, key, value)?);
                    } else {
                        node.exclusive_maximum = Some(number(&here, key, value)?);
                    }
                }
                "multipleOf" => {
                    let n = number(&here, key, value)?;
                    if n.as_f64().is_none_or(|f| f <= 0.0) {
                        return Err(invalid(&here, "\"multipleOf\" must be greater than 0"));
                    }
                    node.multiple_of = Some(n);
                }
                "minLength" => node.min_length = Some(count(&here, key, value)?),
                "maxLength" => node.max_length = Some(count(&here, key, value)?),
                "pattern" => {
                    let source = value
                        .as_str()
                        .ok_or_else(|| invalid(&here, "\"pattern\" must be a string"))?;
                    match Pattern::new(source) {
                        Ok(pattern) => node.pattern = Some((source.to_owned(), pattern)),
                        Err(PatternError::Unsupported(why)) => {
                            self.warn(&here, format!("{source:?}: {why}; this \"pattern\" is not checked"));
                        }
                        Err(PatternError::Invalid(why)) => {
                            return Err(invalid(&here, format!("{source:?} is not a valid regular expression: {why}")))
                        }
                    }
                }
                "allOf" => node.all_of = self.schema_list(pointer, key, value, depth)?,
                "anyOf" => node.any_of = self.schema_list(pointer, key, value, depth)?,
                "oneOf" => node.one_of = self.schema_list(pointer, key, value, depth)?,
                "not" => node.not = Some(self.subschema(here, value, depth + 1)?),
                "if" => {
                    let condition = self.subschema(here, value, depth + 1)?;
                    let then = map
                        .get("then")
                        .map(|v| self.child(pointer, "then", v, depth))
                        .transpose()?;
                    let otherwise = map
                        .get("else")
                        .map(|v| self.child(pointer, "else", v, depth))
                        .transpose()?;
                    node.if_then_else = Some((condition, then, otherwise));
                }
                "$ref" => node.reference = self.reference(&here, value, depth)?,
                "$id" if !pointer.is_empty() => self.warn(
                    &here,
                    "\"$id\" below the root is not supported: references inside it resolve against the root document",
                ),
                "$id" => {}
                k if ANNOTATIONS.contains(&k) || k.starts_with("x-") => {}
                k if UNIMPLEMENTED.contains(&k) => {
                    self.warn(&here, format!("\"{k}\" is not implemented by this validator and is not checked"));
                }
                k => self.warn(&here, format!("unknown keyword \"{k}\" is ignored")),
            }
        }
        if tuple_items {
            if let Some(rest) = map.get("additionalItems") {
                node.items = Some(self.child(pointer, "additionalItems", rest, depth)?);
            }
        }
        if exclusive_flags.0 {
            node.exclusive_minimum = node.minimum.take();
        }
        if exclusive_flags.1 {
            node.exclusive_maximum = node.maximum.take();
        }
        if unchecked_pattern_properties && node.additional_properties.take().is_some() {
            self.warn(
                &format!("{pointer}/additionalProperties"),
                "not checked either, since it depends on the unchecked patternProperties",
            );
        }
        Ok(node)
    }

    fn dependent_required(
        &self,
        here: &str,
        value: &Value,
    ) -> Result<Vec<(String, Vec<String>)>, Error> {
        let map = value.as_object().ok_or_else(|| {
            invalid(
                here,
                "\"dependentRequired\" must be an object of string arrays",
            )
        })?;
        map.iter()
            .map(|(name, list)| {
                Ok((
                    name.clone(),
                    strings(&format!("{here}/{}", escape_token(name)), name, list)?,
                ))
            })
            .collect()
    }

    /// Resolves a local `$ref`; `None` (with a warning) for any other kind.
    fn reference(
        &mut self,
        here: &str,
        value: &Value,
        depth: usize,
    ) -> Result<Option<NodeId>, Error> {
        let text = value
            .as_str()
            .ok_or_else(|| invalid(here, "\"$ref\" must be a string"))?;
        let Some(fragment) = text
            .strip_prefix('#')
            .filter(|f| f.is_empty() || f.starts_with('/'))
        else {
            self.warn(
                here,
                format!("{text:?} is not a local JSON-pointer reference (\"#/$defs/…\"); it is not followed, so this part is not checked"),
            );
            return Ok(None);
        };
        let pointer = percent_decode(fragment)
            .ok_or_else(|| invalid(here, format!("{text:?} has a malformed %-escape")))?;
        let target = resolve(self.root, &pointer)
            .ok_or_else(|| invalid(here, format!("{text:?} points at nothing in this schema")))?;
        self.subschema(pointer, target, depth + 1).map(Some)
    }

    fn refuse_in_place_cycles(&self) -> Result<(), Error> {
        // Iterative three-colour depth-first search.
        const NEW: u8 = 0;
        const OPEN: u8 = 1;
        const DONE: u8 = 2;
        let mut colour = vec![NEW; self.nodes.len()];
        for start in 0..self.nodes.len() {
            if colour[start] != NEW {
                continue;
            }
            let mut stack: Vec<(NodeId, Vec<NodeId>)> = Vec::new();
            colour[start] = OPEN;
            stack.push((start, self.nodes[start].in_place().collect()));
            while let Some((id, pending)) = stack.last_mut() {
                let id = *id;
                match pending.pop() {
                    Some(next) if colour[next] == OPEN => {
                        return Err(invalid(
                            &self.pointers[next],
                            format!(
                                "a cycle of $ref/allOf/anyOf/oneOf/not/if through {} never descends into the value, so it would never finish",
                                location(&self.pointers[id])
                            ),
                        ));
                    }
                    Some(next) if colour[next] == NEW => {
                        colour[next] = OPEN;
                        stack.push((next, self.nodes[next].in_place().collect()));
                    }
                    Some(_) => {}
                    None => {
                        colour[id] = DONE;
                        stack.pop();
                    }
                }
            }
        }
        Ok(())
    }
}

fn parse_types(here: &str, value: &Value) -> Result<u8, Error> {
    let one = |name: &Value| {
        let name = name.as_str().unwrap_or_default();
        types::NAMES
            .iter()
            .find(|(known, _)| *known == name)
            .map(|(_, bit)| *bit)
            .ok_or_else(|| {
                invalid(
                    here,
                    format!("unknown type {name:?}; use null, boolean, object, array, number, string or integer"),
                )
            })
    };
    match value {
        Value::String(_) => one(value),
        Value::Array(list) if !list.is_empty() => {
            list.iter().try_fold(0, |bits, name| Ok(bits | one(name)?))
        }
        _ => Err(invalid(
            here,
            "\"type\" must be a type name or a non-empty array of them",
        )),
    }
}

fn strings(here: &str, key: &str, value: &Value) -> Result<Vec<String>, Error> {
    value
        .as_array()
        .and_then(|list| list.iter().map(|s| s.as_str().map(str::to_owned)).collect())
        .ok_or_else(|| invalid(here, format!("\"{key}\" must be an array of strings")))
}

fn count(here: &str, key: &str, value: &Value) -> Result<u64, Error> {
    // JSON Schema counts `2.0` as the integer 2; below 2^53 the cast is exact.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let exact = value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|f| f.fract() == 0.0 && (0.0..9.0e15).contains(f))
            .map(|f| f as u64)
    });
    exact.ok_or_else(|| invalid(here, format!("\"{key}\" must be a non-negative integer")))
}

fn number(here: &str, key: &str, value: &Value) -> Result<Number, Error> {
    match value {
        Value::Number(n) => Ok(n.clone()),
        _ => Err(invalid(here, format!("\"{key}\" must be a number"))),
    }
}

/// The value at an (escaped) JSON pointer.
fn resolve<'v>(root: &'v Value, pointer: &str) -> Option<&'v Value> {
    if pointer.is_empty() {
        return Some(root);
    }
    let mut at = root;
    for token in pointer.strip_prefix('/')?.split('/') {
        let token = token.replace("~1", "/").replace("~0", "~");
        at = match at {
            Value::Object(map) => map.get(&token)?,
            Value::Array(list) => list.get(token.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(at)
}

/// Undoes URI %-escapes in a fragment; `None` for a malformed one.
fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}
