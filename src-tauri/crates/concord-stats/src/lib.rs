//! Pure agreement statistics for Concord: intraclass correlations, paired comparisons,
//! categorical agreement coefficients, bootstrap and interpretation. No IO, no clock, no database:
//! every function takes numbers in and gives numbers (or an explicit "undefined") out.
//!
//! # Modules
//! - [`gtheory`]: generalizability theory for crossed targets × raters [× occasions] designs with
//!   missing cells — REML variance components, Brennan's relative and absolute coefficients and a
//!   D-study over 1–10 raters and occasions.
//! - [`icc`]: the six ICC forms with F tests and McGraw & Wong (1996) intervals; a dense fast
//!   path ([`icc::icc_all`]) and a cheap two-rater point estimate for bootstraps
//!   ([`icc::icc_c1_a1_pairs`], [`icc::icc_c1_a1_resampled`]).
//! - [`paired`]: bias, Bland–Altman limits, MSE/RMSE/MAE, Pearson, Spearman, Kendall τ-b, Lin's CCC.
//! - [`categorical`]: percent agreement, Cohen's κ, Fleiss' κ, Gwet's AC1/AC2, Krippendorff's α,
//!   PABAK, diagnostic accuracy with Wilson intervals.
//! - [`dawid_skene`]: the latent consensus label by Dawid–Skene EM (as crowd-kit's `DawidSkene`),
//!   gold items held at their labels, each rater's confusion matrix; φ of two judges' errors.
//! - [`bootstrap`]: percentile bootstrap with a caller-supplied generator; the MentalAlign interval;
//!   the cluster bootstrap of ICC(C,1) that resamples whole conversations
//!   ([`bootstrap::cluster_icc_c1_ci`], summed from each cluster's [`icc::PairMoments`]).
//! - [`interpret`]: Koo & Li and Landis & Koch labels, interval-decided labels, precision status.
//! - [`alttest`]: the Alternative Annotator Test (Calderon, Reichart & Dror 2025): can a judge
//!   replace the human annotators?
//! - [`ppi`]: PPI++ prediction-powered means (judge scores on all items, experts on a subset).
//! - [`prevalence`]: the share of answers truly meeting a binary criterion, corrected for the
//!   judge's sensitivity and specificity (Rogan–Gladen), with the interval and the calibration
//!   allocation of Lee et al. (2025).
//! - [`power`]: how many expert labels and judge-only answers a prediction-powered mean needs for
//!   a standard error or a budget (`ppi-python`'s `ppi_power`), beside the expert-only design.
//! - [`reml`]: ICC1/ICC2/ICC3 for incomplete, unbalanced designs from REML variance components
//!   (lme4's criterion), with profile-likelihood intervals and boundary fits reported.
//! - [`optimize`]: Brent's minimiser and root finder, a two-parameter Nelder–Mead simplex.
//! - [`planner`]: Bonett (2002) targets-for-width and width-for-targets.
//! - [`rater_quality`]: a rater against the panel — severity with intervals, drift (first vs last
//!   block, CUSUM change test), test–retest, time on task, straight-lining.
//! - [`special`]: incomplete beta, F and t distributions and quantiles.
//! - [`repetitions`]: a judge's repetitions — the documented aggregates (median, mean, mode),
//!   self-consistency across repetitions (Krippendorff's α with a seeded bootstrap interval,
//!   exact agreement, within-response SD) and the repetitions-needed table beside Spearman–Brown,
//!   with the fewest repetitions that reach a target reliability.
//! - [`calibration`]: expected scores from token log-probabilities or repetition frequencies;
//!   reliability diagram, ECE (equal-width bins) and Brier score for binary criteria.
//! - [`judge_bias`]: the bias audit's estimators (mean, OLS slope and Welch difference with t
//!   intervals; the fitted line with its confidence band; tertiles of the expert mean).
//! - [`pairwise`]: blinded pairwise preferences — Bradley–Terry strengths (ties split or
//!   Davidson's) with cluster-bootstrap intervals and ranks, win rates, agreement on preferences
//!   (percent, Cohen's κ), a judge's position bias and position consistency.
//! - [`spans`]: agreement on marked spans — Krippendorff's unitized α (as DKPro Statistics'
//!   `KrippendorffAlphaUnitizingAgreement`), span F1 on exact boundaries and on any overlap, and
//!   a bootstrap of several figures over the same resamples of replies.
//!
//! Undefined results are `None`, never NaN; serialised with serde they become `null`.
//!
//! # Where peer implementations disagree, and what Concord follows
//!
//! - **ICC confidence intervals.** Concord reproduces `pingouin.intraclass_corr` (0.5 and later):
//!   two-sided α/2 = 0.025 F quantiles with real-valued degrees of freedom, ICC(A,1) bounds from the
//!   McGraw & Wong formula with Satterthwaite df v, ICC(A,k) bounds as the Spearman–Brown step-up of
//!   the ICC(A,1) bounds (algebraically McGraw & Wong's Table 7 entry). R `psych::ICC` uses the same
//!   formulas on complete data, but with missing data it fits a mixed model by `lme4` instead of
//!   dropping targets, so its estimates differ there. `irr::icc` implements the same
//!   McGraw & Wong formulas. pingouin returns NaN where Concord returns a defined limit under
//!   perfect agreement (error mean square 0): ICC = 1, F = +∞, p = 0, interval [1, 1].
//! - **Missing data in ICC.** Targets with any missing rating are dropped (pingouin's
//!   `nan_policy="omit"`); the number used is reported.
//! - **Fleiss' κ and Gwet's AC1 with missing data.** Concord follows Gwet (2014) and irrCAC
//!   (observed agreement over items rated at least twice; prevalences averaged over items rated at
//!   least once). statsmodels' `fleiss_kappa` requires the same number of ratings per item, and
//!   implementations that first drop every item with a missing rating (listwise deletion) give
//!   different values whenever data are missing; on complete data all agree. AC1's chance agreement uses the declared number of categories q,
//!   so declaring an unused category changes AC1 (as in irrCAC's `categ.labels`) but not κ.
//! - **Cohen's κ with missing data.** Concord uses the items rated by both (statsmodels,
//!   scikit-learn); irrCAC's `cohen.kappa.raw` takes each rater's marginal distribution from all
//!   items that rater rated. Weighted κ and AC2 use weights from the category values
//!   (1 − |v_k − v_l|/range, squared for quadratic); irrCAC (Python), statsmodels and
//!   scikit-learn use category positions (1 − |k − l|/(q − 1)). The two coincide for equally
//!   spaced categories such as a 1–5 scale, and differ for, e.g., categories 0, 1, 5.
//! - **A coefficient that is 0/0.** When every rating falls in one category, κ's chance
//!   agreement is 1 and κ is undefined; statsmodels says NaN, irrCAC's Fleiss κ reports 1.0
//!   (its chance agreement rounds to just below 1). Concord returns `None`. AC1 stays defined (1)
//!   as long as at least two categories are declared.
//! - **Krippendorff's α.** The coincidence-matrix definition of Krippendorff (2011), identical to
//!   the `krippendorff` package; the ordinal metric uses the declared category order and counts
//!   unused categories as zero-frequency, as that package does with a value domain.
//! - **Lin's CCC.** Population (1/n) variances and covariance, as in Lin (1989); plugging sample (n − 1) moments into the same formula (as some code does)
//!   shrinks the weight of the squared mean difference and gives a slightly larger value.
//! - **Kendall's τ.** τ-b (tie-corrected), scipy's default; τ-a ignores ties and τ-c (Stuart)
//!   targets rectangular tables, so both differ whenever ties occur.
//! - **Spearman's ρ.** Pearson correlation of average ranks (scipy, R `cor(method = "spearman")`);
//!   the textbook 1 − 6Σd²/(n(n²−1)) shortcut is only exact without ties.
//! - **Bland–Altman.** Limits bias ± 1.96 SD (SD with n − 1); their 95% CIs use the approximate
//!   standard error √(3s²/n) of Bland & Altman (1999) with t on n − 1 df; exact intervals based on
//!   the non-central t (Carkeet 2015) are wider for small n.
//! - **Gwet's AC1/AC2 intervals.** Gwet's (2008) linearised variance with t on n − 1 df, as irrCAC
//!   (its `gwet()`), upper limit capped at 1; R `irrCAC::gwet.ac1.raw` is the same formula.
//! - **Krippendorff's α intervals.** No peer package ships one (Krippendorff's own macro resamples
//!   pairable values, Hayes & Krippendorff 2007); Concord resamples items (units) with a seeded
//!   generator and takes numpy-style percentiles, so the bounds depend on the seed.
//! - **Specific agreement.** Positive/negative agreement generalised to many raters and missing
//!   ratings by pooling rater pairs over items (Uebersax 1982); equal to 2a/(2a + b + c) for two
//!   raters.
//! - **REML ICC.** lme4's REML criterion (agreement with `lmer` to 1e-6 on the test designs);
//!   intervals by profile likelihood (see [`reml`] for why), which lme4 offers for the
//!   components but not for their ratio.
//! - **Bradley–Terry ties.** Split ties (half a win to each side) are `evalica.bradley_terry`'s
//!   default (tie weight 0.5) and `choix` on W + T/2; choix itself has no tie outcome. Davidson's
//!   ν is twice the `v` of Newman (2023) as `evalica.newman` reports it. Where no
//!   maximum-likelihood estimate exists (an item that never loses, groups never compared,
//!   Davidson with no cycle holding more wins than ties) Concord refuses with a named error;
//!   on such data choix's `ilsr_pairwise` raises (no stationary distribution), while
//!   `choix.opt_pairwise` and evalica return the finite values at which they stopped.
//!   Strengths are natural-log strengths centred over the compared items (choix's parameters
//!   centred; evalica's scores are π, normalised to geometric mean 1).
//! - **Unitized α.** Concord follows DKPro Statistics (2.3): a category whose observed and
//!   expected disagreement are equal has α 0, and over all categories two zero disagreements give
//!   1 when some unit has a length (0 when none has). Krippendorff's (1995) printed expected
//!   disagreements differ slightly from DKPro's and Concord's (DKPro's tests suspect a sign in the
//!   paper's formula and accept its α within 0.02); Krippendorff (2004) prints α = 0.8591 where
//!   both compute 0.85867. One rater's overlapping units of one category are refused by
//!   [`spans::unitized_alpha`] (DKPro silently misreads them) and merged by [`spans::continuum`].
//! - **Bootstrap percentiles.** numpy's default linear interpolation (Hyndman & Fan type 7);
//!   R's `boot.ci(type = "perc")` uses a different order-statistic rule, so bounds differ slightly.

pub mod alttest;
pub mod bootstrap;
pub mod calibration;
pub mod categorical;
pub mod dawid_skene;
pub mod gtheory;
pub mod icc;
pub mod interpret;
pub mod judge_bias;
pub mod limits;
pub mod optimize;
pub mod paired;
pub mod pairwise;
pub mod planner;
pub mod power;
pub mod ppi;
pub mod prevalence;
pub mod rater_quality;
pub mod reml;
pub mod repetitions;
pub mod spans;
pub mod special;

pub use bootstrap::{percentile_ci, BootstrapInterval, BootstrapOptions};
pub use icc::{icc_all, icc_c1_a1_pairs, icc_with_missing, IccEstimate, IccForm, IccTable};
pub use paired::{compare, MeanDifference, PairedComparison};
