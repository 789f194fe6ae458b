//! The crate's cryptographic leaves: the operating system's randomness,
//! comparison in constant time, hex, and HMAC-SHA256 ([`hmac`]).
//!
//! Bearers, MCP session ids, request-state keys and nonces all come from
//! [`random_bytes`]; every comparison of a secret goes through
//! [`constant_time_eq`].

pub(crate) mod hmac;

/// Fills `buf` from the operating system's random source.
///
/// # Panics
/// When the operating system cannot provide randomness, which std's own
/// `HashMap` also treats as fatal: no bearer can be minted safely then.
pub(crate) fn random_bytes(buf: &mut [u8]) {
    if let Err(err) = getrandom::fill(buf) {
        panic!("toolhost: the operating system's random source failed ({err}); refusing to mint a guessable bearer");
    }
}

/// Compares two byte strings in time that depends only on their lengths.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        text.push(char::from(DIGITS[usize::from(b >> 4)]));
        text.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    text
}

/// Fills `out` from hex `text` (either case); `None` unless `text` is
/// exactly twice as long as `out` and all hex digits.
pub(crate) fn unhex(text: &str, out: &mut [u8]) -> Option<()> {
    if text.len() != out.len() * 2 {
        return None;
    }
    // By table, and one check per byte: every request's bearer is 80 hex
    // digits, and a branch per digit is paid on every one of them.
    // (The digits are the client's own; the secret is compared in
    // constant time after.)
    for (slot, pair) in out.iter_mut().zip(text.as_bytes().chunks_exact(2)) {
        let (high, low) = (NIBBLES[usize::from(pair[0])], NIBBLES[usize::from(pair[1])]);
        if (high | low) > 0x0F {
            return None;
        }
        *slot = (high << 4) | low;
    }
    Some(())
}

/// Each byte's value as a hex digit (either case); `0xFF` for a byte that
/// is not one.
static NIBBLES: [u8; 256] = {
    let mut table = [0xFF; 256];
    let mut n = 0;
    while n < 10 {
        table[b'0' as usize + n] = n as u8;
        n += 1;
    }
    let mut n = 0;
    while n < 6 {
        table[b'a' as usize + n] = 10 + n as u8;
        table[b'A' as usize + n] = 10 + n as u8;
        n += 1;
    }
    table
};

/// `n` random bytes as hex: an identifier nobody can guess.
pub(crate) fn random_hex(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    random_bytes(&mut bytes);
    hex(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_time_eq_agrees_with_eq() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
        assert!(constant_time_eq(b"", b""));
    }

    #[test]
    fn hex_round_trips_and_rejects_what_is_not_hex() {
        let bytes = [0x00, 0x7f, 0xa5, 0xff];
        assert_eq!(hex(&bytes), "007fa5ff");
        let mut back = [0u8; 4];
        assert_eq!(unhex("007FA5ff", &mut back), Some(()));
        assert_eq!(back, bytes);
        assert_eq!(unhex("007fa5f", &mut back), None);
        assert_eq!(unhex("007fa5fg", &mut back), None);
        for byte in 0..=u8::MAX {
            let text = format!("0{}", char::from(byte));
            let mut one = [0u8; 1];
            let digit = char::from(byte).to_digit(16);
            let read = std::str::from_utf8(text.as_bytes())
                .ok()
                .filter(|t| t.len() == 2)
                .and_then(|t| unhex(t, &mut one).map(|()| one[0]));
            assert_eq!(read, digit.map(|d| d as u8), "{byte:#x}");
        }
        assert_eq!(random_hex(16).len(), 32);
        assert_ne!(random_hex(16), random_hex(16));
    }
}
