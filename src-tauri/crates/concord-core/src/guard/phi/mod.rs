//! The PHI guard: an offline scan of dataset texts for the HIPAA Safe Harbor identifier classes
//! that a pattern can find — e-mail addresses, telephone and fax numbers (North American,
//! international, Chinese), URLs, IP addresses, social-security and national identity numbers,
//! record-number-like identifiers, dates more precise than a year (English and Chinese forms), ZIP
//! and postal codes, ages over 89 — plus a lead-supplied list of names and places. This module is
//! pure (text in, located findings out; no IO, no clock): [`Scanner::scan`] returns spans as
//! character offsets, [`redact`] replaces spans by typed placeholders such as `[PHONE]`. What the
//! study does with the findings (storing them, the review queue, the export gate) is
//! [`review`].

pub mod review;
mod scan;

pub use scan::Scanner;

pub use crate::store::{PhiKind, PhiSpan, PhiTerm};

/// Read a term list: one term per line; `place: TEXT` marks a place, `name: TEXT` or a bare line a
/// name; empty lines and lines starting with `#` are skipped.
pub fn parse_terms(list: &str) -> Vec<PhiTerm> {
    list.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            if let Some(rest) = l.strip_prefix("place:") {
                PhiTerm {
                    kind: PhiKind::Place,
                    text: rest.trim().to_string(),
                }
            } else {
                PhiTerm {
                    kind: PhiKind::Name,
                    text: l.strip_prefix("name:").unwrap_or(l).trim().to_string(),
                }
            }
        })
        .filter(|t| !t.text.is_empty())
        .collect()
}

