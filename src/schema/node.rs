//! The compiled form of a schema: one [`Node`] per subschema, in an arena
//! whose indices stand in for `$ref`s and nested schemas.

use serde_json::{Number, Value};

use super::pattern::Pattern;

pub(super) type NodeId = usize;

/// The instance types of `type`, as bits.
pub(super) mod types {
    pub(crate) const NULL: u8 = 1;
    pub(crate) const BOOLEAN: u8 = 1 << 1;
    pub(crate) const OBJECT: u8 = 1 << 2;
    pub(crate) const ARRAY: u8 = 1 << 3;
    pub(crate) const NUMBER: u8 = 1 << 4;
    pub(crate) const STRING: u8 = 1 << 5;
    pub(crate) const INTEGER: u8 = 1 << 6;

    pub(crate) const NAMES: [(&str, u8); 7] = [
        ("null", NULL),
        ("boolean", BOOLEAN),
        ("object", OBJECT),
        ("array", ARRAY),
        ("number", NUMBER),
        ("string", STRING),
        ("integer", INTEGER),
    ];
}

/// One compiled subschema. Absent keywords are `None` or empty.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Node {
    /// `Some` for a boolean schema: `true` accepts everything, `false` nothing.
    pub(super) verdict: Option<bool>,
    pub(super) types: Option<u8>,
    pub(super) enumeration: Option<Vec<Value>>,
    pub(super) constant: Option<Value>,

    /// Sorted by name, for binary search.
    pub(super) properties: Vec<(String, NodeId)>,
    pub(super) pattern_properties: Vec<(Pattern, NodeId)>,
    pub(super) additional_properties: Option<NodeId>,
    pub(super) required: Vec<String>,
    pub(super) min_properties: Option<u64>,
    pub(super) max_properties: Option<u64>,
    pub(super) property_names: Option<NodeId>,
    pub(super) dependent_required: Vec<(String, Vec<String>)>,
    pub(super) dependent_schemas: Vec<(String, NodeId)>,

    pub(super) prefix_items: Vec<NodeId>,
    /// Applies to the items after `prefix_items`.
    pub(super) items: Option<NodeId>,
    pub(super) min_items: Option<u64>,
    pub(super) max_items: Option<u64>,
    pub(super) unique_items: bool,
    pub(super) contains: Option<NodeId>,
    pub(super) min_contains: Option<u64>,
    pub(super) max_contains: Option<u64>,

    pub(super) minimum: Option<Number>,
    pub(super) maximum: Option<Number>,
    pub(super) exclusive_minimum: Option<Number>,
    pub(super) exclusive_maximum: Option<Number>,
    pub(super) multiple_of: Option<Number>,

    pub(super) min_length: Option<u64>,
    pub(super) max_length: Option<u64>,
    /// The source (for messages) and its program.
    pub(super) pattern: Option<(String, Pattern)>,

    pub(super) all_of: Vec<NodeId>,
    pub(super) any_of: Vec<NodeId>,
    pub(super) one_of: Vec<NodeId>,
    pub(super) not: Option<NodeId>,
    pub(super) if_then_else: Option<(NodeId, Option<NodeId>, Option<NodeId>)>,
    pub(super) reference: Option<NodeId>,
}

impl Node {
    /// The nodes applied to the same value as this one.
    pub(super) fn in_place(&self) -> impl Iterator<Item = NodeId> + '_ {
        let conditional = self
            .if_then_else
            .iter()
            .flat_map(|&(i, t, e)| [Some(i), t, e])
            .flatten();
        self.all_of
            .iter()
            .chain(&self.any_of)
            .chain(&self.one_of)
            .copied()
            .chain(self.not)
            .chain(self.reference)
            .chain(self.dependent_schemas.iter().map(|(_, id)| *id))
            .chain(conditional)
    }
}
