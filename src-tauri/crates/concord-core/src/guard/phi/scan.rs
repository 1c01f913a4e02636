//! The pattern scan itself: a fixed set of compiled expressions per identifier class (compiled once
//! per process), a lead-supplied term list matched with Aho–Corasick, and one overlap resolution
//! that keeps the leftmost, longest, highest-priority candidate. Personal names are found two
//! ways: the lead's list, and where the text itself marks a name — a title or honorific ("Dr. Ali
//! Marsh", "Mrs. Chen", "张医生"), a role ("my therapist Sarah") or an introduction ("my name is
//! …", "我叫…") — with a short list of titled words that are not people ("Dr. Pepper", "Mr.
//! Right") left alone. Expressions use ASCII word
//! boundaries and ASCII digit classes so they run on the lazy DFA even over Chinese text; byte
//! offsets are turned into character offsets in one forward walk at the end.

use super::{PhiKind, PhiSpan, PhiTerm};
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::Regex;
use std::sync::LazyLock;

/// One expression of one class; `group` is the capture group whose span is the identifier (0 =
/// the whole match), `min_digits` drops matches with fewer ASCII digits in that span, and a span
/// whose first word is in `not_first` is dropped (titled words that are not people).
struct Pattern {
    kind: PhiKind,
    re: Regex,
    group: usize,
    min_digits: usize,
    not_first: &'static [&'static str],
}

const MONTHS: &str = "(?:January|February|March|April|May|June|July|August|September|October|November|December|Jan\\.?|Feb\\.?|Mar\\.?|Apr\\.?|Jun\\.?|Jul\\.?|Aug\\.?|Sept?\\.?|Oct\\.?|Nov\\.?|Dec\\.?)";
const STATES: &str = "(?:AL|AK|AZ|AR|CA|CO|CT|DE|DC|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|NH|NJ|NM|NY|NC|ND|OH|OK|OR|PA|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY|PR)";
/// Chinese numerals as used in dates and ages.
const CN_NUM: &str = "[〇零一二三四五六七八九十两]";
/// A word boundary in ASCII terms (Chinese characters count as non-word, so digits next to them
/// still start and end a match).
const B: &str = "(?-u:\\b)";
/// One capitalised word of a name (with a capitalised second part: "McLeod", "Smith-Jones",
/// "O'Neill").
const NAME_WORD: &str = "(?:[A-Z]'[A-Z][a-z]+|[A-Z][a-z]+(?:[A-Z][a-z]+)?(?:-[A-Z][a-z]+)?)";
/// Titles and honorifics that precede an English name.
const TITLES: &str = "(?:Dr|Mr|Mrs|Ms|Mx|Prof|Rev)\\.?|Doctor|Professor|Nurse|Pastor|Rabbi|Imam|Father|Sister|Dame|Sir";
/// The people a writer names by role ("my therapist Sarah").
const ROLES: &str = "therapist|counsel+or|psychiatrist|psychologist|doctor|gp|nurse|social[ ]worker|case[ ]?worker|teacher|tutor|professor|boss|manager|supervisor|coach|pastor|priest|best[ ]friend|friend|neighbou?r|ex|ex-boyfriend|ex-girlfriend|ex-husband|ex-wife|boyfriend|girlfriend|husband|wife|partner|fianc[eé]e?|sister|brother|cousin|aunt|uncle|roommate|flatmate|classmate|colleague|co-?worker|son|daughter|stepdad|stepmom|stepfather|stepmother|grandson|granddaughter";
/// Common Chinese surnames, leaving out characters that often end another word before a title
/// ("这周老师", "课程老师", "谢谢老师", "任何老师", "也许老师", "其余老师").
const CN_SURNAMES: &str = "[王李张刘陈杨黄赵吴徐孙马朱胡郭高林罗郑梁宋唐韩冯邓曹彭曾肖田董袁潘蒋蔡杜叶苏魏吕丁沈姚卢姜崔钟谭陆汪范廖贾夏韦付邹孟熊秦邱江尹薛闫雷侯龙陶黎贺顾毛郝龚邵严覃武戴莫孔汤欧]";
/// Words that follow a title or a role but are not a person's name.
const NOT_NAMES: &[&str] = &[
    "Pepper",
    "Right",
    "Wrong",
    "Perfect",
    "Nice",
    "Clean",
    "Fix",
    "Bean",
    "Universe",
    "Google",
    "Who",
    "Strange",
    "Seuss",
    "Potato",
    "Freeze",
    "Robot",
    "Know",
    "Brightside",
    "Christmas",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
    "January",
    "February",
    "March",
    "April",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
    "God",
    "English",
    "The",
    "And",
    "But",
    "So",
    "When",
    "Then",
    "Today",
    "Tomorrow",
    "Yesterday",
    "Facebook",
    "Instagram",
    "Zoom",
    "Skype",
    "Whatsapp",
    "WhatsApp",
    "Teams",
];

