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
