//! The fuzzer's random numbers: a small deterministic generator, so that
//! a seed replays its cases.

/// xorshift64*, seeded through splitmix64 so that neighbouring seeds differ.
/// A gentle generator spoils nothing on its dials: its requests are the
/// well-formed ones that reach deep into the protocol.
pub(crate) struct Rng(u64, pub(crate) bool);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Rng((z ^ (z >> 31)) | 1, false)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    pub(crate) fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// One of `n` choices, the last being the well-behaved one.
    pub(crate) fn dial(&mut self, n: usize) -> usize {
        if self.1 {
            n - 1
        } else {
            self.below(n)
        }
    }

    /// Whether to spoil something, `percent` of the time unless gentle.
    pub(crate) fn spoil(&mut self, percent: usize) -> bool {
        !self.1 && self.chance(percent)
    }

    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}
