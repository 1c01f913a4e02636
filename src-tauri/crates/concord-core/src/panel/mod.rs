//! **Row 5** of the core's layers (base 0 · files 1 · rubric 2 · store 3 · intake, judge, guard, workflow 4 · panel 5 · outputs 6 · app 7): the expert panel and the judges read
//! together — agreement reports per criterion and judge ([`agreement`]), the published agreement
//! table with its verdicts ([`agreement_table`]), discrepancies and their adjudication
//! ([`adjudication`]), rater quality ([`rater_quality`]) and the judges' consistency, calibration
//! and bias ([`judge_reliability`]), and pairwise preferences ([`pairwise`]: Bradley–Terry
//! leaderboards, agreement on preferences, judges' position bias), and the questions reviewers ask
//! of a judge study: agreement split by a facet of the responses such as their category
//! ([`strata`]), the judges' corrected prevalence of each binary criterion ([`prevalence`]) and
//! the latent Dawid–Skene consensus as a reference ([`latent`]) and the study's own G- and
//! D-studies of experts, occasions and judge repetitions ([`gstudy`]), and how many expert labels
//! and judge-only answers a target precision needs ([`label_budget`]); agreement on the evidence
//! raters marked in replies ([`span_agreement`]: unitized α, span F1, judges against experts)
//! and the panel's view of it ([`span_view`]: unlocated quotes, one reply's spans rater by rater). The statistics themselves are
//! `concord-stats`; this folder chooses the data.
//!
//! Imports rows 0–4; never `outputs` or `app`.

pub mod adjudication;
pub mod agreement;
pub mod agreement_table;
pub mod gstudy;
pub mod judge_reliability;
pub mod label_budget;
pub mod latent;
pub mod pairwise;
pub mod prevalence;
pub mod rater_quality;
pub mod span_agreement;
pub mod span_view;
pub mod strata;