fn pattern(kind: PhiKind, source: &str, group: usize, min_digits: usize) -> Pattern {
    Pattern {
        kind,
        // The expressions are constants of this module; a failure is a programming error caught
        // by every test that scans.
        re: Regex::new(source).expect("built-in PHI pattern compiles"),
        group,
        min_digits,
        not_first: &[],
    }
}

/// A personal name marked by the words before it: the capture group is the name.
fn name_pattern(source: &str) -> Pattern {
    Pattern {
        not_first: NOT_NAMES,
        ..pattern(PhiKind::Name, source, 1, 0)
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
        pattern(
            Age,
            &format!("(?i){B}(?:turned|turning|turns|reached|reaching|at[ ]the[ ]age[ ]of|now)[ ]+(9[0-9]|1[01][0-9]){B}(?:[ ]?(?:years?|yrs?)[ ]old)?"),
            1,
            0,
        ),
        pattern(
            Age,
            "(?i)(?:turned|turning|turns|reached|at the age of)[ ]+(?:ninety|a hundred|one hundred)(?:[ -](?:one|two|three|four|five|six|seven|eight|nine))?",
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
        // Personal names the text marks: after a title, a role or an introduction (English
        // names are capitalised words; the marker itself is not part of the span).
        name_pattern(&format!("{B}(?:{TITLES})[ ]+({NAME_WORD}(?:[ ]{NAME_WORD})?){B}")),
        name_pattern(&format!("(?i:{B}my[ ](?:{ROLES}))(?:,)?[ ]+({NAME_WORD}(?:[ ]{NAME_WORD})?){B}")),
        name_pattern(&format!("(?i:{B}(?:my[ ]name[ ]is|my[ ]name's|i[ ]am[ ]called|i'm[ ]called|they[ ]call[ ]me|call[ ]me))[ ]+({NAME_WORD}(?:[ ]{NAME_WORD})?){B}")),
        // Chinese: a surname directly before a title or form of address, or after "我叫".
        pattern(
            Name,
            &format!("{CN_SURNAMES}(?:医生|大夫|老师|护士|教授|主任|律师|警官|经理|先生|女士|小姐|阿姨|叔叔|同学|师傅|院长|校长)"),
            0,
            0,
        ),
        pattern(
            Name,
            &format!("我(?:叫|名叫|的名字是|的名字叫)({CN_SURNAMES}\\p{{Han}}{{1,2}})"),
            1,
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

/// Every built-in expression in one set, run once over a text to learn which of them match it at
/// all: only those are then run one by one for their spans. A text with no identifier — nearly
/// every text — is read once instead of once per expression, and the findings are exactly those
/// of running every expression (one that matches nowhere finds nothing).
static PATTERN_SET: LazyLock<regex::RegexSet> = LazyLock::new(|| {
    regex::RegexSet::new(PATTERNS.iter().map(|p| p.re.as_str()))
        .expect("the built-in PHI patterns compile as one set")
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
        LazyLock::force(&PATTERN_SET);
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
        let matching = PATTERN_SET.matches(text);
        for (i, p) in PATTERNS.iter().enumerate() {
            if !matching.matched(i) {
                continue;
            }
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
    if !p.not_first.is_empty() {
        let span = std::str::from_utf8(&bytes[start..end]).unwrap_or("");
        let first = span.split([' ', '-']).next().unwrap_or("");
        if p.not_first.contains(&first) {
            return;
        }
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
