//! Throughput of the PHI scan (`phi::Scanner::scan`, every built-in class plus a 20-entry name
//! and place list) over 100,000 generated responses of 3–8 sentences, English and Chinese, with
//! an identifier in about one response in ten — beside, in the same run on the same texts, a
//! single-pattern peer (one e-mail expression of the `regex` crate), the least a pattern scan can
//! cost.
//!
//! Run: `cargo bench -p concord-core --bench phi_scan [-- RESPONSES]`

use concord_core::guard::phi::parse_terms;
use concord_core::guard::phi::Scanner;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

const EN: &[&str] = &[
    "I haven't been sleeping well and everything feels heavy lately.",
    "It sounds like you are carrying a lot right now, and that is exhausting.",
    "Try a slow breathing exercise: in for four counts, hold for four, out for six.",
    "My PHQ-9 score was 17 and the doctor said to take it 3 times a day for 2 weeks.",
    "You deserve support, and reaching out to a counsellor could help you feel less alone.",
    "Would you feel able to tell me more about what happened at work this week?",
    "If you ever feel unsafe, please call 988 or go to your nearest emergency department.",
    "Grounding can help: name five things you can see and four you can touch.",
];
const ZH: &[&str] = &[
    "最近我每天晚上都睡不着，心里特别难受。",
    "听起来你最近承受了很多压力，这真的很不容易。",
    "可以试试深呼吸：吸气四秒，屏住四秒，再慢慢呼气六秒。",
    "我已经3个月没有好好睡过觉了，医生让我一天吃3次药。",
    "如果你有伤害自己的想法，请马上联系身边的人或拨打心理援助热线。",
    "你愿意多说一说最近发生了什么吗？",
];
const IDS: &[&str] = &[
    "Call me at (415) 555-0132.",
    "My email is maria.g@example.org.",
    "我的手机号是13812345678。",
    "It happened on March 3rd, 2021.",
    "My MRN is 00482913.",
    "2023年5月12日那天我爸离开了家。",
    "My grandmother is 93 years old.",
    "I talked to David Okafor about it.",
];

fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(100_000);
    let mut rng = ChaCha8Rng::seed_from_u64(16);
    let texts: Vec<String> = (0..n)
        .map(|_| {
            let pool = if rng.gen_bool(0.5) { EN } else { ZH };
            let mut s = String::new();
            for _ in 0..rng.gen_range(3..=8) {
                s.push_str(pool[rng.gen_range(0..pool.len())]);
                s.push(' ');
            }
            if rng.gen_bool(0.1) {
                s.push_str(IDS[rng.gen_range(0..IDS.len())]);
            }
            s
        })
        .collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    let mb = bytes as f64 / 1e6;
    let terms: String = (0..20)
        .map(|i| {
            if i % 2 == 0 {
                format!("Person Name{i}\n")
            } else {
                format!("place: Clinic {i}\n")
            }
        })
        .collect::<String>()
        + "David Okafor\n";
    let scanner = Scanner::new(&parse_terms(&terms));
    let peer =
        regex::Regex::new("[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\\.[A-Za-z0-9-]+)*\\.[A-Za-z]{2,24}")
            .expect("peer pattern");
    for round in 1..=3 {
        let t = Instant::now();
        let findings: usize = texts.iter().map(|s| scanner.scan(s).len()).sum();
        let scan = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let peer_hits: usize = texts.iter().map(|s| peer.find_iter(s).count()).sum();
        let single = t.elapsed().as_secs_f64();
        println!(
            "round {round}: {n} responses, {mb:.1} MB; PHI scan {scan:.3} s = {:.1} MB/s ({findings} findings); single e-mail pattern {single:.3} s = {:.1} MB/s ({peer_hits} hits); ratio {:.2}x",
            mb / scan,
            mb / single,
            scan / single
        );
    }
}
