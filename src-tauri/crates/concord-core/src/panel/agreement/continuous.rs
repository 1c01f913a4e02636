//! One continuous agreement cell: gather the (reference, rater) values per response, drop the
//! rater's own family, aggregate per source (system level) or keep responses (item level), and
//! hand the numbers to `concord-stats` for the ICCs, the intervals, Bland–Altman and Lin's CCC.

use super::data::AgreementData;
use super::{
    AgreementCell, AgreementOptions, BlandAltman, CellSpec, CiMethod, IccFormValue, Level,
    Precision, Reference, Target, TargetPoint,
};
use concord_stats::bootstrap::{percentile_ci, BootstrapOptions};
use concord_stats::icc::{icc_all, icc_c1_a1_resampled, IccForm};
use concord_stats::interpret::{precision_status, PrecisionStatus};
use concord_stats::limits::bland_altman;
use concord_stats::paired::{lin_ccc, MeanDifference};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// The value of `rater` on `target` for every response: the criterion's values, or for a group
/// the mean of its members (NaN unless every member is present).
pub(crate) fn rater_values(data: &AgreementData, rater: usize, target: Target) -> Vec<f64> {
    match target {
        Target::Criterion(c) => data.series(rater, c).to_vec(),
        Target::Group(g) => {
            let members = &data.groups[g].members;
            let n = data.responses.len();
            let mut out = vec![0.0; n];
            for &m in members {
                for (o, v) in out.iter_mut().zip(data.series(rater, m)) {
                    *o += v;
                }
            }
            let k = members.len() as f64;
            out.iter_mut().for_each(|o| *o /= k);
            out
        }
    }
}

/// The reference values: one rater's, or per response the mean of the experts who have a value.
pub(crate) fn reference_values(
    data: &AgreementData,
    reference: Reference,
    target: Target,
) -> Vec<f64> {
    match reference {
        Reference::Rater(r) => rater_values(data, r, target),
        Reference::Experts => {
            let experts = data.experts();
            if experts.len() == 1 {
                return rater_values(data, experts[0], target);
            }
            let n = data.responses.len();
            let mut sum = vec![0.0; n];
            let mut count = vec![0u32; n];
            for &e in &experts {
                for (i, v) in rater_values(data, e, target).into_iter().enumerate() {
                    if !v.is_nan() {
                        sum[i] += v;
                        count[i] += 1;
                    }
                }
            }
            sum.iter()
                .zip(&count)
                .map(|(s, &c)| if c == 0 { f64::NAN } else { s / c as f64 })
                .collect()
        }
    }
}

