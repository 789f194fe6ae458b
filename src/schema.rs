//! Validation of tool arguments (and structured results) against a JSON
//! Schema, before any handler sees them.
//!
//! A model calls tools from their schemas and makes mistakes. MCP 2025-11-25
//! asks servers to answer a bad call with a *tool* error the model can read
//! and fix, so the host checks every call against the tool's `inputSchema`
//! and tells the model, one line per violation, what to change:
//!
//! ```text
//! /limit: expected integer ≥ 1, got -3
//! /query: expected string, got nothing (required property is missing)
//! ```
//!
//! A schema is compiled once, when the [`Tool`](crate::Tool) is built: every
//! subschema becomes a node with its keywords already parsed, `$ref`s become
//! indices, and a call only walks the nodes. The rules — what is checked,
//! what is only reported, the `pattern` subset — are public, on [`Schema`].

mod check;
mod compile;
mod node;
mod pattern;
mod report;
mod values;

pub(crate) use compile::describe;

use std::fmt;

use serde_json::Value;

use crate::error::Error;

/// The longest text [`Violations`] displays.
const MAX_MESSAGE_CHARS: usize = 2_000;

/// A compiled JSON Schema: what the host checks a tool's arguments (and
/// structured results) against, before any handler sees them.
///
/// A call whose arguments break the tool's input schema gets a tool error
/// (`isError: true`) that lists every violation, one line each, so that
/// the model can correct itself:
///
/// ```text
/// Invalid arguments for tool "search":
/// /limit: expected integer ≥ 1, got -3
/// /query: expected string, got nothing (required property is missing)
/// ```
///
/// A tool's schemas are compiled when the [`Tool`](crate::Tool) is built;
/// [`Tool::validate`](crate::Tool::validate) refuses an invalid one and
/// [`Tool::schema_warnings`](crate::Tool::schema_warnings) lists the
/// keywords left unchecked.
///
/// # What is checked
///
/// | keywords | notes |
/// | --- | --- |
/// | `type` | one name or an array; `integer` means a JSON number without fraction or exponent (see below) |
/// | `enum`, `const` | numbers compare by value (`1` equals `1.0`) |
/// | `properties`, `required`, `additionalProperties`, `patternProperties`, `propertyNames`, `minProperties`, `maxProperties`, `dependentRequired`, `dependentSchemas`, `dependencies` | `additionalProperties` is a boolean or a schema |
/// | `items`, `prefixItems`, `additionalItems`, `minItems`, `maxItems`, `uniqueItems`, `contains`, `minContains`, `maxContains` | `items` as an array is the draft-7 tuple form |
/// | `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf` | draft-4 boolean `exclusive*` too; integers compare exactly |
/// | `minLength`, `maxLength`, `pattern` | lengths in characters (Unicode scalar values); `pattern` in a safe subset, below |
/// | `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else` | |
/// | `$ref`, `$defs`, `definitions` | local references (`#`, `#/$defs/name`, any `#/…` pointer); recursion allowed; keywords beside a `$ref` apply too, as since 2019-09 |
/// | `true`, `false` | boolean schemas |
///
/// Annotations (`title`, `description`, `default`, `examples`, `format`,
/// `deprecated`, `readOnly`, `writeOnly`, `$comment`, `$schema`, `$id` at the
/// root, `content*`, and any `x-…` extension such as MCP's `x-mcp-header`)
/// are accepted and not checked. `format` in particular is left unchecked,
/// as JSON Schema 2020-12 does by default.
///
/// # What is reported instead
///
/// Nothing is silently ignored. At compile time, [`Schema::warnings`] lists,
/// once, each keyword that is not checked: `unevaluatedProperties`,
/// `unevaluatedItems`, `$dynamicRef`, `$recursiveRef`, a `$ref` that is not
/// a local pointer (remote documents, `#anchor`), a nested `$id`, a
/// `pattern` outside the subset, and unknown keywords (a typo such as
/// `requried` shows up here). A schema that is *invalid* — a subschema that
/// is not an object or boolean, `"type": "strnig"`, `"minLength": -1`, a
/// `$ref` to nothing, a broken regular expression, a cycle of `$ref`s that
/// never descends into the value — is refused with
/// [`Error::InvalidSchema`].
///
/// # `pattern`: the safe subset
///
/// Patterns are ECMA-262 regular expressions, unanchored, matched by a VM
/// whose cost is linear in the string (no catastrophic backtracking, whatever
/// the model sends): literals, `.`, classes `[…]` and `[^…]`, `\d \D \w \W
/// \s \S \b \B`, the usual character escapes (`\t \n \xHH \uHHHH \u{…}`),
/// `^ $`, groups `(…)`, `(?:…)`, `(?<name>…)`, `|`, and `* + ? {n} {n,}
/// {n,m}` (counts up to 1000; lazy forms accepted). Lookaround,
/// backreferences, `\p{…}` and `\c…` are outside it and reported as
/// warnings (the pattern is then not checked).
///
/// # Deliberate strictness: `integer`
///
/// JSON Schema counts `5.0` as an integer. Here `integer` accepts only
/// numbers written without fraction or exponent, so a handler can rely on
/// [`Value::as_i64`]/[`Value::as_u64`]; a model that sends `5.0` is told
/// `expected integer, got 5.0` and sends `5`.
///
/// # Messages
///
/// One line per violation, `<JSON pointer into the value>: expected …, got
/// …` (`/` is the value itself). At most 20 lines are kept, values are cut
/// to 60 characters and the whole text to about 2000; the rest is counted
/// (`… and 7 more violations`).
///
/// A typed tool's arguments ([`StaticSurface::typed`](crate::StaticSurface::typed))
/// are then decoded into its type, and a failure is told the same way, in
/// serde's words: ``/limit: invalid value: integer `300`, expected u8``.
///
/// # Example
///
/// ```
/// use serde_json::json;
/// use toolhost::Schema;
///
/// let schema = Schema::compile(&json!({
///     "type": "object",
///     "properties": {"limit": {"type": "integer", "minimum": 1}},
///     "required": ["limit"],
/// }))?;
/// assert!(schema.validate(&json!({"limit": 5})).is_ok());
/// let refused = schema.validate(&json!({"limit": -3})).unwrap_err();
/// assert_eq!(refused.to_string(), "/limit: expected integer ≥ 1, got -3");
/// # Ok::<(), toolhost::Error>(())
/// ```
#[derive(Clone, PartialEq)]
pub struct Schema {
    /// The root is node 0.
    nodes: Vec<node::Node>,
    warnings: Vec<String>,
}

