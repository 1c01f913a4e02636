//! The study's own G-studies (`concord agreement --gstudy`): which facet dominates the error, and
//! how many experts, occasions or judge calls reach a reliability of 0.8. Per criterion of the
//! rubric:
//! - **experts × responses × occasions**: every expert's first values and, where the study has
//!   test–retest items, their retest values as a second occasion (without retests, experts ×
//!   responses); every response some expert rated is a target, missing cells allowed;
//! - **each judge × responses × repetitions**: the repetitions of the newest run that asked the
//!   judge at least twice (`judge::scores::repetition_values`), repetitions as the judge's
//!   facet, so its D-study says how many calls to average.
//!
//! The components, coefficients and D-study are `concord_stats::gtheory`'s (REML, Brennan's
//! random-facet coefficients). A design the data cannot support (one expert, one occasion seen,
//! components that cannot be told apart) carries the reason instead of figures.

use crate::judge::scores::repetition_values;
use crate::rubric::localized;
use crate::store::{RaterKind, Store, StoreError, StoreResult};
use concord_stats::gtheory::{g_study, DStudyRow, GDesign, GScore, GStudy};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// The reliability the D-study looks for.
pub const TARGET_RELIABILITY: f64 = 0.8;

/// Whose scores a G-study reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum GStudyKind {
    /// Experts × responses (× occasions).
    Experts,
    /// One judge × responses × repetitions.
    Judge,
}

/// One design of the D-study (`n_rater` counts the design's first facet: experts, or a judge's
/// repetitions).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DStudyPoint {
    pub n_rater: usize,
    pub n_occasion: usize,
    /// Eρ², the generalizability coefficient.
    pub relative: Option<f64>,
    /// Φ, the dependability coefficient.
    pub absolute: Option<f64>,
}

impl From<&DStudyRow> for DStudyPoint {
    fn from(r: &DStudyRow) -> Self {
        DStudyPoint {
            n_rater: r.n_rater,
            n_occasion: r.n_occasion,
            relative: r.relative.filter(|v| v.is_finite()),
            absolute: r.absolute.filter(|v| v.is_finite()),
        }
    }
}

/// The G coefficients for the numbers of raters and occasions observed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GCoefficientsView {
    pub relative: Option<f64>,
    pub absolute: Option<f64>,
}

/// One G-study of the study.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct StudyGStudy {
    pub kind: GStudyKind,
    /// `experts`, or the judge's model id (or name).
    pub raters: String,
    /// Criterion key and its English display name.
    pub criterion: String,
    pub attribute: String,
    /// The facets beside the responses: `rater` (and `occasion`) for experts, `repetition` for a
    /// judge; the components and the D-study's `n_rater` use these names.
    pub facets: Vec<String>,
    pub n_scores: usize,
    pub n_targets: usize,
    /// Experts (or repetitions) seen.
    pub n_raters: usize,
    pub n_occasions: usize,
    /// Variance components by name (`target`, the facets, their interactions, `residual`).
    pub components: BTreeMap<String, f64>,
    pub g: Option<GCoefficientsView>,
    /// 1–10 raters (× 1–10 occasions with that facet).
    pub d_study: Vec<DStudyPoint>,
    /// The design with the fewest scores per response whose relative coefficient reaches
    /// [`TARGET_RELIABILITY`], when one of the D-study's does.
    pub reaches_target: Option<DStudyPoint>,
    /// Components estimated at zero.
    pub boundary: Vec<String>,
    /// Why there are no figures.
    pub not_computed: Option<String>,
}

/// The G-studies of one rubric.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GStudySection {
    pub rubric: String,
    pub target_reliability: f64,
    pub studies: Vec<StudyGStudy>,
}

/// A score as the study gives it: (response, rater or repetition, occasion, value).
type Cell = (i64, i64, i64, f64);

/// The G-study of `cells`, named as `kind` and `facets` say.
fn study_of(
    kind: GStudyKind,
    raters: String,
    criterion: (&str, &str),
    cells: &[Cell],
    with_occasion: bool,
) -> StudyGStudy {
    let index = |map: &mut HashMap<i64, usize>, key: i64| {
        let next = map.len();
        *map.entry(key).or_insert(next)
    };
    let (mut targets, mut facet, mut occasions) = (HashMap::new(), HashMap::new(), HashMap::new());
    let scores: Vec<GScore> = cells
        .iter()
        .map(|&(t, r, o, score)| GScore {
            target: index(&mut targets, t),
            rater: index(&mut facet, r),
            occasion: index(&mut occasions, o),
            score,
        })
        .collect();
    let facets: Vec<String> = match (kind, with_occasion) {
        (GStudyKind::Judge, _) => vec!["repetition".into()],
        (GStudyKind::Experts, true) => vec!["rater".into(), "occasion".into()],
        (GStudyKind::Experts, false) => vec!["rater".into()],
    };
    let mut out = StudyGStudy {
        kind,
        raters,
        criterion: criterion.0.to_string(),
        attribute: criterion.1.to_string(),
        facets,
        n_scores: scores.len(),
        n_targets: targets.len(),
        n_raters: facet.len(),
        n_occasions: occasions.len().max(1),
        components: BTreeMap::new(),
        g: None,
        d_study: Vec::new(),
        reaches_target: None,
        boundary: Vec::new(),
        not_computed: None,
    };
    let design = GDesign {
        n_targets: targets.len(),
        n_raters: facet.len(),
        n_occasions: with_occasion.then_some(occasions.len()),
    };
    match g_study(&scores, &design) {
        Ok(g) => fill(&mut out, &g),
        Err(e) => {
            let why = e.to_string();
            out.not_computed = Some(match kind {
                GStudyKind::Judge => why.replace("rater", "repetition"),
                GStudyKind::Experts => why,
            });
        }
    }
    out
}

