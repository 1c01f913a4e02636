//! The pattern scan itself: a fixed set of compiled expressions per identifier class (compiled once
//! per process), a lead-supplied term list matched with Aho–Corasick, and one overlap resolution
//! that keeps the leftmost, longest, highest-priority candidate. Expressions use ASCII word
//! boundaries and ASCII digit classes so they run on the lazy DFA even over Chinese text; byte
//! offsets are turned into character offsets in one forward walk at the end.

use super::{PhiKind, PhiSpan, PhiTerm};
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::Regex;
use std::sync::LazyLock;

/// One expression of one class; `group` is the capture group whose span is the identifier (0 =
/// the whole match), `min_digits` drops matches with fewer ASCII digits in that span.
struct Pattern {
    kind: PhiKind,
    re: Regex,
    group: usize,
    min_digits: usize,
}

const MONTHS: &str = "(?:January|February|March|April|May|June|July|August|September|October|November|December|Jan\\.?|Feb\\.?|Mar\\.?|Apr\\.?|Jun\\.?|Jul\\.?|Aug\\.?|Sept?\\.?|Oct\\.?|Nov\\.?|Dec\\.?)";
const STATES: &str = "(?:AL|AK|AZ|AR|CA|CO|CT|DE|DC|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|NH|NJ|NM|NY|NC|ND|OH|OK|OR|PA|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY|PR)";
/// Chinese numerals as used in dates and ages.
const CN_NUM: &str = "[〇零一二三四五六七八九十两]";
/// A word boundary in ASCII terms (Chinese characters count as non-word, so digits next to them
/// still start and end a match).
const B: &str = "(?-u:\\b)";

fn pattern(kind: PhiKind, source: &str, group: usize, min_digits: usize) -> Pattern {
    Pattern {
        kind,
        // The expressions are constants of this module; a failure is a programming error caught
        // by every test that scans.
        re: Regex::new(source).expect("built-in PHI pattern compiles"),
        group,
        min_digits,
    }
}

