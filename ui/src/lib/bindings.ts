// Generated from the Rust IPC types by ts-rs. Do not edit by hand:
// run `CONCORD_BLESS=1 cargo test bindings` after changing a Rust type.

export type IpcError = { code: string, message: string, };

export type StudyStatus = { path: string | null, is_default: boolean, error: IpcError | null, };

export type StudyOverview = { path: string, title: string, schema_version: number, rubrics: Array<RubricSummary>, conversations: number, responses: number, sources: Array<SourceCount>, raters: Array<RaterSummary>, ratings: number, };

export type RubricSummary = { key: string, name: { [key in string]?: string }, criteria: Array<CriterionSummary>, conversations: number, };

export type CriterionSummary = { key: string, label: { [key in string]?: string }, group: string | null, scale: string, };

export type SourceCount = { key: string, name: string, family: string | null, kind: string, responses: number, };

export type RaterSummary = { id: number, name: string, kind: RaterKind, model_id: string | null, family: string | null, ratings: number, responses_rated: number, };

export type RaterKind = "expert" | "judge";

export type RatingOutcome = { "kind": "inserted" } | { "kind": "updated", previous: number | null, } | { "kind": "unchanged" };

export type Scale = { "kind": "likert", min: number, max: number, } | { "kind": "binary" };

export type Anchor = { value: number, label: { [key in string]?: string }, };

export type Group = { id: string, label: { [key in string]?: string }, };

export type Criterion = { id: string, 
/**
 * Names used for this criterion in released files and judge output; the first is canonical.
 */
keys: Array<string>, group: string | null, label: { [key in string]?: string }, description: { [key in string]?: string }, scale: Scale, anchors: Array<Anchor>, };

export type Total = { label: { [key in string]?: string }, keys: Array<string>, };

export type Rubric = { id: string, version: number, name: { [key in string]?: string }, description: { [key in string]?: string }, groups: Array<Group>, 
/**
 * A declared sum of all criteria (PsyCrisis' 总分), checked against the parts on import.
 */
total: Total | null, criteria: Array<Criterion>, };

export type RaterProfile = { id: number, name: string, items: number, completed: number, };

export type RaterProfiles = { profiles: Array<RaterProfile>, 
/**
 * New profiles cannot be created (the lead restricted them).
 */
locked: boolean, };

export type QueueSummary = { rater_id: number, rater_name: string, total: number, completed: number, 
/**
 * The item to show first: where the rater left off (1-based), or 0 for an empty queue.
 */
resume_item: number, };

export type ItemCriterion = { key: string, label: { [key in string]?: string }, description: { [key in string]?: string }, group: string | null, scale: Scale, anchors: Array<Anchor>, value: number | null, };

export type RatingItem = { item: number, total: number, completed: number, context: string, 
/**
 * The answer's text; `None` when the study holds only ratings for it.
 */
answer: string | null, language: string | null, rubric_name: { [key in string]?: string }, groups: Array<Group>, criteria: Array<ItemCriterion>, rationale: string | null, flagged: boolean, };

export type ItemProgress = { item: number, missing: number, complete: boolean, completed: number, total: number, outcome: RatingOutcome, };

export type Level = "system" | "item";

export type Comparison = "judge_vs_experts" | "judge_vs_expert" | "expert_vs_expert";

export type Precision = "good" | "moderate" | "poor";

export type CiMethod = "bootstrap" | "f";

export type AgreementOptions = { 
/**
 * Rubric whose ratings are compared (`mentalbench`, `psycrisis`, a custom id).
 */
rubric: string, 
/**
 * Seed of the bootstrap generator.
 */
seed: number, 
/**
 * Bootstrap resamples per cell.
 */
resamples: number, 
/**
 * Levels to compute.
 */
levels: Array<Level>, 
/**
 * Include attribute-group rows (CSS, ARS).
 */
groups: boolean, 
/**
 * Also compare judges with each expert and experts with each other (when there are several).
 */
per_expert: boolean, };

export type RaterRef = { name: string, kind: RaterKind, model_id: string | null, family: string | null, 
/**
 * Values present on this rubric.
 */
ratings: number, };

export type BlandAltman = { bias: number | null, sd_diff: number | null, loa95: [number | null, number | null], };

