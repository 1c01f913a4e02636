//! Text that goes into a spreadsheet cell: a cell that starts like a formula (`=`, `+`, `-`, `@`, a
//! tab or CR) would run as one when the sheet is opened, so every text cell Concord writes — CSV,
//! workbook, fill-in sheet, agreement table — is neutralised with a leading quote, and read back
//! without it. A workbook is XML 1.0, which forbids most control characters outright: before
//! text goes into a workbook cell, [`xml_safe`] spells each forbidden character out as `<U+0001>`
//! (the spelling of [`crate::base::text::visible`]), so a control character in a name or a
//! rationale can never make a malformed file.

use std::borrow::Cow;

/// The characters that make a spreadsheet read a cell as a formula (or hide its start).
const DANGEROUS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// Make `text` safe to open in a spreadsheet: a leading `=`, `+`, `-`, `@`, tab or CR gets a
/// single-quote prefix; plain negative numbers stay as they are.
pub fn neutralise(text: &str) -> Cow<'_, str> {
    match text.chars().next() {
        Some(c) if DANGEROUS.contains(&c) => {
            if c == '-' && is_plain_number(text) {
                Cow::Borrowed(text)
            } else {
                Cow::Owned(format!("'{text}"))
            }
        }
        _ => Cow::Borrowed(text),
    }
}

/// Undo [`neutralise`] on a text read back from a sheet Concord wrote.
pub fn unneutralise(text: &str) -> &str {
    match text.strip_prefix('\'') {
        Some(rest) if rest.starts_with(DANGEROUS) => rest,
        _ => text,
    }
}

/// Whether XML 1.0 forbids `c` in a document (outside its `Char` production): the C0 controls
/// other than tab, line feed and carriage return, and U+FFFE/U+FFFF.
pub fn xml_forbidden(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// `text` with every character XML 1.0 forbids written as `<U+XXXX>`; borrowed when there is none.
pub fn xml_safe(text: &str) -> Cow<'_, str> {
    if !text.chars().any(xml_forbidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if xml_forbidden(c) {
            out.push_str(&format!("<U+{:04X}>", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A text cell of a workbook: [`xml_safe`], then [`neutralise`].
pub fn workbook_text(text: &str) -> Cow<'_, str> {
    match xml_safe(text) {
        Cow::Borrowed(t) => neutralise(t),
        Cow::Owned(t) => Cow::Owned(neutralise(&t).into_owned()),
    }
}

fn is_plain_number(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
        && digits.chars().filter(|&c| c == '.').count() <= 1
        && digits.chars().any(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neutralise_prefixes_formula_starts_but_not_negative_numbers() {
        assert_eq!(neutralise("=1+1"), "'=1+1", "a formula start is defused");
        assert_eq!(neutralise("+cmd"), "'+cmd", "a plus start is defused");
        assert_eq!(
            neutralise("@SUM(A1)"),
            "'@SUM(A1)",
            "an at start is defused"
        );
        assert_eq!(neutralise("\tx"), "'\tx", "a leading tab is defused");
        assert_eq!(neutralise("-2+3"), "'-2+3", "an expression is not a number");
        assert_eq!(neutralise("-3"), "-3", "a negative number stays numeric");
        assert_eq!(
            neutralise("-0.25"),
            "-0.25",
            "a negative decimal stays numeric"
        );
        assert_eq!(neutralise("plain"), "plain", "ordinary text is untouched");
        assert_eq!(
            unneutralise("'=1+1"),
            "=1+1",
            "the prefix is removed on reading back"
        );
        assert_eq!(unneutralise("'quoted"), "'quoted", "other apostrophes stay");
    }

    #[test]
    fn workbook_text_spells_out_what_xml_forbids_and_keeps_the_rest() {
        assert_eq!(
            workbook_text("Ana\u{1}\u{1b}[31m\u{ffff}"),
            "Ana<U+0001><U+001B>[31m<U+FFFF>",
            "C0 controls and U+FFFF are spelled out"
        );
        assert_eq!(
            workbook_text("a\tb\nc\u{85}\u{202e}"),
            "a\tb\nc\u{85}\u{202e}",
            "tab, newline, C1 and direction marks are XML and stay as they are"
        );
        assert_eq!(
            workbook_text("\u{1}=1+1"),
            "<U+0001>=1+1",
            "a spelled-out start is no longer a formula start"
        );
        assert_eq!(
            workbook_text("=1"),
            "'=1",
            "formula starts are still defused"
        );
    }
}
