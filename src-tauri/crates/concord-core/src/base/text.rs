//! Names and labels as a person reads them: quoted in messages without Rust's debug escapes (`\"`,
//! `\u{202e}`), with control and bidirectional-formatting characters made visible (`<U+202E>`) so
//! a right-to-left override in a name cannot reverse the sentence around it, and whole terminal
//! outputs with the same characters spelled out but their line breaks kept; new names
//! normalised (whitespace runs collapsed to one space, trimmed); and the key a name is matched
//! by where a person types it (a web login): without regard to case or spaces.

use std::fmt;

/// Whether `c` is a control character or one that changes the direction of the text around it.
pub fn is_hidden_control(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
        )
}

/// `text` with every hidden control character written as `<U+XXXX>`.
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_hidden_control(c) {
            out.push_str(&format!("<U+{:04X}>", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` as a terminal may show it: every hidden control character written as `<U+XXXX>`
/// except the line breaks (`\n`, or `\r\n`) and tabs that lay the text out (tab-separated
/// listings), so no escape sequence, bell,
/// backspace or direction override in a name or a message reaches the terminal. Whole outputs go
/// through it; a name inside a line goes through [`visible`] too, which spells out its line
/// breaks as well. Borrowed when there is nothing to spell out.
pub fn terminal_text(text: &str) -> std::borrow::Cow<'_, str> {
    let mut chars = text.chars().peekable();
    let mut out: Option<String> = None;
    let mut at = 0;
    while let Some(c) = chars.next() {
        let layout = c == '\n' || c == '\t' || (c == '\r' && chars.peek() == Some(&'\n'));
        if is_hidden_control(c) && !layout {
            let out = out.get_or_insert_with(|| {
                let mut s = String::with_capacity(text.len() + 16);
                s.push_str(&text[..at]);
                s
            });
            out.push_str(&format!("<U+{:04X}>", c as u32));
        } else if let Some(out) = out.as_mut() {
            out.push(c);
        }
        at += c.len_utf8();
    }
    match out {
        Some(s) => std::borrow::Cow::Owned(s),
        None => std::borrow::Cow::Borrowed(text),
    }
}

/// A value in a message: in curly quotes, its hidden control characters made visible.
pub struct Quoted(String);

impl fmt::Display for Quoted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "“{}”", visible(&self.0))
    }
}

/// Quote `value` for a message (see [`Quoted`]).
pub fn quoted(value: &impl fmt::Display) -> Quoted {
    Quoted(value.to_string())
}

/// A new name as it is stored: whitespace runs (including newlines and tabs) become one space,
/// and the ends are trimmed.
pub fn normalise_name(name: &str) -> String {
    name.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The key a typed name is matched by ([`same_login_name`]): [`normalise_name`]'s spacing, then
/// every character in its Unicode lower case (a final sigma as any other sigma), so
/// "  dr.  AMIRA haddad " and "Dr. Amira Haddad" have the same key. Case folding of this kind
/// is per character and needs no table of its own; no other normalisation is applied (Concord
/// stores names as they were typed, so two spellings that differ in more than case and spacing
/// stay two names).
pub fn login_name_key(name: &str) -> String {
    normalise_name(name)
        .chars()
        .flat_map(char::to_lowercase)
        .map(|c| if c == 'ς' { 'σ' } else { c })
        .collect()
}

/// Whether `a` and `b` name the same person at a login: equal when case and repeated, leading
/// and trailing spaces are ignored ([`login_name_key`]).
pub fn same_login_name(a: &str, b: &str) -> bool {
    login_name_key(a) == login_name_key(b)
}

/// The longest file name an export chooses by itself, in bytes: under the common 255-byte limit
/// of file systems, with room for a numbered (`-12`) or temporary (`.partial`) suffix.
pub const MAX_FILE_NAME_BYTES: usize = 240;

/// `name` when it fits in [`MAX_FILE_NAME_BYTES`]; else its start (cut at a character boundary),
/// a dash and the first 8 hex digits of the whole name's SHA-256, then its extension — so two long
/// names that share their start still differ.
pub fn bounded_file_name(name: &str) -> String {
    if name.len() <= MAX_FILE_NAME_BYTES {
        return name.to_string();
    }
    let (stem, ext) = match name.rfind('.') {
        Some(i) if i > 0 && name.len() - i <= 16 => (&name[..i], &name[i..]),
        _ => (name, ""),
    };
    let digest = crate::base::digest::sha256_hex(name.as_bytes());
    let mut cut = (MAX_FILE_NAME_BYTES - ext.len() - 9).min(stem.len());
    while !stem.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}-{}{}", &stem[..cut], &digest[..8], ext)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_names_show_no_rust_escapes_and_no_hidden_direction_changes() {
        let q = quoted(&"Dr \"Li\"\u{202E}evil\n").to_string();
        assert_eq!(
            q, "“Dr \"Li\"<U+202E>evil<U+000A>”",
            "quotes stay quotes and controls are spelled out"
        );
        let long = format!("{}-ratings-long.csv", "心理危机干预研究".repeat(12));
        let bounded = bounded_file_name(&long);
        assert!(
            bounded.len() <= MAX_FILE_NAME_BYTES && bounded.ends_with(".csv"),
            "a long name is shortened and keeps its extension: {bounded} ({} bytes)",
            bounded.len()
        );
        assert_ne!(
            bounded,
            bounded_file_name(&long.replace("long", "wide")),
            "names that share their start stay apart"
        );
        assert_eq!(bounded_file_name("a.csv"), "a.csv", "short names are kept");
        assert_eq!(
            normalise_name("  Dr\t\tLi \n Wei "),
            "Dr Li Wei",
            "whitespace runs collapse"
        );
    }

    #[test]
    fn login_names_match_without_regard_to_case_or_spaces() {
        for (typed, stored) in [
            ("  dr.  AMIRA\thaddad ", "Dr. Amira Haddad"),
            ("ÉLODIE  brun", "élodie Brun"),
            ("ΟΔΥΣΣΕΑΣ", "Οδυσσεας"),
            ("李\u{3000}伟", "李 伟"),
        ] {
            assert!(
                same_login_name(typed, stored),
                "{typed:?} names {stored:?} at a login: case and spacing do not count"
            );
        }
        for (typed, stored) in [("Amira Hadad", "Amira Haddad"), ("DrAmira", "Dr Amira")] {
            assert!(
                !same_login_name(typed, stored),
                "{typed:?} is another name than {stored:?}: only case and spacing are ignored"
            );
        }
    }

    #[test]
    fn terminal_text_spells_out_escapes_and_overrides_but_keeps_line_breaks() {
        let shown = terminal_text("Ana\u{1b}[2J\u{7}\u{8}\u{9b}31m\u{202e}\u{2066}x\ty\r\nz\rw\n");
        assert_eq!(
            shown,
            "Ana<U+001B>[2J<U+0007><U+0008><U+009B>31m<U+202E><U+2066>x\ty\r\nz<U+000D>w\n",
            "ESC, BEL, BS, CSI, direction controls and lone CRs are spelled out; line ends and tabs stay"
        );
        assert!(
            matches!(
                terminal_text("plain\ntext\n"),
                std::borrow::Cow::Borrowed(_)
            ),
            "plain text is not copied"
        );
        assert_eq!(terminal_text("王医生\n"), "王医生\n", "any script is kept");
    }

    #[test]
    fn error_messages_name_things_without_rust_escapes() {
        let message =
            crate::workflow::queue::QueueError::ProfilesLocked("Dr \"Li\"\u{202E}ecila".into())
                .to_string();
        assert!(
            !message.contains("\\\"") && !message.contains("\\u{"),
            "no debug escapes reach the person at the screen: {message}"
        );
        assert!(
            message.contains("“Dr \"Li\"<U+202E>ecila”"),
            "the name is quoted with its override spelled out: {message}"
        );
    }
}
