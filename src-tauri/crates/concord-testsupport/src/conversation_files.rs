//! Conversations files for the import tests and the scale benchmark: a conversation described once
//! ([`Conv`]) and written in either input format — a chat JSON Lines line, or the rows of a turn
//! table as CSV, JSON Lines or an XLSX workbook — so each test can check that both formats store
//! the same thing; a small set of hand-written conversations ([`sample`]); and the seeded
//! generator of the scale benchmark's conversations ([`generated_table_csv`]).

use rand::{Rng, SeedableRng};
use rust_xlsxwriter::Workbook;
use serde_json::{json, Map, Value};
use std::io::Write;
use std::path::Path;

/// One message or candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub role: String,
    pub text: String,
    pub source: Option<String>,
}

/// A message of `role` with `text`.
pub fn said(role: &str, text: &str) -> Turn {
    Turn {
        role: role.to_string(),
        text: text.to_string(),
        source: None,
    }
}

/// An assistant message from `source`.
pub fn reply(source: &str, text: &str) -> Turn {
    Turn {
        source: Some(source.to_string()),
        ..said("assistant", text)
    }
}

/// A conversation described once, written in either format.
#[derive(Debug, Clone, PartialEq)]
pub struct Conv {
    pub id: String,
    pub language: Option<String>,
    pub category: Option<String>,
    pub source: Option<String>,
    pub messages: Vec<Turn>,
    pub candidates: Vec<Turn>,
    /// `rate` as written in a chat line (absent: every assistant turn).
    pub rate: Option<Value>,
}

impl Conv {
    pub fn new(id: &str, messages: Vec<Turn>) -> Conv {
        Conv {
            id: id.to_string(),
            language: None,
            category: None,
            source: None,
            messages,
            candidates: Vec::new(),
            rate: None,
        }
    }

    /// The conversation as a chat JSON object.
    pub fn chat_object(&self) -> Value {
        let turn = |t: &Turn, candidate: bool| {
            let mut o = Map::new();
            if !candidate {
                o.insert("role".into(), json!(t.role));
            }
            o.insert("content".into(), json!(t.text));
            if let Some(s) = &t.source {
                o.insert("source".into(), json!(s));
            }
            Value::Object(o)
        };
        let mut o = Map::new();
        o.insert("conversation_id".into(), json!(self.id));
        for (key, value) in [
            ("language", &self.language),
            ("category", &self.category),
            ("source", &self.source),
        ] {
            if let Some(v) = value {
                o.insert(key.into(), json!(v));
            }
        }
        o.insert(
            "messages".into(),
            Value::Array(self.messages.iter().map(|t| turn(t, false)).collect()),
        );
        if !self.candidates.is_empty() {
            o.insert(
                "candidates".into(),
                Value::Array(self.candidates.iter().map(|t| turn(t, true)).collect()),
            );
        }
        if let Some(rate) = &self.rate {
            o.insert("rate".into(), rate.clone());
        }
        Value::Object(o)
    }

    /// The conversation as one line of chat JSON Lines (without its line break).
    pub fn chat_line(&self) -> String {
        self.chat_object().to_string()
    }

    /// The conversation as turn-table rows (`conversation_id, turn, role, text, source,
    /// category, language`): an assistant turn's source is its own or the conversation's.
    pub fn table_rows(&self) -> Vec<[String; 7]> {
        let row = |position: usize, t: &Turn| {
            let source = if t.role == "assistant" {
                t.source.clone().or_else(|| self.source.clone())
            } else {
                None
            };
            [
                self.id.clone(),
                position.to_string(),
                t.role.clone(),
                t.text.clone(),
                source.unwrap_or_default(),
                self.category.clone().unwrap_or_default(),
                self.language.clone().unwrap_or_default(),
            ]
        };
        let mut rows: Vec<[String; 7]> = self
            .messages
            .iter()
            .enumerate()
            .map(|(i, t)| row(i + 1, t))
            .collect();
        let after = self.messages.len() + 1;
        rows.extend(self.candidates.iter().map(|t| row(after, t)));
        rows
    }
}

/// The turn table's header.
pub const TABLE_HEADER: [&str; 7] = [
    "conversation_id",
    "turn",
    "role",
    "text",
    "source",
    "category",
    "language",
];

/// A CSV field, quoted when it needs to be.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Turn-table rows as CSV text, header first.
pub fn table_csv(rows: &[[String; 7]]) -> String {
    let mut out = TABLE_HEADER.join(",") + "\n";
    for r in rows {
        out.push_str(&r.iter().map(|f| csv_field(f)).collect::<Vec<_>>().join(","));
        out.push('\n');
    }
    out
}

/// Turn-table rows as JSON Lines (the turn a number, empty fields left out).
pub fn table_jsonl(rows: &[[String; 7]]) -> String {
    let mut out = String::new();
    for r in rows {
        let mut o = Map::new();
        for (key, value) in TABLE_HEADER.iter().zip(r) {
            if value.is_empty() {
                continue;
            }
            let v = match (*key, value.parse::<u64>()) {
                ("turn", Ok(n)) => json!(n),
                _ => json!(value),
            };
            o.insert(key.to_string(), v);
        }
        out.push_str(&Value::Object(o).to_string());
        out.push('\n');
    }
    out
}