/// A stable 64-bit stream id for a cell (FNV-1a over its identity), so each cell draws its own
/// bootstrap stream from the seed.
fn stream_id(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.bytes().chain([0x1f]) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

pub(crate) fn compute(
    data: &AgreementData,
    spec: &CellSpec,
    options: &AgreementOptions,
) -> AgreementCell {
    let rater = &data.raters[spec.rater];
    let (criterion, attribute, group, is_group) = match spec.target {
        Target::Criterion(c) => {
            let info = &data.criteria[c];
            (
                info.key.clone(),
                info.label.clone(),
                info.group.clone(),
                false,
            )
        }
        Target::Group(g) => {
            let info = &data.groups[g];
            (
                info.id.clone(),
                info.label.clone(),
                Some(info.id.clone()),
                true,
            )
        }
    };
    let reference_name = match spec.reference {
        Reference::Experts => "experts".to_string(),
        Reference::Rater(r) => data.raters[r].name.clone(),
    };
    let rater_name = rater.model_id.clone().unwrap_or_else(|| rater.name.clone());

    // Self-family exclusion applies to judges only (experts have no model family).
    let excluded: Vec<bool> = data
        .sources
        .iter()
        .map(|s| {
            options.exclude_self_family
                && rater.kind == crate::store::RaterKind::Judge
                && s.family.is_some()
                && s.family.as_deref() == rater.family.as_deref()
        })
        .collect();
    let excluded_sources = data
        .sources
        .iter()
        .zip(&excluded)
        .filter(|(_, &x)| x)
        .map(|(s, _)| s.key.clone())
        .collect();

    let judge = rater_values(data, spec.rater, spec.target);
    let reference = reference_values(data, spec.reference, spec.target);

    // Individual pairs (reference, rater) and per-source sums.
    let n_sources = data.sources.len();
    let mut per_source = vec![(0.0f64, 0.0f64, 0usize); n_sources];
    let mut item_pairs: Vec<(f64, f64)> = Vec::new();
    let mut differences = MeanDifference::default();
    for (i, response) in data.responses.iter().enumerate() {
        if excluded[response.source] {
            continue;
        }
        let (r, j) = (reference[i], judge[i]);
        if r.is_nan() || j.is_nan() {
            continue;
        }
        differences.add(j, r);
        let s = &mut per_source[response.source];
        s.0 += r;
        s.1 += j;
        s.2 += 1;
        if spec.level == Level::Item {
            item_pairs.push((r, j));
        }
    }
    let n_pairs = per_source.iter().map(|s| s.2).sum::<usize>();
    let bias = differences.bias().and_then(finite);
    let mse = differences.mse().and_then(finite);
    let targets: Vec<(f64, f64)> = match spec.level {
        Level::System => per_source
            .iter()
            .filter(|s| s.2 > 0)
            .map(|&(r, j, n)| (r / n as f64, j / n as f64))
            .collect(),
        Level::Item => item_pairs,
    };

    let flat: Vec<f64> = targets.iter().flat_map(|&(r, j)| [r, j]).collect();
    let (icc_c1, icc_a1, ci95_f_c1, ci95_f_a1, icc_forms) = match icc_all(&flat, targets.len(), 2) {
        Ok(table) => {
            let c = table.get(IccForm::Icc3);
            let a = table.get(IccForm::Icc2);
            let forms = table
                .estimates
                .iter()
                .map(|e| IccFormValue {
                    form: form_name(e.form).to_string(),
                    value: e.value,
                    ci95: e.ci95,
                })
                .collect();
            (c.value, a.value, c.ci95, a.ci95, forms)
        }
        Err(_) => (None, None, [None, None], [None, None], Vec::new()),
    };
    let points = match spec.level {
        Level::System => per_source
            .iter()
            .enumerate()
            .filter(|(_, s)| s.2 > 0)
            .map(|(i, &(r, j, n))| TargetPoint {
                source: data.sources[i].key.clone(),
                reference: r / n as f64,
                rater: j / n as f64,
            })
            .collect(),
        Level::Item => Vec::new(),
    };

    let (ci95, ci_method, bootstrap_kept) = match spec.level {
        Level::System if targets.len() >= 2 && options.resamples > 0 => {
            let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
            rng.set_stream(stream_id(&[
                &rater.name,
                &reference_name,
                &criterion,
                spec.level.as_str(),
            ]));
            let boot_options = BootstrapOptions {
                resamples: options.resamples,
                ..BootstrapOptions::mentalalign()
            };
            match percentile_ci(targets.len(), &boot_options, &mut rng, |idx| {
                icc_c1_a1_resampled(&targets, idx).ok().and_then(|e| e.c1)
            }) {
                Ok(b) => ([b.lower, b.upper], CiMethod::Bootstrap, b.kept),
                Err(_) => ([None, None], CiMethod::Bootstrap, 0),
            }
        }
        Level::System => ([None, None], CiMethod::Bootstrap, 0),
        Level::Item => (ci95_f_c1, CiMethod::F, 0),
    };
    let ci_width = match ci95 {
        [Some(lo), Some(hi)] => finite(hi - lo),
        _ => None,
    };
    let status = ci_width.and_then(precision_status).map(|s| match s {
        PrecisionStatus::Good => Precision::Good,
        PrecisionStatus::Moderate => Precision::Moderate,
        PrecisionStatus::Poor => Precision::Poor,
    });

    let (reference_side, rater_side): (Vec<f64>, Vec<f64>) = targets.iter().copied().unzip();
    let bland_altman = match bland_altman(&rater_side, &reference_side) {
        Ok(l) => BlandAltman {
            bias: l.bias,
            sd_diff: l.sd_diff,
            loa95: l.loa95,
        },
        Err(_) => BlandAltman {
            bias: None,
            sd_diff: None,
            loa95: [None, None],
        },
    };
    let lin_ccc = lin_ccc(&rater_side, &reference_side);

    AgreementCell {
        comparison: spec.comparison,
        rater: rater_name,
        reference: reference_name,
        criterion,
        attribute,
        group,
        is_group,
        level: spec.level,
        excluded_sources,
        n_targets: targets.len(),
        n_pairs,
        icc_c1,
        icc_a1,
        ci95,
        ci_method,
        ci_width,
        status,
        bootstrap_kept,
        ci95_f_c1,
        ci95_f_a1,
        bias,
        mse,
        bland_altman,
        lin_ccc,
        icc_forms,
        points,
    }
}

/// The name `concord stats icc` and pingouin use for a form.
fn form_name(form: IccForm) -> &'static str {
    match form {
        IccForm::Icc1 => "ICC1",
        IccForm::Icc2 => "ICC2",
        IccForm::Icc3 => "ICC3",
        IccForm::Icc1k => "ICC1k",
        IccForm::Icc2k => "ICC2k",
        IccForm::Icc3k => "ICC3k",
    }
}
