//! A JSON object's member names matched without allocating them: each key
//! type says what a name means ([`MemberName::of`]), and [`Named`] reads
//! one from any deserializer.

use std::fmt;
use std::marker::PhantomData;

use serde_core::de::{Deserialize, Deserializer, Visitor};

/// What a member name means to a reader.
pub(crate) trait MemberName: Sized {
    /// The meaning of `name`.
    fn of(name: &str) -> Self;
}

/// A member name read as `K` (`map.next_key::<Named<K>>()`).
pub(crate) struct Named<K>(pub(crate) K);

impl<'de, K: MemberName> Deserialize<'de> for Named<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Named<K>, D::Error> {
        deserializer.deserialize_identifier(NameVisitor(PhantomData))
    }
}

struct NameVisitor<K>(PhantomData<K>);

impl<K: MemberName> Visitor<'_> for NameVisitor<K> {
    type Value = Named<K>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a member name")
    }

    fn visit_str<E>(self, name: &str) -> Result<Named<K>, E> {
        Ok(Named(K::of(name)))
    }
}
