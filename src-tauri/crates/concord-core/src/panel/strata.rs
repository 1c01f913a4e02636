//! Agreement by facet (`concord agreement --by category`, `--by turn`): the responses a report
//! compares are split by a facet of theirs — the conversation's category (risk type), or the
//! turn number a reply stands at — and the whole report is computed on each part alone, so a
//! category's ICC is the ICC of that category's responses and nothing else (the same cells,
//! bootstrap streams and all, as a study holding only them).
//!
//! A facet is a named way of giving each response a value ([`Facet`]): each variant has its read
//! of the study, and everything else — the split, the order, the reasons — is shared. Values are
//! ordered as numbers when every value is one, else as text; responses without a value form the
//! last stratum. A stratum with fewer than [`MIN_STRATUM_RESPONSES`] responses some expert rated
//! carries the reason instead of a report, never an empty or undefined figure.
//!
//! **By turn.** A reply of a transcript stands at its turn number (candidates share theirs); an
//! earlier release's single-turn answer at turn 2, after the user's message; a session item has
//! none (it is the whole conversation), so a session rubric's one stratum says so instead of
//! figures. A turn's item-level intervals are the conversation-cluster bootstrap the report
//! gives replies of transcripts (see `agreement::continuous`): at a turn where a conversation
//! holds several candidates, they are resampled together. A turn of transcripts also needs
//! [`MIN_STRATUM_CONVERSATIONS`] conversations (the candidates of one conversation say nothing of
//! the judge across conversations, and resampling one conversation has no spread), and its
//! intervals [`crate::panel::agreement::MIN_INTERVAL_CONVERSATIONS`].

use crate::panel::agreement::data::ItemAt;
use crate::panel::agreement::{AgreementOptions, AgreementReport, ReferencedData};
use crate::store::{Store, StoreResult};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};

/// The fewest responses with an expert value a stratum needs for its report: an ICC needs at
/// least two targets.
pub const MIN_STRATUM_RESPONSES: usize = 2;

/// The fewest conversations a turn of transcripts needs for its report: the cluster bootstrap
/// resamples conversations.
pub const MIN_STRATUM_CONVERSATIONS: usize = 2;

/// What responses are grouped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Facet {
    /// The conversation's category (risk type), from the import.
    Category,
    /// The turn number the item stands at (2 for a single-turn answer, none for a session item).
    Turn,
}

impl Facet {
    /// Every facet, in the order a front end lists them.
    pub const ALL: [Facet; 2] = [Facet::Category, Facet::Turn];

    /// The facet's name as the command line and the JSON spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Facet::Category => "category",
            Facet::Turn => "turn",
        }
    }

    /// A stratum's value as JSON: a turn is a number, a category a text, none `null`.
    pub fn value_json(self, value: Option<&str>) -> serde_json::Value {
        match (self, value) {
            (_, None) => serde_json::Value::Null,
            (Facet::Turn, Some(v)) => v
                .parse::<i64>()
                .map_or_else(|_| serde_json::json!(v), |n| serde_json::json!(n)),
            (Facet::Category, Some(v)) => serde_json::json!(v),
        }
    }

    /// The facet's value of every response of the rubric (`rubric_id`), by response id.
    fn values(self, store: &Store, rubric_id: i64) -> StoreResult<HashMap<i64, Option<String>>> {
        match self {
            Facet::Category => Ok(store
                .rubric_response_categories(rubric_id)?
                .into_iter()
                .map(|r| (r.response_id, r.category.filter(|c| !c.trim().is_empty())))
                .collect()),
            Facet::Turn => {
                let scope = store
                    .rubrics()?
                    .into_iter()
                    .find(|s| s.id == rubric_id)
                    .map(|s| s.rubric.scope)
                    .unwrap_or_default();
                Ok(store
                    .rubric_items(rubric_id)?
                    .into_iter()
                    .map(|r| {
                        let turn = ItemAt::of(r.turn, scope).turn();
                        (r.response_id, turn.map(|t| t.to_string()))
                    })
                    .collect())
            }
        }
    }
}

/// One value of the facet and the report of its responses alone.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Stratum {
    /// The facet's value; `None` for the responses without one.
    pub value: Option<String>,
    /// Responses of the rubric with this value.
    pub n_responses: usize,
    /// Of them, the responses some expert rated (those the report compares).
    pub n_compared: usize,
    /// By turn: the conversations those responses belong to (the clusters the turn's intervals
    /// resample); absent for other facets.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub n_conversations: Option<usize>,
    /// The report of these responses alone, when there are enough.
    pub report: Option<AgreementReport>,
    /// Why there is no report.
    pub not_computed: Option<String>,
}