static PATTERNS: LazyLock<Vec<Pattern>> = LazyLock::new(|| {
    use PhiKind::*;
    let m = MONTHS;
    let cn = CN_NUM;
    let ordinal = "(?:st|nd|rd|th)?";
    vec![
        // E-mail addresses.
        pattern(
            Email,
            "[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\\.[A-Za-z0-9-]+)*\\.[A-Za-z]{2,24}",
            0,
            0,
        ),
        // URLs with a scheme or www., and bare domains with a common top-level domain.
        pattern(
            Url,
            "(?i)(?:https?://|ftp://|www\\.)[^\\s<>\"'，。、）)\\]]*[^\\s<>\"'，。、）)\\].,;:!?]",
            0,
            0,
        ),
        pattern(
            Url,
            &format!("(?i){B}[a-z0-9][a-z0-9-]*(?:\\.[a-z0-9-]+)*\\.(?:com|org|net|edu|gov|io|cn|uk|us|ca|au|de|info|me|co|health){B}(?:/[^\\s<>\"'，。）)]*[^\\s<>\"'，。）).,;:!?])?"),
            0,
            0,
        ),
        // IP addresses: IPv4 dotted quads, full and compressed IPv6.
        pattern(
            IpAddress,
            &format!("{B}(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{{2}}|[1-9]?[0-9])\\.){{3}}(?:25[0-5]|2[0-4][0-9]|1[0-9]{{2}}|[1-9]?[0-9]){B}"),
            0,
            0,
        ),
        pattern(
            IpAddress,
            &format!("(?i){B}(?:[0-9a-f]{{1,4}}:){{7}}[0-9a-f]{{1,4}}{B}"),
            0,
            0,
        ),
        pattern(
            IpAddress,
            &format!("(?i){B}(?:[0-9a-f]{{1,4}}:){{1,6}}:(?:[0-9a-f]{{1,4}}(?::[0-9a-f]{{1,4}}){{0,5}}){B}"),
            0,
            0,
        ),
        // Social-security numbers and national identity numbers (the 18-character Chinese
        // resident identity number).
        pattern(
            Ssn,
            &format!("{B}[0-9]{{3}}(?:-[0-9]{{2}}-|[ ][0-9]{{2}}[ ])[0-9]{{4}}{B}"),
            0,
            0,
        ),
        pattern(
            Ssn,
            &format!("(?i){B}(?:SSN|social security(?: number| no\\.?)?|SIN)[ ]*(?:#|:|：)?[ ]*([0-9]{{9}}){B}"),
            1,
            0,
        ),
        pattern(
            Ssn,
            &format!("{B}[1-9][0-9]{{5}}(?:19|20)[0-9]{{2}}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])[0-9]{{3}}[0-9Xx]{B}"),
            0,
            0,
        ),
        // Telephone and fax numbers: North American, international with a + or 00 prefix,
        // Chinese mobile and landline, and zero-prefixed national forms (UK, Europe, Australia).
        pattern(
            Phone,
            &format!("(?:\\+?1[ .-]?)?(?:\\([0-9]{{3}}\\)[ ]?|{B}[0-9]{{3}}[ .-]?)[0-9]{{3}}[ .-]?[0-9]{{4}}{B}"),
            0,
            10,
        ),
        pattern(
            Phone,
            &format!("(?:\\+|{B}00)[1-9][0-9]{{0,2}}(?:[ .-]?\\(?[0-9]{{1,5}}\\)?){{2,6}}{B}"),
            0,
            8,
        ),
        pattern(
            Phone,
            &format!("(?:(?:\\+|{B}00)?86[ -]?)?{B}1[3-9][0-9](?:[ -]?[0-9]{{4}}){{2}}{B}"),
            0,
            11,
        ),
        pattern(
            Phone,
            &format!("(?:\\(0[0-9]{{2,3}}\\)[ -]?|{B}0[0-9]{{2,3}}[ -]?)[0-9]{{3,4}}[ -]?[0-9]{{4}}{B}"),
            0,
            9,
        ),
        pattern(
            Phone,
            &format!("{B}0[0-9]{{2,4}}[ ][0-9]{{3,4}}[ ][0-9]{{3,4}}{B}"),
            0,
            9,
        ),
        pattern(Phone, &format!("{B}07[0-9]{{3}}[ ]?[0-9]{{6}}{B}"), 0, 11),
        // Dates more precise than a year — English: month name with a day and/or year, the day
        // before the month, numeric forms with a four-digit (or two-digit) year.
        pattern(
            Date,
            &format!("{B}{m}[ ]?[0-9]{{1,2}}{ordinal}(?:,?[ ][0-9]{{4}})?{B}"),
            0,
            0,
        ),
        pattern(
            Date,
            &format!("{B}[0-9]{{1,2}}{ordinal}[ ](?:of[ ])?{m}(?:,?[ ][0-9]{{4}})?{B}"),
            0,
            0,
        ),
        pattern(Date, &format!("{B}{m},?[ ][0-9]{{4}}{B}"), 0, 0),
        pattern(
            Date,
            &format!("{B}(?:[0-9]{{1,2}}[/.-][0-9]{{1,2}}[/.-](?:[0-9]{{4}}|[0-9]{{2}})|[0-9]{{4}}[/.-][0-9]{{1,2}}[/.-][0-9]{{1,2}}){B}"),
            0,
            0,
        ),
        // Chinese: Arabic or full-width digits, or Chinese numerals, with 年/月/日(号).
        pattern(
            Date,
            "[0-9０-９]{2,4}[ ]?年[ ]?[0-9０-９]{1,2}[ ]?月(?:[ ]?[0-9０-９]{1,2}[ ]?[日号])?",
            0,
            0,
        ),
        pattern(Date, "[0-9０-９]{1,2}[ ]?月[ ]?[0-9０-９]{1,2}[ ]?[日号]", 0, 0),
        pattern(
            Date,
            &format!("{cn}{{2,4}}年{cn}{{1,3}}月(?:{cn}{{1,3}}[日号])?"),
            0,
            0,
        ),
        pattern(Date, &format!("{cn}{{1,3}}月{cn}{{1,3}}[日号]"), 0, 0),
        // ZIP and postal codes, recognised by what precedes them.
        pattern(
            Zip,
            &format!("{B}{STATES}[ ]+([0-9]{{5}}(?:-[0-9]{{4}})?){B}"),
            1,
            0,
        ),
        pattern(
            Zip,
            &format!("(?i){B}(?:zip(?:[ ]?code)?|postal[ ]code|post[ ]?code)[ ]*(?:is[ ]|:|：|#)?[ ]*([0-9]{{5}}(?:-[0-9]{{4}})?){B}"),
            1,
            0,
        ),
        pattern(
            Zip,
            &format!("(?:邮编|邮政编码)[ ]*(?:是|为|:|：)?[ ]*([0-9]{{6}}){B}"),
            1,
            0,
        ),
        // Ages over 89.
        pattern(
            Age,
            &format!("(?i){B}(?:9[0-9]|1[01][0-9])(?:[ -]?(?:years?|yrs?)[ -]?old|[ ]?(?:yo|y/o|y\\.o\\.)){B}"),
            0,
            0,
        ),
        pattern(
            Age,
            &format!("(?i){B}(?:aged?|age:|age[ ]is)[ ]*(9[0-9]|1[01][0-9]){B}"),
            1,
            0,
        ),
        pattern(
            Age,
            "(?i)(?:ninety|a hundred|one hundred)(?:[ -](?:one|two|three|four|five|six|seven|eight|nine))?(?:[ -]?years?[ -]?old|[ ]?-year-old)",
            0,
            0,
        ),
        pattern(Age, &format!("{B}(?:9[0-9]|1[01][0-9])[ ]?(?:周岁|岁)"), 0, 0),
        pattern(
            Age,
            "(?:九十[一二三四五六七八九]?|一百(?:零[一二三四五六七八九]|一十?[一二三四五六七八九]?)?)(?:周岁|岁)",
            0,
            0,
        ),
        // Record-number-like identifiers: a labelled id, a short letter prefix followed by many
        // digits, or a long run of digits that no other class claimed.
        pattern(
            RecordId,
            &format!("(?i){B}(?:MRN|medical[ ]record(?:[ ]number|[ ]no\\.?)?|record[ ](?:number|no\\.?|id)|patient[ ](?:id|number|no\\.?)|account(?:[ ]number|[ ]no\\.?)?|acct\\.?|case[ ](?:number|no\\.?|id)|chart[ ](?:number|no\\.?)|member[ ](?:id|number)|policy[ ](?:number|no\\.?)|insurance[ ](?:id|number)|licen[cs]e[ ](?:number|no\\.?)|student[ ](?:id|number)|employee[ ](?:id|number)|passport(?:[ ]number|[ ]no\\.?)?|ID[ ](?:number|no\\.?)|ID)[ ]*(?:is[ ]|:|：|#)?[ ]*([A-Z0-9][A-Z0-9-]{{3,}}[0-9]){B}"),
            1,
            4,
        ),
        pattern(
            RecordId,
            &format!("(?:病历号|病案号|住院号|门诊号|就诊卡号|医保卡号|社保卡号|护照号|学号|工号|档案号|编号|卡号|账号|会员号)[ ]*(?:是|为|:|：)?[ ]*([A-Za-z0-9][A-Za-z0-9-]{{3,}}){B}"),
            1,
            4,
        ),
        pattern(
            RecordId,
            &format!("{B}[A-Z]{{1,3}}-?[0-9]{{6,12}}{B}"),
            0,
            6,
        ),
        pattern(
            RecordId,
            &format!("{B}(?:19|20)[0-9]{{2}}-[0-9]{{5,8}}{B}"),
            0,
            9,
        ),
        pattern(RecordId, &format!("{B}[0-9]{{8,}}{B}"), 0, 8),
    ]
});

