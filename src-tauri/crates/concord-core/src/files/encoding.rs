//! Text files as UTF-8, whatever their encoding on disk: a UTF-8 byte-order mark is dropped,
//! UTF-16 with a byte-order mark is decoded, and UTF-16 without one is refused with a message that
//! says how to save the file — the CSV and JSON Lines readers both start here.

use super::{Issue, Location};
use std::borrow::Cow;

/// Text bytes as UTF-8: a UTF-8 byte-order mark is dropped, UTF-16 with a byte-order mark is
/// decoded, and UTF-16 without one (NUL in every other byte) is refused with a clear message.
pub(crate) fn decode_text<'a>(file: &str, bytes: &'a [u8]) -> Result<Cow<'a, [u8]>, Vec<Issue>> {
    let one =
        |code: &str, message: String| vec![Issue::error(Location::whole_file(file), code, message)];
    let utf16 = |rest: &[u8], little: bool| -> Result<Cow<'a, [u8]>, Vec<Issue>> {
        if !rest.len().is_multiple_of(2) {
            return Err(one(
                "invalid_utf16",
                "the file starts with a UTF-16 byte-order mark but has an odd number of bytes (truncated?); save it as UTF-8".to_string(),
            ));
        }
        let units = rest.chunks_exact(2).map(|p| {
            if little {
                u16::from_le_bytes([p[0], p[1]])
            } else {
                u16::from_be_bytes([p[0], p[1]])
            }
        });
        let mut out = String::with_capacity(rest.len() / 2);
        for (i, c) in char::decode_utf16(units).enumerate() {
            match c {
                Ok(c) => out.push(c),
                Err(_) => {
                    return Err(one(
                        "invalid_utf16",
                        format!(
                            "the UTF-16 text is damaged at byte {} (a lone surrogate); save the file as UTF-8",
                            2 + 2 * i
                        ),
                    ))
                }
            }
        }
        Ok(Cow::Owned(out.into_bytes()))
    };
    if let Some(rest) = bytes.strip_prefix(b"\xEF\xBB\xBF") {
        return Ok(Cow::Borrowed(rest));
    }
    if let Some(rest) = bytes.strip_prefix(b"\xFF\xFE") {
        return utf16(rest, true);
    }
    if let Some(rest) = bytes.strip_prefix(b"\xFE\xFF") {
        return utf16(rest, false);
    }
    let head = &bytes[..bytes.len().min(512)];
    if head.len() >= 4 {
        let zeros_at = |parity: usize| {
            head.iter()
                .enumerate()
                .filter(|(i, &b)| i % 2 == parity && b == 0)
                .count()
        };
        // UTF-16 of mostly ASCII text has a NUL in every other byte; NULs of binary junk fall
        // on both parities.
        let (even, odd) = (zeros_at(0), zeros_at(1));
        let nuls = even + odd;
        if nuls * 8 >= head.len() && even.max(odd) * 10 >= nuls * 9 {
            return Err(one(
                "utf16_without_bom",
                "the file looks like UTF-16 text without a byte-order mark; save it as UTF-8 (or UTF-16 with a byte-order mark) and import again".to_string(),
            ));
        }
    }
    Ok(Cow::Borrowed(bytes))
}