/// The figures of a fitted G-study, named by the design's facets.
fn fill(out: &mut StudyGStudy, g: &GStudy) {
    let rename = |name: &str| match out.kind {
        GStudyKind::Judge => name.replace("rater", "repetition"),
        GStudyKind::Experts => name.to_string(),
    };
    let c = &g.components;
    let mut components = vec![("target", Some(c.target)), ("rater", Some(c.rater))];
    components.extend([
        ("occasion", c.occasion),
        ("target:rater", c.target_rater),
        ("target:occasion", c.target_occasion),
        ("rater:occasion", c.rater_occasion),
        ("residual", Some(c.residual)),
    ]);
    out.components = components
        .into_iter()
        .filter_map(|(name, v)| Some((rename(name), v.filter(|v| v.is_finite())?)))
        .collect();
    out.g = Some(GCoefficientsView {
        relative: g.g.relative.filter(|v| v.is_finite()),
        absolute: g.g.absolute.filter(|v| v.is_finite()),
    });
    out.d_study = g.d_study.iter().map(DStudyPoint::from).collect();
    out.reaches_target = out
        .d_study
        .iter()
        .filter(|p| p.relative.is_some_and(|r| r >= TARGET_RELIABILITY))
        .min_by_key(|p| (p.n_rater * p.n_occasion, p.n_occasion, p.n_rater))
        .copied();
    out.boundary = g.boundary.iter().map(|b| rename(b)).collect();
}

/// The experts' first and retest values of the rubric's criteria (`criteria`: criterion id →
/// position), as cells per criterion (occasion 0 first, 1 retest), read through the criterion
/// index so the judges' ratings are never scanned.
fn expert_cells(store: &Store, criteria: &HashMap<i64, usize>) -> StoreResult<Vec<Vec<Cell>>> {
    let experts: Vec<i64> = store
        .rater_records()?
        .into_iter()
        .filter(|r| RaterKind::parse(&r.kind) == Some(RaterKind::Expert))
        .map(|r| r.id)
        .collect();
    let mut ids: Vec<i64> = criteria.keys().copied().collect();
    ids.sort_unstable();
    let mut out = vec![Vec::new(); criteria.len()];
    store.for_each_first_and_retest_value(
        &ids,
        &experts,
        |rater, response, criterion, retest, value| {
            if let Some(&c) = criteria.get(&criterion) {
                out[c].push((response, rater, i64::from(retest), value as f64));
            }
        },
    )?;
    for cells in &mut out {
        // First ratings before retests, each in response then rater order, as a scan gives them.
        cells.sort_by_key(|c| (c.2, c.0, c.1));
    }
    Ok(out)
}

/// Every G-study of `rubric`: the experts' per criterion, then each judge's per criterion.
pub fn gstudy_section(store: &Store, rubric: &str) -> StoreResult<GStudySection> {
    let stored = store
        .rubrics()?
        .into_iter()
        .find(|s| s.rubric.id == rubric)
        .ok_or_else(|| StoreError::NotFound {
            what: "rubric",
            key: rubric.to_string(),
        })?;
    let ids = store.read().criterion_ids(stored.id)?;
    let criteria: Vec<(i64, String, String)> = stored
        .rubric
        .criteria
        .iter()
        .filter_map(|c| {
            let id = *ids.get(&c.id)?;
            Some((id, c.id.clone(), localized(&c.label, "en").to_string()))
        })
        .collect();
    let position: HashMap<i64, usize> =
        criteria.iter().enumerate().map(|(i, c)| (c.0, i)).collect();
    let mut studies = Vec::new();
    for (c, cells) in expert_cells(store, &position)?.into_iter().enumerate() {
        let with_occasion = cells.iter().any(|cell| cell.2 == 1);
        let (_, key, label) = &criteria[c];
        studies.push(study_of(
            GStudyKind::Experts,
            "experts".into(),
            (key, label),
            &cells,
            with_occasion,
        ));
    }
    let judges: HashMap<i64, String> = store
        .rater_records()?
        .into_iter()
        .filter(|r| RaterKind::parse(&r.kind) == Some(RaterKind::Judge))
        .map(|r| (r.id, r.model_id.unwrap_or(r.name)))
        .collect();
    let mut by_judge: BTreeMap<(String, usize), Vec<Cell>> = BTreeMap::new();
    for ((rater, response, criterion), values) in repetition_values(store, stored.id, 2, None)? {
        let (Some(name), Some(&c)) = (judges.get(&rater), position.get(&criterion)) else {
            continue;
        };
        let cells = by_judge.entry((name.clone(), c)).or_default();
        cells.extend(values.iter().map(|&(rep, v)| (response, rep, 0, v)));
    }
    for ((name, c), mut cells) in by_judge {
        cells.sort_by_key(|c| (c.0, c.1));
        let (_, key, label) = &criteria[c];
        studies.push(study_of(
            GStudyKind::Judge,
            name,
            (key, label),
            &cells,
            false,
        ));
    }
    Ok(GStudySection {
        rubric: rubric.to_string(),
        target_reliability: TARGET_RELIABILITY,
        studies,
    })
}