/// A compiled scanner: the built-in patterns plus one lead's term list.
pub struct Scanner {
    terms: Option<(AhoCorasick, Vec<PhiKind>, Vec<bool>)>,
}

impl std::fmt::Debug for Scanner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scanner")
            .field("terms", &self.terms.as_ref().map(|t| t.1.len()))
            .finish()
    }
}

/// A candidate in byte offsets, before overlap resolution.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    start: usize,
    end: usize,
    kind: PhiKind,
    /// Found after a label ("MRN:", "zip code", "邮编"): more specific than a bare shape.
    labelled: bool,
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl Scanner {
    /// A scanner for the built-in classes and `terms` (names and places; matched without regard
    /// to ASCII case, as whole words when they start and end with a letter or digit).
    pub fn new(terms: &[PhiTerm]) -> Scanner {
        LazyLock::force(&PATTERNS);
        let kept: Vec<&PhiTerm> = terms.iter().filter(|t| !t.text.trim().is_empty()).collect();
        if kept.is_empty() {
            return Scanner { terms: None };
        }
        let texts: Vec<&str> = kept.iter().map(|t| t.text.trim()).collect();
        let automaton = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::LeftmostLongest)
            .build(&texts)
            // Building fails only past automaton size limits far beyond any term list.
            .expect("term list automaton builds");
        let kinds = kept.iter().map(|t| t.kind).collect();
        let whole_word = texts
            .iter()
            .map(|t| {
                let b = t.as_bytes();
                is_word_byte(b[0]) || is_word_byte(b[b.len() - 1])
            })
            .collect();
        Scanner {
            terms: Some((automaton, kinds, whole_word)),
        }
    }

    /// Every identifier found in `text`, in order, non-overlapping, as character offsets.
    pub fn scan(&self, text: &str) -> Vec<PhiSpan> {
        let mut found: Vec<Candidate> = Vec::new();
        let bytes = text.as_bytes();
        for p in PATTERNS.iter() {
            if p.group == 0 {
                for m in p.re.find_iter(text) {
                    push_checked(&mut found, bytes, p, m.start(), m.end());
                }
            } else {
                for c in p.re.captures_iter(text) {
                    if let Some(m) = c.get(p.group) {
                        push_checked(&mut found, bytes, p, m.start(), m.end());
                    }
                }
            }
        }
        if let Some((automaton, kinds, whole_word)) = &self.terms {
            for m in automaton.find_iter(text) {
                let (s, e) = (m.start(), m.end());
                let id = m.pattern().as_usize();
                if whole_word[id]
                    && ((s > 0 && is_word_byte(bytes[s - 1]))
                        || (e < bytes.len() && is_word_byte(bytes[e])))
                {
                    continue;
                }
                found.push(Candidate {
                    start: s,
                    end: e,
                    kind: kinds[id],
                    labelled: false,
                });
            }
        }
        resolve(found, text)
    }
}

