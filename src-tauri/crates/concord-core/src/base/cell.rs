//! Text that goes into a spreadsheet cell: a cell that starts like a formula (`=`, `+`, `-`, `@`, a
//! tab or CR) would run as one when the sheet is opened, so every text cell Concord writes — CSV,
//! workbook, fill-in sheet, agreement table — is neutralised with a leading quote, and read back
//! without it.

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
}
