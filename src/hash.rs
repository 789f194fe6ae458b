//! The hash of the maps a request looks up: keys the host chose itself.
//!
//! std's `HashMap` hashes with SipHash under a random key, so that keys an
//! attacker picks cannot all land in one bucket. That defence is for maps
//! an attacker *fills*. The maps a request looks up are filled by the host
//! alone — session locators and MCP session ids it drew at random, call
//! numbers it counts up, the application's tool names — and a client only
//! looks in them. A lookup cannot lengthen another key's probe, so a
//! client's choice of key buys it nothing; the keys that are in the map
//! are spread by the host's randomness or its counting. SipHash pays for a
//! defence these maps do not need on every lookup a tool call makes; this
//! costs a multiply per eight bytes.
//!
//! Never use it for a map whose keys a client supplies on insertion.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A `HashMap` keyed by values the host chose (see the module's docs).
pub(crate) type HostMap<K, V> = HashMap<K, V, BuildHasherDefault<HostKeyHasher>>;

/// Folds each word into the state with a rotate, a xor and a multiply by an
/// odd constant (the fractional part of the golden ratio's inverse, which
/// spreads low bits into the high ones that hashbrown's tags read).
#[derive(Default, Clone, Copy)]
pub(crate) struct HostKeyHasher(u64);

const SPREAD: u64 = 0x9e37_79b9_7f4a_7c15;

impl HostKeyHasher {
    fn fold(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SPREAD);
    }
}

impl Hasher for HostKeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let mut buf = [0u8; 8];
            buf.copy_from_slice(word);
            self.fold(u64::from_le_bytes(buf));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut buf = [0u8; 8];
            buf[..rest.len()].copy_from_slice(rest);
            self.fold(u64::from_le_bytes(buf));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.fold(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.fold(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.fold(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    fn hash_of<T: Hash + ?Sized>(value: &T) -> u64 {
        BuildHasherDefault::<HostKeyHasher>::default().hash_one(value)
    }

    #[test]
    fn keys_that_differ_anywhere_hash_apart() {
        // Strings that differ in their last byte, in a trailing partial
        // word, or only in length (the terminator `str` hashes).
        let keys = ["a", "b", "ab", "abcdefgh", "abcdefgi", "abcdefgha", ""];
        let hashes: Vec<u64> = keys.iter().map(|k| hash_of(*k)).collect();
        for (i, a) in hashes.iter().enumerate() {
            for b in &hashes[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_ne!(hash_of(&1u64), hash_of(&2u64));
    }

    #[test]
    fn counted_keys_spread_over_the_high_bits() {
        // hashbrown picks a slot's tag from the top 7 bits: call numbers
        // 0, 1, 2, … must not all share one.
        let tags: std::collections::HashSet<u64> = (0u64..256).map(|n| hash_of(&n) >> 57).collect();
        assert!(tags.len() > 64, "only {} distinct tags", tags.len());
    }

    #[test]
    fn a_host_map_works_as_a_map() {
        let mut map: HostMap<String, usize> = HostMap::default();
        for n in 0..1000 {
            map.insert(format!("tool_{n}"), n);
        }
        assert_eq!(map.len(), 1000);
        assert!((0..1000).all(|n| map.get(format!("tool_{n}").as_str()) == Some(&n)));
        assert_eq!(map.get("tool_1000"), None);
    }
}