fn push_checked(found: &mut Vec<Candidate>, bytes: &[u8], p: &Pattern, start: usize, end: usize) {
    if p.min_digits > 0 {
        let digits = bytes[start..end]
            .iter()
            .filter(|b| b.is_ascii_digit())
            .count();
        if digits < p.min_digits {
            return;
        }
    }
    // A number glued to a longer number or a decimal point is part of something else (a
    // measurement, a version); classes that end on a digit must not continue into one.
    if start > 0 && bytes[start - 1].is_ascii_digit() && bytes[start].is_ascii_digit() {
        return;
    }
    if end < bytes.len() && bytes[end].is_ascii_digit() && bytes[end - 1].is_ascii_digit() {
        return;
    }
    found.push(Candidate {
        start,
        end,
        kind: p.kind,
        labelled: p.group != 0,
    });
}

/// Keep the leftmost candidate; among those starting together the longest; among equal spans one
/// found after a label, then the class listed first in [`PhiKind::ALL`]; drop whatever overlaps a kept one. Then convert byte
/// offsets to character offsets.
fn resolve(mut found: Vec<Candidate>, text: &str) -> Vec<PhiSpan> {
    found.sort_by(|a, b| {
        a.start
            .cmp(&b.start)
            .then(b.end.cmp(&a.end))
            .then(b.labelled.cmp(&a.labelled))
            .then(a.kind.priority().cmp(&b.kind.priority()))
    });
    let mut kept: Vec<Candidate> = Vec::with_capacity(found.len());
    for c in found {
        match kept.last() {
            Some(last) if c.start < last.end => {}
            _ => kept.push(c),
        }
    }
    to_char_offsets(&kept, text)
}

fn to_char_offsets(kept: &[Candidate], text: &str) -> Vec<PhiSpan> {
    if text.is_ascii() {
        return kept
            .iter()
            .map(|c| PhiSpan {
                kind: c.kind,
                start: c.start,
                end: c.end,
            })
            .collect();
    }
    let mut out = Vec::with_capacity(kept.len());
    let (mut byte, mut chars) = (0usize, 0usize);
    let mut advance = |to: usize| {
        chars += text[byte..to].chars().count();
        byte = to;
        chars
    };
    for c in kept {
        let start = advance(c.start);
        let end = advance(c.end);
        out.push(PhiSpan {
            kind: c.kind,
            start,
            end,
        });
    }
    out
}
