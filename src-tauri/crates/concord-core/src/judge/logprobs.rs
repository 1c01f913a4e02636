//! Expected scores from a reply's token log-probabilities (OpenAI-compatible `logprobs`, vLLM).
//!
//! A score token is a generated token whose text (spaces and trailing `,` `}` trimmed) is an
//! integer on a criterion's scale and which *directly follows* one of the criterion's names —
//! only quotes, colons (ASCII or full-width), `=` and spaces between the name's end and the token
//! — so `"Empathy": 4` and `'共情与合作': 1` are score tokens while a number inside an
//! explanation or after `Overall` is not. When a criterion has several, the last one counts (a
//! PsyCrisis reply's dict comes after its reasons). The expected score is Σ p(s)·s over the
//! token's alternatives that are values on the scale, their probabilities renormalised
//! (`concord_stats::calibration::expected_from_logprobs`).

use super::http::TokenLogprob;
use crate::rubric::Rubric;
use concord_stats::calibration::expected_from_logprobs;
use std::collections::BTreeMap;

fn as_score(token: &str) -> Option<i64> {
    token
        .trim()
        .trim_end_matches([',', '}'])
        .trim()
        .parse()
        .ok()
}

fn only_separators(gap: &str) -> bool {
    gap.chars().all(|c| {
        c.is_whitespace() || matches!(c, '"' | '\'' | ':' | '：' | '=' | '“' | '”' | '‘' | '’')
    })
}

/// `{criterion id: expected score}` for the criteria of `rubric` whose score token is found in
/// `tokens` (see the module docs); criteria without one are left out.
pub fn expected_scores(tokens: &[TokenLogprob], rubric: &Rubric) -> BTreeMap<String, f64> {
    let names: Vec<(usize, Vec<&str>)> = rubric
        .criteria
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut n: Vec<&str> = c.keys.iter().map(String::as_str).collect();
            n.push(c.id.as_str());
            (i, n)
        })
        .collect();
    let mut prefix = String::new();
    let mut out = BTreeMap::new();
    for t in tokens {
        if let Some(value) = as_score(&t.token) {
            let here = prefix.len();
            // The criterion whose name ends latest before this token.
            let mut best: Option<(usize, usize)> = None;
            for (i, ns) in &names {
                for n in ns {
                    if let Some(at) = prefix.rfind(n) {
                        let end = at + n.len();
                        if best.is_none_or(|(_, e)| end > e) {
                            best = Some((*i, end));
                        }
                    }
                }
            }
            if let Some((i, end)) = best {
                let c = &rubric.criteria[i];
                if only_separators(&prefix[end..here]) && c.scale.contains(value) {
                    let scale: Vec<f64> =
                        (c.scale.min()..=c.scale.max()).map(|v| v as f64).collect();
                    let mut alternatives: Vec<(f64, f64)> = t
                        .top
                        .iter()
                        .filter_map(|(tok, lp)| Some((as_score(tok)? as f64, *lp)))
                        .collect();
                    if !alternatives.iter().any(|(v, _)| *v == value as f64) {
                        alternatives.push((value as f64, t.logprob));
                    }
                    // The same value spelled twice (" 4" and "4") counts once, at its best.
                    alternatives.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
                    alternatives.dedup_by(|a, b| a.0 == b.0);
                    if let Some(e) = expected_from_logprobs(&alternatives, &scale) {
                        out.insert(c.id.clone(), e);
                    }
                }
            }
        }
        prefix.push_str(&t.token);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rubric::builtin;

    fn tok(token: &str, top: &[(&str, f64)]) -> TokenLogprob {
        TokenLogprob {
            token: token.to_string(),
            logprob: top.first().map_or(0.0, |t| t.1),
            top: top.iter().map(|(t, p)| (t.to_string(), *p)).collect(),
        }
    }

    #[test]
    fn score_tokens_follow_their_criterion_names() {
        let rubric = builtin::mentalbench();
        let tokens = vec![
            tok("{\"Guidance\": ", &[]),
            tok(
                "4",
                &[("4", 0.7f64.ln()), ("5", 0.2f64.ln()), ("3", 0.1f64.ln())],
            ),
            tok(", \"Overall\": ", &[]),
            tok("3", &[("3", 0.5f64.ln()), ("2", 0.5f64.ln())]),
            tok(", \"Explanation\": \"Empathy was 2", &[]),
            tok("}", &[]),
        ];
        let e = expected_scores(&tokens, &rubric);
        let key = rubric.criteria[0].id.clone();
        assert!(
            (e[&key] - (0.7 * 4.0 + 0.2 * 5.0 + 0.1 * 3.0)).abs() < 1e-12,
            "Guidance's expected score is Σ p·s over its token's alternatives"
        );
        assert_eq!(
            e.len(),
            1,
            "the number after Overall and the one inside the explanation are not score tokens"
        );
    }
}
