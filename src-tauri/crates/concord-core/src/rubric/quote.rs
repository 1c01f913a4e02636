//! Where a quoted passage stands in a reply: offsets in Unicode scalar values (characters, not
//! bytes or UTF-16 units), as spans are stored. A quote is looked for exactly first, then ignoring
//! differences in runs of whitespace (any run of whitespace matches any other run, at least one
//! character long); of several matches the first is taken; a quote found neither way is not
//! located, and nothing is guessed.

/// How a quote was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Located {
    /// The quote's exact characters.
    Exact { start: usize, end: usize },
    /// The quote with its whitespace runs matched to the reply's.
    Whitespace { start: usize, end: usize },
}

impl Located {
    /// `[start, end)` in characters.
    pub fn range(self) -> (usize, usize) {
        match self {
            Located::Exact { start, end } | Located::Whitespace { start, end } => (start, end),
        }
    }
}

/// The number of characters (Unicode scalar values) of `text`.
pub fn char_len(text: &str) -> usize {
    text.chars().count()
}

/// The characters `[start, end)` of `text`, when they are inside it.
pub fn char_slice(text: &str, start: usize, end: usize) -> Option<&str> {
    if start > end {
        return None;
    }
    let mut bounds = text
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()));
    let from = bounds.nth(start)?;
    let to = if end == start {
        from
    } else {
        bounds.nth(end - start - 1)?
    };
    Some(&text[from..to])
}

/// Locate `quote` in `text`: exactly, then whitespace-insensitively; `None` when neither finds it
/// (or the quote is blank).
pub fn locate(text: &str, quote: &str) -> Option<Located> {
    if quote.trim().is_empty() {
        return None;
    }
    if let Some(byte) = text.find(quote) {
        let start = text[..byte].chars().count();
        return Some(Located::Exact {
            start,
            end: start + quote.chars().count(),
        });
    }
    locate_loose(text, quote).map(|(start, end)| Located::Whitespace { start, end })
}

/// The quote's words and the runs between them: each run of whitespace in the quote (trimmed)
/// matches a run of one or more whitespace characters in the text.
fn locate_loose(text: &str, quote: &str) -> Option<(usize, usize)> {
    let pattern: Vec<Token> = tokens(quote.trim());
    let chars: Vec<char> = text.chars().collect();
    (0..chars.len()).find_map(|start| {
        if chars[start].is_whitespace() {
            return None;
        }
        match_at(&chars, start, &pattern).map(|end| (start, end))
    })
}

#[derive(Debug, PartialEq)]
enum Token {
    Char(char),
    Space,
}

fn tokens(quote: &str) -> Vec<Token> {
    let mut out = Vec::new();
    for c in quote.chars() {
        if c.is_whitespace() {
            if out.last() != Some(&Token::Space) {
                out.push(Token::Space);
            }
        } else {
            out.push(Token::Char(c));
        }
    }
    out
}

/// Where a match of `pattern` starting at `start` ends, if it matches there.
fn match_at(chars: &[char], start: usize, pattern: &[Token]) -> Option<usize> {
    let mut at = start;
    for token in pattern {
        match token {
            Token::Char(c) => {
                if chars.get(at) != Some(c) {
                    return None;
                }
                at += 1;
            }
            Token::Space => {
                if !chars.get(at).is_some_and(|c| c.is_whitespace()) {
                    return None;
                }
                while chars.get(at).is_some_and(|c| c.is_whitespace()) {
                    at += 1;
                }
            }
        }
    }
    Some(at)
}

/// Whether two texts are the same once their whitespace runs are made alike (a file's quote
/// beside the characters its offsets cover).
pub fn same_words(a: &str, b: &str) -> bool {
    tokens(a.trim()) == tokens(b.trim())
}
