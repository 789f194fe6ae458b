//! SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for signing the small
//! request-state tokens the host hands out and later takes back. Written here
//! rather than pulled in so the runtime dependencies stay at `tiny_http`,
//! `serde_json` and `getrandom`; the inputs are short, so a plain portable
//! implementation is fast enough.

/// SHA-256 works on 64-byte blocks, and HMAC pads its key to the same size.
const BLOCK_LEN: usize = 64;

/// FIPS 180-4 section 5.3.3: the first 32 bits of the fractional parts of the
/// square roots of the first eight primes.
const INITIAL_STATE: [u32; 8] = [
    0x6a09_e667,
    0xbb67_ae85,
    0x3c6e_f372,
    0xa54f_f53a,
    0x510e_527f,
    0x9b05_688c,
    0x1f83_d9ab,
    0x5be0_cd19,
];

/// FIPS 180-4 section 4.2.2: the first 32 bits of the fractional parts of the
/// cube roots of the first 64 primes.
#[rustfmt::skip]
const ROUND_CONSTANTS: [u32; 64] = [
    0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5,
    0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
    0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3,
    0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
    0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc,
    0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
    0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7,
    0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
    0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13,
    0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
    0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3,
    0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
    0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5,
    0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
    0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208,
    0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
];

/// Incremental SHA-256, so HMAC can hash its padded key and the message
/// without first copying them into one buffer.
pub(crate) struct Sha256 {
    state: [u32; 8],
    /// Bytes that do not yet fill a block; the compression function only
    /// ever sees whole blocks.
    buffer: [u8; BLOCK_LEN],
    buffered: usize,
    /// Total bytes fed in. FIPS 180-4 only defines messages shorter than
    /// 2^64 bits, so wrapping beyond that is as good as any other choice.
    length: u64,
}

impl Sha256 {
    pub(crate) fn new() -> Self {
        Self {
            state: INITIAL_STATE,
            buffer: [0; BLOCK_LEN],
            buffered: 0,
            length: 0,
        }
    }

    pub(crate) fn update(&mut self, mut data: &[u8]) {
        // usize is at most 64 bits on every target Rust supports, so the
        // fallback is unreachable; it only avoids a panic path.
        let added = u64::try_from(data.len()).unwrap_or(u64::MAX);
        self.length = self.length.wrapping_add(added);

        // Top up a partly filled block first so blocks stay in message order.
        if self.buffered > 0 {
            let take = (BLOCK_LEN - self.buffered).min(data.len());
            self.buffer[self.buffered..self.buffered + take].copy_from_slice(&data[..take]);
            self.buffered += take;
            data = &data[take..];
            if self.buffered < BLOCK_LEN {
                return;
            }
            compress(&mut self.state, &self.buffer);
            self.buffered = 0;
        }

        // Whole blocks straight from the input spare a copy through the buffer.
        let mut blocks = data.chunks_exact(BLOCK_LEN);
        for block in &mut blocks {
            compress(&mut self.state, block);
        }
        let rest = blocks.remainder();
        self.buffer[..rest.len()].copy_from_slice(rest);
        self.buffered = rest.len();
    }

    pub(crate) fn finish(mut self) -> [u8; 32] {
        // Taken before padding, which goes through `update` and would count
        // itself otherwise.
        let bit_length = self.length.wrapping_mul(8);

        // FIPS 180-4 section 5.1.1: a 1 bit, then zeros up to 56 bytes into a
        // block, leaving exactly 8 bytes for the length. When fewer than 9
        // bytes are left in this block, the padding spills into a new one.
        let pad_len = if self.buffered < BLOCK_LEN - 8 {
            BLOCK_LEN - 8 - self.buffered
        } else {
            2 * BLOCK_LEN - 8 - self.buffered
        };
        let mut padding = [0u8; BLOCK_LEN];
        padding[0] = 0x80;
        self.update(&padding[..pad_len]);
        self.update(&bit_length.to_be_bytes());
        debug_assert_eq!(self.buffered, 0);

        let mut digest = [0u8; 32];
        for (out, word) in digest.chunks_exact_mut(4).zip(self.state) {
            out.copy_from_slice(&word.to_be_bytes());
        }
        digest
    }
}

/// FIPS 180-4 section 6.2.2 on one 64-byte block. Takes a slice rather than
/// an array because `chunks_exact` yields slices and converting would need a
/// fallible `try_into`; callers always pass exactly `BLOCK_LEN` bytes.
// a to h are the working variables as FIPS 180-4 names them, which keeps the
// rounds easy to check against the standard.
#[allow(clippy::many_single_char_names)]
fn compress(state: &mut [u32; 8], block: &[u8]) {
    debug_assert_eq!(block.len(), BLOCK_LEN);

    let mut schedule = [0u32; 64];
    for (word, bytes) in schedule.iter_mut().zip(block.chunks_exact(4)) {
        *word = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    }
    for t in 16..64 {
        let w15 = schedule[t - 15];
        let w2 = schedule[t - 2];
        let sigma0 = w15.rotate_right(7) ^ w15.rotate_right(18) ^ (w15 >> 3);
        let sigma1 = w2.rotate_right(17) ^ w2.rotate_right(19) ^ (w2 >> 10);
        schedule[t] = schedule[t - 16]
            .wrapping_add(sigma0)
            .wrapping_add(schedule[t - 7])
            .wrapping_add(sigma1);
    }

    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
    for (&k, &w) in ROUND_CONSTANTS.iter().zip(&schedule) {
        let big_sigma1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
        let choose = (e & f) ^ (!e & g);
        let t1 = h
            .wrapping_add(big_sigma1)
            .wrapping_add(choose)
            .wrapping_add(k)
            .wrapping_add(w);
        let big_sigma0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
        let majority = (a & b) ^ (a & c) ^ (b & c);
        let t2 = big_sigma0.wrapping_add(majority);
        h = g;
        g = f;
        f = e;
        e = d.wrapping_add(t1);
        d = c;
        c = b;
        b = a;
        a = t1.wrapping_add(t2);
    }

    for (s, v) in state.iter_mut().zip([a, b, c, d, e, f, g, h]) {
        *s = s.wrapping_add(v);
    }
}