/// `text` with every span replaced by its class's placeholder. Spans are character offsets; they
/// may come in any order but must not overlap (as [`Scanner::scan`] returns them); a span past the
/// end of the text is ignored.
pub fn redact(text: &str, spans: &[PhiSpan]) -> String {
    let mut sorted: Vec<PhiSpan> = spans.to_vec();
    sorted.sort_by_key(|s| s.start);
    let mut out = String::with_capacity(text.len());
    let mut spans = sorted.into_iter().peekable();
    let mut skip_until = 0usize;
    for (i, ch) in text.chars().enumerate() {
        while let Some(s) = spans.peek() {
            if s.start < i || s.end <= s.start {
                spans.next();
            } else {
                break;
            }
        }
        if let Some(s) = spans.peek().copied() {
            if s.start == i {
                out.push_str(s.kind.placeholder());
                skip_until = s.end;
                spans.next();
            }
        }
        if i >= skip_until {
            out.push(ch);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(PhiKind, String)> {
        Scanner::new(&[])
            .scan(text)
            .into_iter()
            .map(|s| {
                (
                    s.kind,
                    text.chars().skip(s.start).take(s.end - s.start).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn each_class_is_found_with_its_exact_span() {
        let cases: &[(&str, PhiKind, &str)] = &[
            (
                "write to me at jo.doe+x@mail.example.org please",
                PhiKind::Email,
                "jo.doe+x@mail.example.org",
            ),
            (
                "see https://example.com/a?b=1.",
                PhiKind::Url,
                "https://example.com/a?b=1",
            ),
            (
                "my blog myjournal.net has it",
                PhiKind::Url,
                "myjournal.net",
            ),
            (
                "from 192.168.10.42 yesterday",
                PhiKind::IpAddress,
                "192.168.10.42",
            ),
            ("ssn 123-45-6789 ok", PhiKind::Ssn, "123-45-6789"),
            ("call (415) 555-0132 now", PhiKind::Phone, "(415) 555-0132"),
            ("打我电话13812345678好吗", PhiKind::Phone, "13812345678"),
            ("座机010-62345678", PhiKind::Phone, "010-62345678"),
            (
                "reach me on +44 20 7946 0958",
                PhiKind::Phone,
                "+44 20 7946 0958",
            ),
            (
                "it was March 3rd, 2021 when",
                PhiKind::Date,
                "March 3rd, 2021",
            ),
            ("on 12/05/2019 I", PhiKind::Date, "12/05/2019"),
            ("2023年5月12日那天", PhiKind::Date, "2023年5月12日"),
            ("三月五号我去了", PhiKind::Date, "三月五号"),
            ("Springfield, IL 62704 is home", PhiKind::Zip, "62704"),
            ("邮编100080", PhiKind::Zip, "100080"),
            (
                "my grandmother is 93 years old",
                PhiKind::Age,
                "93 years old",
            ),
            ("奶奶今年92岁了", PhiKind::Age, "92岁"),
            ("grandpa turned 91 in May", PhiKind::Age, "91"),
            ("she died at the age of 96", PhiKind::Age, "96"),
            (
                "caring for a 93-year-old is hard",
                PhiKind::Age,
                "93-year-old",
            ),
            ("奶奶已经九十三岁了", PhiKind::Age, "九十三岁"),
            ("Dr. Ali Marsh said to wait", PhiKind::Name, "Ali Marsh"),
            ("I asked Mrs. Chen again", PhiKind::Name, "Chen"),
            ("Mr. O'Neill frowned", PhiKind::Name, "O'Neill"),
            (
                "I told my therapist Sarah everything",
                PhiKind::Name,
                "Sarah",
            ),
            (
                "Hi, my name is Jonah Price and",
                PhiKind::Name,
                "Jonah Price",
            ),
            ("张医生让我多休息", PhiKind::Name, "张医生"),
            ("我跟李老师说了", PhiKind::Name, "李老师"),
            ("你好，我叫林晓雨", PhiKind::Name, "林晓雨"),
            ("MRN: 00482913 on file", PhiKind::RecordId, "00482913"),
            ("病历号：ZY2021-0457", PhiKind::RecordId, "ZY2021-0457"),
        ];
        for (text, kind, span) in cases {
            let found = kinds(text);
            assert_eq!(
                found,
                vec![(*kind, span.to_string())],
                "{text:?} holds exactly one {kind} identifier, {span:?}"
            );
        }
    }

    #[test]
    fn near_misses_in_counselling_text_are_not_identifiers() {
        for text in [
            "My PHQ-9 score was 18 and GAD-7 was 12.",
            "I take 50 mg sertraline 3 times a day for 2 weeks now.",
            "I sleep 4-5 hours, maybe 10% of nights are fine; 24/7 worry.",
            "She is 89 years old and I'm 35.",
            "Rate it 7/10. Call 988 or 911 if you are in danger.",
            "May I ask how you have been since last year, in 2019?",
            "我已经3个月没睡好了，每天吃2次药，持续了2周。",
            "DSM-5 criteria, COVID-19, 1 in 5 people, 2019-2021.",
            "I drank a Dr. Pepper and waited for Mr. Right.",
            "My therapist said I should rest; my doctor agreed.",
            "My name is not important. Doctor Who calms me.",
            "She turned 40 and I turned 19 this year.",
            "医生说这周老师布置的作业太多，谢谢老师的耐心。",
            "我叫他别再来了，任何老师都帮不了我，课程老师很严格。",
        ] {
            assert_eq!(
                kinds(text),
                vec![],
                "{text:?} holds no identifier a Safe Harbor review would remove"
            );
        }
    }

    #[test]
    fn offsets_count_characters_not_bytes() {
        let text = "我的邮箱是 li@example.cn。";
        let spans = Scanner::new(&[]).scan(text);
        assert_eq!(
            spans,
            vec![PhiSpan {
                kind: PhiKind::Email,
                start: 6,
                end: 19
            }],
            "six Chinese characters and a space precede the address, whatever their UTF-8 length"
        );
    }

    #[test]
    fn listed_names_match_whole_words_only_and_redaction_types_them() {
        let terms = parse_terms("# study names\nAnna Li\nplace: Springfield\n\n");
        let scanner = Scanner::new(&terms);
        let text = "Anna Li moved to Springfield; Annabel did not.";
        let spans = scanner.scan(text);
        assert_eq!(
            spans.iter().map(|s| s.kind).collect::<Vec<_>>(),
            vec![PhiKind::Name, PhiKind::Place],
            "the listed name and place are found, 'Annabel' is not the listed 'Anna Li'"
        );
        assert_eq!(
            redact(text, &spans),
            "[NAME] moved to [PLACE]; Annabel did not.",
            "each span becomes its class's placeholder and nothing else changes"
        );
    }
}