/// The report split by a facet.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StratifiedReport {
    pub facet: Facet,
    /// What judges are compared with (`experts`, `consensus`, `dawid-skene`).
    pub reference: String,
    pub strata: Vec<Stratum>,
}

/// Facet values in order: as numbers when every one is a number, else as text.
fn ordered(values: BTreeSet<String>) -> Vec<String> {
    let mut out: Vec<String> = values.into_iter().collect();
    let numbers: Option<Vec<f64>> = out.iter().map(|v| v.trim().parse::<f64>().ok()).collect();
    if let Some(numbers) = numbers {
        let mut paired: Vec<(f64, String)> = numbers.into_iter().zip(out).collect();
        paired.sort_by(|a, b| a.0.total_cmp(&b.0));
        out = paired.into_iter().map(|p| p.1).collect();
    }
    out
}

/// Why a stratum has no report, if it has none: `part` holds its expert-rated responses.
fn too_few(facet: Facet, value: Option<&str>, part: &ReferencedData) -> Option<String> {
    let n_compared = part.ratings.responses.len();
    if facet == Facet::Turn {
        let Some(turn) = value else {
            return Some(
                "a session rubric's items are whole conversations: they stand at no turn, so \
                 there is no agreement by turn"
                    .to_string(),
            );
        };
        if n_compared >= MIN_STRATUM_RESPONSES && part.ratings.over_transcripts() {
            let n = conversations(part);
            if n < MIN_STRATUM_CONVERSATIONS {
                return Some(format!(
                    "the {n_compared} expert-rated replies at turn {turn} come from {n} \
                     conversation; the interval resamples conversations and needs at least \
                     {MIN_STRATUM_CONVERSATIONS}"
                ));
            }
        }
    }
    let which = match value {
        Some(v) if facet == Facet::Turn => format!("turn {v}"),
        Some(v) => format!("{} {}", facet.as_str(), crate::base::text::quoted(&v)),
        None => format!("the responses without a {}", facet.as_str()),
    };
    match n_compared {
        0 => Some(format!(
            "no response of {which} has an expert value: there is nothing to compare the judges with"
        )),
        n if n < MIN_STRATUM_RESPONSES => Some(format!(
            "only {n} response of {which} has an expert value; agreement needs at least {MIN_STRATUM_RESPONSES}"
        )),
        _ => None,
    }
}

/// The distinct conversations of a part's expert-rated responses.
fn conversations(part: &ReferencedData) -> usize {
    let mut ids: Vec<i64> = part
        .ratings
        .responses
        .iter()
        .map(|r| r.conversation)
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids.len()
}

/// The report of `data` (ratings against their reference) split by `facet`.
pub fn by_facet(
    store: &Store,
    data: &ReferencedData,
    facet: Facet,
    options: &AgreementOptions,
) -> StoreResult<StratifiedReport> {
    let of_response = facet.values(store, data.ratings.rubric_id())?;
    let mut counts: HashMap<Option<&str>, usize> = HashMap::new();
    for v in of_response.values() {
        *counts.entry(v.as_deref()).or_default() += 1;
    }
    let named: BTreeSet<String> = of_response.values().flatten().cloned().collect();
    let mut values: Vec<Option<String>> = ordered(named).into_iter().map(Some).collect();
    if counts.contains_key(&None) {
        values.push(None);
    }
    let value_of = |id: i64| of_response.get(&id).cloned().flatten();
    let strata = values
        .into_iter()
        .map(|value| {
            let part = data.restricted_to(|r| value_of(r.id) == value);
            let n_compared = part.ratings.responses.len();
            let not_computed = too_few(facet, value.as_deref(), &part);
            Stratum {
                n_responses: counts.get(&value.as_deref()).copied().unwrap_or(0),
                n_compared,
                n_conversations: (facet == Facet::Turn).then(|| conversations(&part)),
                report: not_computed.is_none().then(|| part.report(options)),
                not_computed,
                value,
            }
        })
        .collect();
    Ok(StratifiedReport {
        facet,
        reference: data.name.clone(),
        strata,
    })
}