/// SHA-256 of `data` in one call.
pub(crate) fn sha256(data: &[u8]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(data);
    hasher.finish()
}

/// HMAC-SHA256 (RFC 2104) of `message` under `key`.
///
/// Compare tags in constant time when verifying; `==` on the arrays can
/// leak how many leading bytes matched.
pub(crate) fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    // RFC 2104 section 2: a key longer than a block is replaced by its hash,
    // and any key is then zero-padded to a full block.
    let mut block_key = [0u8; BLOCK_LEN];
    if key.len() > BLOCK_LEN {
        block_key[..32].copy_from_slice(&sha256(key));
    } else {
        block_key[..key.len()].copy_from_slice(key);
    }

    let mut inner = Sha256::new();
    inner.update(&block_key.map(|byte| byte ^ 0x36));
    inner.update(message);
    let inner_digest = inner.finish();

    let mut outer = Sha256::new();
    outer.update(&block_key.map(|byte| byte ^ 0x5c));
    outer.update(&inner_digest);
    outer.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        use std::fmt::Write;
        bytes.iter().fold(String::new(), |mut out, byte| {
            let _ = write!(out, "{byte:02x}");
            out
        })
    }

    #[test]
    fn sha256_of_the_empty_message_matches_fips_180_2() {
        assert_eq!(
            hex(&sha256(b"")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn sha256_of_abc_matches_fips_180_2() {
        assert_eq!(
            hex(&sha256(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn sha256_of_the_448_bit_message_matches_fips_180_2() {
        assert_eq!(
            hex(&sha256(
                b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
            )),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
    }

    #[test]
    fn sha256_of_one_million_a_matches_fips_180_2() {
        assert_eq!(
            hex(&sha256(&vec![b'a'; 1_000_000])),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
    }

    #[test]
    fn sha256_pads_correctly_around_the_block_boundaries() {
        // Lengths where the length field just fits, just spills into a second
        // block, or the message itself fills a block exactly.
        let vectors = [
            (
                55,
                "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318",
            ),
            (
                56,
                "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a",
            ),
            (
                57,
                "f13b2d724659eb3bf47f2dd6af1accc87b81f09f59f2b75e5c0bed6589dfe8c6",
            ),
            (
                63,
                "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34",
            ),
            (
                64,
                "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb",
            ),
            (
                65,
                "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0",
            ),
            (
                119,
                "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb",
            ),
            (
                120,
                "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c",
            ),
        ];
        for (len, expected) in vectors {
            assert_eq!(hex(&sha256(&vec![b'a'; len])), expected, "length {len}");
        }
    }

    #[test]
    fn streaming_in_odd_sized_pieces_equals_hashing_in_one_call() {
        let message: Vec<u8> = (0..=255u8)
            .cycle()
            .take(1000)
            .map(|b| b.wrapping_mul(31))
            .collect();
        let one_shot = sha256(&message);
        for piece in [1, 3, 7, 13, 55, 63, 64, 65, 127, 129, 999, 1000, 1001] {
            let mut hasher = Sha256::new();
            for chunk in message.chunks(piece) {
                hasher.update(chunk);
            }
            assert_eq!(hasher.finish(), one_shot, "pieces of {piece} bytes");
        }
        // Uneven pieces, including empty ones, exercise every buffer state.
        let mut hasher = Sha256::new();
        let mut rest = &message[..];
        for size in [0, 5, 0, 59, 1, 64, 70, 2, 130].iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (piece, tail) = rest.split_at((*size).min(rest.len()));
            hasher.update(piece);
            rest = tail;
        }
        assert_eq!(hasher.finish(), one_shot);
    }

    #[test]
    fn hmac_matches_rfc_4231_test_case_1() {
        assert_eq!(
            hex(&hmac_sha256(&[0x0b; 20], b"Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
    }

    #[test]
    fn hmac_matches_rfc_4231_test_case_2_with_a_key_shorter_than_the_tag() {
        assert_eq!(
            hex(&hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn hmac_matches_rfc_4231_test_case_3() {
        assert_eq!(
            hex(&hmac_sha256(&[0xaa; 20], &[0xdd; 50])),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
        );
    }

    #[test]
    fn hmac_matches_rfc_4231_test_case_4() {
        let key: Vec<u8> = (1..=25).collect();
        assert_eq!(
            hex(&hmac_sha256(&key, &[0xcd; 50])),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"
        );
    }

    #[test]
    fn hmac_matches_rfc_4231_test_case_5_truncated_to_128_bits() {
        let tag = hmac_sha256(&[0x0c; 20], b"Test With Truncation");
        assert_eq!(hex(&tag[..16]), "a3b6167473100ee06e0c796c2955552b");
    }

    #[test]
    fn hmac_matches_rfc_4231_test_case_6_with_a_key_longer_than_a_block() {
        assert_eq!(
            hex(&hmac_sha256(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn hmac_matches_rfc_4231_test_case_7_with_a_long_key_and_long_data() {
        let message = b"This is a test using a larger than block-size key and a larger \
than block-size data. The key needs to be hashed before being used by the HMAC algorithm.";
        assert_eq!(
            hex(&hmac_sha256(&[0xaa; 131], message)),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"
        );
    }
}
