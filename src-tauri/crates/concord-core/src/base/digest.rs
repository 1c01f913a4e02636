//! Content fingerprints: SHA-256 as lowercase hex, the one helper every module uses to recognise
//! content it has seen before (an imported file, a judge prompt, a run's settings).

use sha2::{Digest, Sha256};

/// SHA-256 of `bytes` as 64 lowercase hex digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// SHA-256 of everything `reader` yields, as [`sha256_hex`] gives it for the same bytes; read in
/// chunks, so a file of any size is fingerprinted in constant memory.
pub fn sha256_reader(mut reader: impl std::io::Read) -> std::io::Result<String> {
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 16];
    loop {
        match reader.read(&mut buffer) {
            Ok(0) => return Ok(hex(&hasher.finalize())),
            Ok(n) => hasher.update(&buffer[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

fn hex(digest: &[u8]) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(64);
    for b in digest {
        // Writing to a String cannot fail.
        let _ = write!(out, "{b:02x}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::sha256_hex;

    #[test]
    fn a_stream_fingerprints_like_its_bytes() {
        let bytes: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        assert_eq!(
            super::sha256_reader(&bytes[..]).expect("reading a slice cannot fail"),
            sha256_hex(&bytes),
            "a file fingerprinted in chunks must be recognised as the same bytes read whole"
        );
    }

    #[test]
    fn matches_the_published_test_vector() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            "FIPS 180-2 example: SHA-256 of \"abc\" must match byte for byte"
        );
    }
}
