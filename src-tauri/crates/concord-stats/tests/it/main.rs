//! concord-stats's integration tests: one binary; published worked examples, committed reference
//! vectors from peer implementations (lme4, irrCAC, pingouin, ppi-python, choix, evalica…) and properties.
mod agreement_ci;
mod alttest_ppi;
mod dawid_skene;
mod gtheory;
mod judge_reliability;
mod pairwise;
mod ppi_power;
mod prevalence;
mod properties;
mod published;
mod rater_quality_simulated;
mod reference_vectors;
mod reml_lme4;
mod spans;