/// Turn-table rows as a workbook of one sheet (the turn a number).
pub fn write_table_xlsx(path: &Path, rows: &[[String; 7]]) {
    let mut wb = Workbook::new();
    let ws = wb.add_worksheet();
    for (c, h) in TABLE_HEADER.iter().enumerate() {
        ws.write_string(0, c as u16, *h).expect("header cell");
    }
    for (r, row) in rows.iter().enumerate() {
        for (c, value) in row.iter().enumerate() {
            let at = (r as u32 + 1, c as u16);
            match (c, value.parse::<f64>()) {
                (1, Ok(n)) => ws.write_number(at.0, at.1, n).map(|_| ()),
                _ if value.is_empty() => Ok(()),
                _ => ws.write_string(at.0, at.1, value).map(|_| ()),
            }
            .expect("cell");
        }
    }
    wb.save(path).expect("workbook saved");
}

/// Chat JSON Lines of `conversations`.
pub fn chat_jsonl(conversations: &[Conv]) -> String {
    conversations.iter().map(|c| c.chat_line() + "\n").collect()
}

/// Every conversation's turn-table rows, shuffled by `seed` (rows may come in any order).
pub fn shuffled_rows(conversations: &[Conv], seed: u64) -> Vec<[String; 7]> {
    let mut rows: Vec<[String; 7]> = conversations.iter().flat_map(Conv::table_rows).collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    for i in (1..rows.len()).rev() {
        rows.swap(i, rng.gen_range(0..=i));
    }
    rows
}

/// Three hand-written conversations covering what the formats can say: a system note and two
/// sources in one transcript (a message's source winning over the conversation's), a Chinese
/// user turn answered by two candidates, and a reply without a source followed by a user turn.
pub fn sample() -> Vec<Conv> {
    let mut sleep = Conv::new(
        "c1",
        vec![
            said("system", "Research session; the user agreed to take part."),
            said("user", "I have not slept properly in weeks."),
            said("assistant", "That sounds exhausting. What keeps you awake?"),
            said("user", "Mostly worrying about my exams, and my chest gets tight."),
            reply(
                "counsellor",
                "Exams can weigh heavily. A tight chest with worry is common, but if it comes with pain or breathlessness please see a doctor.",
            ),
        ],
    );
    sleep.source = Some("helperbot".into());
    sleep.language = Some("en".into());
    sleep.category = Some("anxiety".into());
    let mut worried = Conv::new("c2", vec![said("user", "我最近总是很焦虑，晚上睡不着。")]);
    worried.language = Some("zh".into());
    worried.candidates = vec![
        reply("gpt4o", "听起来你最近很辛苦。能说说是什么让你焦虑吗？"),
        reply("claude", "焦虑和失眠常常一起出现。你愿意和我聊聊吗？"),
    ];
    let quiet = Conv::new(
        "c3",
        vec![
            said("user", "Nobody would notice if I stopped showing up."),
            said(
                "assistant",
                "I would notice, and I am glad you told me. Are you thinking of hurting yourself?",
            ),
            said("user", "Not really. Just tired of everything."),
        ],
    );
    vec![sleep, worried, quiet]
}

/// The scale benchmark's turn table written to `path` as CSV: `conversations` conversations of
/// `turns` alternating user and assistant turns from one chatbot, the last position answered by
/// `candidates` sources (each candidate one row), seeded texts of 20–60 words. Returns the
/// number of rows.
pub fn generated_table_csv(
    path: &Path,
    conversations: usize,
    turns: usize,
    candidates: usize,
    seed: u64,
) -> usize {
    const WORDS: [&str; 24] = [
        "I",
        "feel",
        "tired",
        "and",
        "worried",
        "about",
        "work",
        "sleep",
        "family",
        "today",
        "it",
        "sounds",
        "hard",
        "you",
        "could",
        "try",
        "talking",
        "with",
        "someone",
        "you",
        "trust",
        "breathing",
        "slowly",
        "helps",
    ];
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let file = std::fs::File::create(path).expect("create the bench file");
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    writeln!(out, "{}", TABLE_HEADER.join(",")).expect("write");
    let mut rows = 0;
    let mut text = String::new();
    let mut line = |out: &mut std::io::BufWriter<std::fs::File>,
                    rng: &mut rand_chacha::ChaCha8Rng,
                    c: usize,
                    t: usize,
                    role: &str,
                    source: &str| {
        text.clear();
        for w in 0..rng.gen_range(20..60) {
            if w > 0 {
                text.push(' ');
            }
            text.push_str(WORDS[rng.gen_range(0..WORDS.len())]);
        }
        writeln!(out, "conv{c},{t},{role},\"{text}\",{source},stress,en").expect("write");
    };
    for c in 0..conversations {
        // `turns` messages, ending with a user turn the candidates answer.
        for t in 1..turns {
            let user = (turns - t) % 2 == 1;
            let (role, source) = if user {
                ("user", "")
            } else {
                ("assistant", "bot")
            };
            line(&mut out, &mut rng, c, t, role, source);
            rows += 1;
        }
        for k in 0..candidates {
            line(
                &mut out,
                &mut rng,
                c,
                turns,
                "assistant",
                &format!("model{k}"),
            );
            rows += 1;
        }
    }
    out.flush().expect("flush");
    rows
}