impl Schema {
    /// Compiles a schema document (an object or a boolean). Fails with
    /// [`Error::InvalidSchema`] when the schema is invalid; keywords it
    /// cannot check are listed by [`Schema::warnings`] instead.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolhost::Schema;
    ///
    /// let err = Schema::compile(&json!({"type": "strnig"})).unwrap_err();
    /// assert!(err.to_string().contains("unknown type \"strnig\""));
    /// ```
    pub fn compile(schema: &Value) -> Result<Schema, Error> {
        let (nodes, warnings) = compile::compile(schema)?;
        Ok(Schema { nodes, warnings })
    }

    /// Checks a value; `Err` lists every violation.
    pub fn validate(&self, value: &Value) -> Result<(), Violations> {
        let mut out = report::Out::collecting();
        if check::check(&self.nodes, 0, value, &mut out) {
            Ok(())
        } else {
            Err(Violations {
                kept: out.kept,
                total: out.total.max(1),
            })
        }
    }

    /// The keywords this schema uses that are not checked, one line each,
    /// with their place in the schema (`#/properties/code/pattern: …`).
    ///
    /// ```
    /// use serde_json::json;
    /// use toolhost::Schema;
    ///
    /// let schema = Schema::compile(&json!({
    ///     "type": "object",
    ///     "properties": {"code": {"type": "string", "pattern": "^(?!tmp)"}},
    ///     "requried": ["code"],
    /// }))?;
    /// assert_eq!(schema.warnings().len(), 2);
    /// # Ok::<(), toolhost::Error>(())
    /// ```
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
}

impl fmt::Debug for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Schema")
            .field("nodes", &self.nodes.len())
            .field("warnings", &self.warnings)
            .finish()
    }
}

/// Why a value does not match a [`Schema`]: the violations, in the order
/// found. `Display` writes one line per violation, capped in length.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violations {
    /// The first few, with their text.
    kept: Vec<Violation>,
    /// All of them, counting those not kept.
    total: usize,
}

impl Violations {
    /// The violations kept with their text (the first 20).
    pub fn iter(&self) -> impl Iterator<Item = &Violation> {
        self.kept.iter()
    }

    /// How many violations were found, including any not kept.
    pub fn len(&self) -> usize {
        self.total
    }

    /// Always `false`: a `Violations` has at least one.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }
}

impl fmt::Display for Violations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut written = 0;
        let mut shown = 0;
        for violation in &self.kept {
            let line = violation.to_string();
            if shown > 0 && written + line.len() > MAX_MESSAGE_CHARS {
                break;
            }
            if shown > 0 {
                f.write_str("\n")?;
            }
            f.write_str(&line)?;
            written += line.len() + 1;
            shown += 1;
        }
        match self.total - shown {
            0 => Ok(()),
            1 => f.write_str("\n… and 1 more violation"),
            more => write!(f, "\n… and {more} more violations"),
        }
    }
}

impl std::error::Error for Violations {}

/// One place where a value breaks its schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    path: String,
    message: String,
}

impl Violation {
    /// The JSON pointer of the offending part of the value (`/` for the
    /// value itself, `/tags/2` for the third item of `tags`).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// What was expected and what was found.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}