export type AgreementCell = { comparison: Comparison, 
/**
 * The rater under study: a judge's model id (or name), or an expert's name.
 */
rater: string, 
/**
 * `experts` (their mean) or the name of one expert.
 */
reference: string, 
/**
 * Criterion key (`guidance`) or group id (`CSS`).
 */
criterion: string, 
/**
 * Display name (`Guidance`, or the group id for group rows).
 */
attribute: string, 
/**
 * The attribute's group (`CSS`/`ARS`), or the group itself for group rows.
 */
group: string | null, is_group: boolean, level: Level, 
/**
 * Source keys left out as the rater's own family.
 */
excluded_sources: Array<string>, 
/**
 * Targets in the ICC (sources at system level, responses at item level).
 */
n_targets: number, 
/**
 * Individual rating pairs (bias and MSE are over these).
 */
n_pairs: number, icc_c1: number | null, icc_a1: number | null, 
/**
 * Headline 95% interval of ICC(C,1): bootstrap at system level, F-based at item level.
 */
ci95: [number | null, number | null], ci_method: CiMethod, ci_width: number | null, status: Precision | null, 
/**
 * Bootstrap replicates kept (0 when no bootstrap ran).
 */
bootstrap_kept: number, 
/**
 * McGraw & Wong F-based 95% intervals.
 */
ci95_f_c1: [number | null, number | null], ci95_f_a1: [number | null, number | null], 
/**
 * Mean of (rater − reference) over the individual pairs.
 */
bias: number | null, 
/**
 * Mean squared difference over the individual pairs.
 */
mse: number | null, 
/**
 * Bland–Altman over the ICC's targets.
 */
bland_altman: BlandAltman, 
/**
 * Lin's concordance correlation over the ICC's targets.
 */
lin_ccc: number | null, };

export type AgreementReport = { options: AgreementOptions, raters: Array<RaterRef>, 
/**
 * Continuous-scale cells (Likert criteria and their groups).
 */
cells: Array<AgreementCell>, 
/**
 * Binary dimensions: κ, AC1, PABAK, sensitivity and specificity against expert consensus.
 */
binary: Array<BinaryCell>, 
/**
 * Binary rubrics: correlations of totals at item and system level.
 */
totals: Array<TotalsCell>, };

export type BinaryCell = { judge: string, criterion: string, attribute: string, 
/**
 * Responses with both a judge value and an expert consensus.
 */
n_items: number, 
/**
 * Responses the experts rated but tied on.
 */
n_no_consensus: number, percent_agreement: number | null, cohen_kappa: number | null, gwet_ac1: number | null, pabak: number | null, 
/**
 * Judge says present when the experts do.
 */
sensitivity: Rate, 
/**
 * Judge says absent when the experts do.
 */
specificity: Rate, };

export type TotalsCell = { judge: string, level: Level, 
/**
 * Responses (item level) or sources (system level).
 */
n: number, pearson: number | null, spearman: number | null, kendall_tau_b: number | null, };

export type Rate = { count: number, total: number, estimate: number | null, ci95: [number, number] | null, };

export type IccChoice = "C1" | "A1";

export type CiChoice = "bootstrap" | "f";

export type TableView = { level: Level, comparison: Comparison, icc: IccChoice, ci: CiChoice, };

export type Verdict = "inside" | "below" | "above";

export type TableCell = { icc: number | null, ci95: [number | null, number | null], 
/**
 * The interval shown is the F-based one (asked for, or the only one available).
 */
ci_is_f: boolean, bias: number | null, mse: number | null, n_targets: number, n_pairs: number, status: Precision | null, verdict: Verdict | null, };

export type TableRow = { criterion: string, attribute: string, group: string | null, is_group: boolean, 
/**
 * The experts' band for this criterion ([lowest lower, highest upper] of expert–expert CIs).
 */
expert_band: [number, number] | null, cells: Array<TableCell | null>, };

export type TableColumn = { 
/**
 * The rater under study (judge model id, or expert name).
 */
rater: string, 
/**
 * `experts` or the reference expert's name.
 */
reference: string, label: string, };

export type AgreementTable = { view: TableView, columns: Array<TableColumn>, rows: Array<TableRow>, 
/**
 * The rule that decides each verdict, in words (shown on hover).
 */
verdict_rule: string, };

export type TableFormat = "csv" | "md" | "latex";

export type MoreTargets = { planning_icc: number, current_targets: number, current_width: number | null, desired_width: number, needed_targets: number, more_targets: number, };
