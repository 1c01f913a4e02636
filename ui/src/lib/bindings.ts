// Generated from the Rust IPC types by ts-rs. Do not edit by hand:
// run `CONCORD_BLESS=1 cargo test bindings` after changing a Rust type.

export type ErrorCode = "already_encrypted" | "already_exists" | "answers_without_text" | "assignment" | "assignment_exists" | "bad_gap" | "bad_rule" | "calibration_pending" | "converting" | "damaged" | "database" | "demo" | "empty_adjudicator" | "empty_explanation" | "empty_override" | "empty_reason" | "export" | "folder_missing" | "foreign_schema" | "in_use" | "incomplete" | "internal" | "invalid" | "io" | "judge_batch" | "judge_busy" | "judge_client" | "judge_endpoint" | "judge_key" | "judge_key_source" | "judge_rubric" | "judge_runtime" | "judge_settings" | "judge_template" | "lead_passphrase" | "keyring" | "missing_source" | "newer_schema" | "no_location" | "no_rater_session" | "no_study" | "no_such_criterion" | "no_such_item" | "not_a_study" | "not_an_expert" | "not_encrypted" | "not_found" | "not_sqlite" | "nothing_rated" | "off_scale" | "package" | "passphrase_needed" | "passphrase_refused" | "path" | "plan" | "profiles_locked" | "rater_session" | "read_only" | "rubric" | "stored_rule" | "study_missing" | "truncated" | "unexpected_schema_object" | "unknown_criterion" | "unknown_expert" | "unknown_item" | "unreadable" | "already_resolved" | "no_passphrase" | "nothing_to_sign" | "phi_unreviewed" | "signed_rating" | "weak_passphrase" | "wrong_passphrase" | "web_invitation" | "web_locked" | "web_login" | "web_session" | "span";

export type IpcError = { code: ErrorCode, message: string, };

export type StudyStatus = { path: string | null, is_default: boolean, error: IpcError | null, package: PackageIdentity | null, };

export type StudySecurity = { encrypted: boolean, 
/**
 * The study waits behind the unlock screen.
 */
locked: boolean, idle_lock_minutes: number, 
/**
 * Seconds without input before the window locks (the minutes, unless overridden).
 */
idle_lock_seconds: number, };

export type SecurityOutcome = { note: string | null, };

export type SessionInfo = { 
/**
 * `None` in lead mode.
 */
rater_id: number | null, rater_name: string | null, source: SessionSource | null, 
/**
 * The study is locked to its experts (and its rater sessions outlive a relaunch).
 */
profiles_locked: boolean, 
/**
 * Leaving the session needs the lead passphrase.
 */
leave_needs_passphrase: boolean, 
/**
 * A package's session cannot be left.
 */
can_leave: boolean, 
/**
 * The picker of a locked study, before an expert is chosen.
 */
picking: boolean, };

export type SessionSource = "picked" | "package";

export type PackageIdentity = { package_id: string, 
/**
 * The expert the package was written for.
 */
rater: string, rater_id: number, 
/**
 * Items in the expert's queue (retest repeats included).
 */
items: number, completed: number, };

export type StudyOpened = { path: string, 
/**
 * Set when the file is a rater package: whose it is and how many items it holds.
 */
package: PackageIdentity | null, 
/**
 * The study (or package) is encrypted and waits for its passphrase on the unlock screen.
 */
locked: boolean, 
/**
 * Something the person should know (a judge run that was stopped by the switch).
 */
note: string | null, };

export type AppInfo = { version: string, build: string, version_line: string, backup_folder: string, };

export type BackupList = { folder: string, backups: Array<BackupEntry>, };

export type FilePurpose = "study" | "package" | "rubric" | "dataset" | "sheet" | "backup";

export type MenuLanguage = "en" | "zh";

export type BackupEntry = { path: string, 
/**
 * When it was taken, as ISO-8601 UTC (read from its name).
 */
taken: string, bytes: number, };

export type RecentStudy = { path: string, title: string, opened_at: number, };

export type ReturnedCopy = { 
/**
 * The file to send back: it holds every rating made so far.
 */
path: string, 
/**
 * Earlier "Return ratings" copies beside the package (`<package>-returned.concord`,
 * `<package>-returned-2.concord`, …) other than `path`: older, so not the ones to send.
 */
superseded: Array<string>, };

export type FileRole = { "kind": "study" } | { "kind": "package", identity: PackageIdentity, returned: boolean, } | { "kind": "dataset", format: ImportFormat | null, } | { "kind": "encrypted", lead_study: boolean, } | { "kind": "filled_sheet" } | { "kind": "rubric" } | { "kind": "unknown", reason: string, };

export type StudyOverview = { path: string, title: string, schema_version: number, rubrics: Array<RubricSummary>, conversations: number, responses: number, 
/**
 * Responses the study holds no answer text for (filled by importing the MentalBench-100k file).
 */
responses_without_text: number, sources: Array<SourceCount>, raters: Array<RaterSummary>, ratings: number, 
/**
 * The sample data the study holds (`demo`: the demo study, or one begun from it); absent for
 * a study of one's own (and from the JSON, which then reads as an earlier release's).
 */
sample_data?: string, };

export type RubricSummary = { key: string, name: { [key in string]?: string }, criteria: Array<CriterionSummary>, 
/**
 * The groups of criteria (CSS, ARS) with their names.
 */
groups: Array<Group>, conversations: number, };

export type CriterionSummary = { key: string, label: { [key in string]?: string }, group: string | null, scale: string, };

export type SourceCount = { key: string, name: string, family: string | null, kind: string, responses: number, };

export type RaterSummary = { id: number, name: string, kind: RaterKind, model_id: string | null, family: string | null, ratings: number, responses_rated: number, 
/**
 * Items assigned to the rater (0 for an imported rater nobody has assigned work to).
 */
assigned: number, };

export type RaterKind = "expert" | "judge";

export type RatingOutcome = { "kind": "inserted" } | { "kind": "updated", previous: number | null, } | { "kind": "unchanged" };

export type Scale = { "kind": "likert", min: number, max: number, } | { "kind": "binary" } | { "kind": "preference", ties: boolean, };

export type Anchor = { value: number, label: { [key in string]?: string }, };

export type Group = { id: string, label: { [key in string]?: string }, };

export type Criterion = { id: string, 
/**
 * Names used for this criterion in released files and judge output; the first is canonical.
 */
keys: Array<string>, group: string | null, label: { [key in string]?: string }, description: { [key in string]?: string }, scale: Scale, anchors: Array<Anchor>, };

export type Code = { key: string, label: { [key in string]?: string }, description: { [key in string]?: string }, 
/**
 * Severity levels a span of this code may carry, mildest first; none: spans carry no severity.
 * Left out of the JSON when empty (the rubric's stored form), so optional in the bindings.
 */
severity?: Array<string>, };

export type Total = { label: { [key in string]?: string }, keys: Array<string>, };

export type Scope = "reply" | "session";

export type Rubric = { id: string, version: number, name: { [key in string]?: string }, description: { [key in string]?: string }, groups: Array<Group>, 
/**
 * A declared sum of all criteria (PsyCrisis' 总分), checked against the parts on import.
 */
total: Total | null, 
/**
 * What one item of the rubric is: a reply (the default) or a whole conversation.
 */
scope: Scope, criteria: Array<Criterion>, 
/**
 * The codes a rater may mark spans of a reply with (`[[codes]]`); none when the rubric
 * declares none (a rubric file written before spans existed reads and writes as before).
 */
codes: Array<Code>, };

export type RaterProfile = { id: number, name: string, 
/**
 * Items in the expert's queue, and how many of them are complete.
 */
items: number, completed: number, 
/**
 * First-occasion values the expert has in the study, queued or not (imported ratings).
 */
ratings: number, };

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

export type ItemCriterion = { key: string, label: { [key in string]?: string }, description: { [key in string]?: string }, group: string | null, scale: Scale, anchors: Array<Anchor>, value: number | null, 
/**
 * This rater signed the value off: a change needs a reason.
 */
signed: boolean, 
/**
 * The signed value was changed after the signature (with a reason).
 */
changed_after_signature: boolean, };

export type Role = "user" | "assistant" | "system";

export type ShownTurn = { turn: number, role: Role, text: string, };

export type RatingItem = { item: number, total: number, completed: number, context: string, 
/**
 * Everything said before the reply being rated, in order (for a session item, the whole
 * conversation): a single-turn conversation's is its user's message. Never names a source.
 */
history: Array<ShownTurn>, 
/**
 * The reply's turn number (`None` for a session item).
 */
turn: number | null, 
/**
 * Whether the item is a reply or a whole conversation.
 */
scope: Scope, 
/**
 * The answer's text; `None` when the study holds only ratings for it (and for a session
 * item, which rates the history itself).
 */
answer: string | null, language: string | null, rubric_name: { [key in string]?: string }, groups: Array<Group>, criteria: Array<ItemCriterion>, rationale: string | null, flagged: boolean, 
/**
 * The reason the expert gave when flagging the item (their latest open flag).
 */
flag_reason: string | null, };

export type LeftItem = { 
/**
 * Its number in the queue (1-based).
 */
item: number, 
/**
 * Not every criterion has a value yet (skipped, or left half-rated).
 */
unfinished: boolean, 
/**
 * The reason of the rater's open flag on it, when flagged.
 */
flag_reason: string | null, };

export type ItemProgress = { item: number, missing: number, complete: boolean, completed: number, total: number, outcome: RatingOutcome, };

export type ShownChoice = "A" | "B" | "Tie";

export type PairCriterion = { key: string, label: { [key in string]?: string }, description: { [key in string]?: string }, group: string | null, 
/**
 * Whether "neither" (a tie) is an answer.
 */
ties: boolean, 
/**
 * The rater's choice in the terms they see (A the answer shown first).
 */
choice: ShownChoice | null, };

export type PairItem = { 
/**
 * Its number in the rater's pair queue (1-based).
 */
item: number, total: number, completed: number, pair_id: number, context: string, 
/**
 * The answer shown first (A).
 */
first: string, 
/**
 * The answer shown second (B).
 */
second: string, language: string | null, rubric_name: { [key in string]?: string }, groups: Array<Group>, criteria: Array<PairCriterion>, 
/**
 * The rater's rationale for their choices on this pair.
 */
rationale: string | null, 
/**
 * The reason of the rater's latest flag on this pair, if they flagged it.
 */
flag_reason: string | null, };

export type PairQueue = { rater_id: number, rubric: string, total: number, completed: number, 
/**
 * The first pair not yet finished (1-based); 0 when the queue is empty, `total` + 1 when
 * every pair is finished.
 */
resume_item: number, };

export type DesignMethod = { "method": "all" } | { "method": "per_conversation", "per_conversation": number } | { "method": "balanced", "per_conversation": number };

export type DesignReport = { rubric: string, 
/**
 * The rubric whose conversations' answers are compared.
 */
of: string, method: DesignMethod, seed: number, conversations: number, pairs: number, 
/**
 * Answers left out because they have no text.
 */
answers_without_text: number, 
/**
 * How often each two sources meet, fewest and most (over source pairs that meet at all).
 */
source_pair_meetings: [number, number], };

export type PairAssignmentReport = { rubric: string, k: number, seed: number, pairs: number, 
/**
 * Expert name → pairs given, in name order.
 */
experts: Array<[string, number]>, 
/**
 * Of all (expert, pair) items, how many show the left answer first.
 */
left_first: number, };

export type PairStatus = { rubric: string, method: string, per_conversation: number | null, seed: number, conversations: number, pairs: number, criteria: Array<string>, raters: Array<RaterPairProgress>, };

export type RaterPairProgress = { rater: string, 
/**
 * `expert` or `judge`.
 */
kind: string, 
/**
 * Pairs assigned (experts) or asked (judges).
 */
pairs: number, 
/**
 * Pairs with a verdict on every criterion (in at least one order).
 */
done: number, 
/**
 * Verdicts given (a judge asked both orders gives two per pair and criterion).
 */
verdicts: number, };

export type PairProgress = { item: number, 
/**
 * Criteria still without a choice.
 */
missing: number, complete: boolean, completed: number, total: number, };

export type TieHandling = "davidson" | "split";

export type PreferenceAgreement = { 
/**
 * Paired verdicts.
 */
n: number, 
/**
 * Verdicts that agree.
 */
agreements: number, 
/**
 * agreements / n.
 */
percent: number | null, 
/**
 * Wilson score interval of the percent agreement.
 */
percent_ci: [number | null, number | null], 
/**
 * Cohen's κ over the categories left, right, tie; `None` when chance agreement is 1.
 */
kappa: number | null, 
/**
 * Asymptotic standard error of κ (Fleiss, Cohen & Everitt 1969).
 */
kappa_se: number | null, 
/**
 * κ ± z·SE.
 */
kappa_ci: [number | null, number | null], };

export type PositionBias = { 
/**
 * Decided verdicts (ties left out).
 */
decided: number, 
/**
 * Of those, won by the answer shown first.
 */
first_wins: number, 
/**
 * first_wins / decided.
 */
p_first: number | null, 
/**
 * Exact Clopper–Pearson interval.
 */
ci: [number | null, number | null], 
/**
 * Two-sided exact binomial test of P(first wins) = ½.
 */
p_value: number | null, };

export type PositionConsistency = { 
/**
 * Pairs asked in both orders.
 */
pairs: number, 
/**
 * Pairs with the same verdict both times.
 */
consistent: number, 
/**
 * consistent / pairs.
 */
share: number | null, 
/**
 * Wilson score interval of the share.
 */
ci: [number | null, number | null], };

export type RankCorrelation = { 
/**
 * Items both scorings define.
 */
n: number, 
/**
 * Spearman's ρ with average ranks for ties.
 */
spearman: number | null, 
/**
 * Kendall's τ-b.
 */
kendall_tau_b: number | null, };

export type BootstrapOptions = { 
/**
 * Number of resamples.
 */
resamples: number, 
/**
 * Confidence level (0.95 gives percentiles 2.5 and 97.5).
 */
level: number, 
/**
 * Drop replicates for which the statistic is undefined (otherwise any undefined replicate
 * makes the interval undefined).
 */
drop_undefined: boolean, 
/**
 * Drop replicates outside this closed range (e.g. `Some((0.0, 1.0))`).
 */
keep_range: [number, number] | null, };

export type PairwiseOptions = { 
/**
 * The pairwise rubric (the study's only one with pairs when `None`); a rubric rating one
 * answer at a time names its shipped pairwise form (`mentalbench` → `mentalbench-pairs`).
 */
rubric: string | null, ties: TieHandling, bootstrap: BootstrapOptions, seed: number, level: number, };

export type SourceRow = { source: string, name: string, 
/**
 * Bradley–Terry log-strength, centred to mean 0 over the compared sources.
 */
strength: number | null, ci_low: number | null, ci_high: number | null, rank: number | null, 
/**
 * Wins plus half the ties.
 */
wins: number, comparisons: number, win_rate: number | null, };

export type GroupLeaderboard = { 
/**
 * `experts` (pooled) or the judge's name.
 */
rater: string, 
/**
 * `experts` or `judge`.
 */
kind: string, criterion: string, verdicts: number, ties: TieHandling, tie_parameter: number | null, resamples_kept: number, resamples: number, 
/**
 * The sources by strength, strongest first; empty when no fit exists.
 */
sources: Array<SourceRow>, 
/**
 * Why there is no fit (e.g. a source that never lost), when there is none.
 */
unavailable: string | null, };

export type PreferenceRow = { criterion: string, 
/**
 * `experts` (expert with expert) or the judge's name (judge with each expert).
 */
between: string, agreement: PreferenceAgreement | null, };

export type PositionRow = { judge: string, criterion: string, consistency: PositionConsistency, bias: PositionBias, };

export type RankRow = { rater: string, criterion: string, correlation: RankCorrelation, };

export type PairwiseReport = { rubric: string, 
/**
 * The rubric whose 1–5 ratings the rank correlations read, when the study has some.
 */
compared_with: string | null, pairs: number, verdicts: number, options: PairwiseOptions, leaderboards: Array<GroupLeaderboard>, agreement: Array<PreferenceRow>, position: Array<PositionRow>, rank_correlation: Array<RankRow>, };

export type SignoffState = { has_passphrase: boolean, meaning: string, signatures: Array<SignatureStatus>, 
/**
 * The ratings signing now would cover: the expert's values on their assigned items.
 */
to_sign: number, 
/**
 * The expert's assigned items, and those not finished (their missing values stay unsigned;
 * values added later need a new signature).
 */
items: number, unfinished_items: number, };

export type SignatureStatus = { 
/**
 * The signed ratings still hash to what was signed.
 */
matches: boolean, 
/**
 * Signed ratings changed (or removed) after signing.
 */
changed_after_signature: number, id: number, rater_id: number, signer: string, meaning: string, scope: string, signed_at: number, ratings: number, ratings_sha256: string, };

export type SignatureRecord = { id: number, rater_id: number, signer: string, meaning: string, scope: string, signed_at: number, ratings: number, ratings_sha256: string, };

export type SignatureState = "unsigned" | "signed" | "changed_after_signature";

export type ImportFormat = "mentalalign" | "mentalbench" | "psycrisis" | "long_items" | "long_ratings" | "conversations";

export type ImportRequest = { format: ImportFormat, 
/**
 * Absolute path of the file (or, for MentalAlign, the folder).
 */
path: string, 
/**
 * Out-of-scale whole numbers (MentalAlign's 0s and 6s): keep as written or store as missing.
 */
out_of_scale: OutOfScale, 
/**
 * Rubric of the long-form and conversations files (default MentalBench).
 */
rubric: string | null, 
/**
 * PsyCrisis: key of the source that wrote the answers (required there).
 */
source: string | null, 
/**
 * MentalAlign / PsyCrisis: the judge model id of the file's judge output.
 */
judge: string | null, 
/**
 * PsyCrisis: the expert whose dimension columns the file holds.
 */
expert: string | null, 
/**
 * Long-form ratings: raters not yet in the study are LLM judges instead of experts.
 */
judges: boolean, };

export type ImportOutcome = { report: ImportReport | null, issues: Array<Issue>, 
/**
 * The PHI scan of the texts the import brought in (when it happened).
 */
phi: PhiScanSummary | null, 
/**
 * Answers the study holds no text for after the import (0 when it was refused).
 */
answers_without_text: number, };

export type ImportReport = { options: ImportOptions, files: Array<FileReport>, };

export type ImportProgress = { done: number, total: number, rows: number, };

export type ImportOptions = { out_of_scale: OutOfScale, replies: ReplyParsing, 
/**
 * Seed of the queue orders of raters the import creates (randomness is passed in).
 */
seed: number, };

export type OutOfScale = "keep" | "missing";

export type ReplyParsing = "strict" | "lenient";

export type FileReport = { file: string, sheet: string | null, 
/**
 * `mentalalign`, `mentalbench`, `psycrisis`, `long-items`, `long-ratings`, `conversations`.
 */
format: string, sha256: string, status: FileStatus, 
/**
 * The rater whose ratings the file holds, when it holds one rater's.
 */
rater: string | null, conversations_added: number, responses_added: number, texts_filled: number, ratings_inserted: number, ratings_updated: number, judgements: number, warnings: Array<Issue>, quality: QualityReport, 
/**
 * What an import of conversations brought in (only for that format; `null` for the others).
 */
conversation_counts: ConversationCounts | null, };

export type FileStatus = "imported" | "already_imported";

export type ConversationCounts = { conversations: number, 
/**
 * Messages, each candidate counted as one.
 */
turns: number, reply_items: number, session_items: number, 
/**
 * Distinct sources named (`unnamed` counted when an assistant turn names none).
 */
sources: number, };

export type QualityReport = { 
/**
 * Out-of-scale values by value as written: `{"0": 231, "6": 8}`.
 */
out_of_scale: { [key in string]?: number }, null_values: number, empty_values: number, empty_cells: number, missing_attributes: number, unparsed_replies: number, total_mismatches: number, missing_dimensions: number, context_mismatches: number, items: Array<QualityItem>, };

export type QualityItem = { kind: QualityKind, at: Location, 
/**
 * The criterion concerned, when the finding is about one attribute of a cell.
 */
criterion: string | null, 
/**
 * The value as written (`0`, `6`, `null`, an excerpt of a reply…).
 */
value: string | null, 
/**
 * What the import did: `kept`, `missing`, `skipped`, `reported`.
 */
action: string, };

export type QualityKind = "out_of_scale" | "null_value" | "empty_value" | "empty_cell" | "missing_attribute" | "unparsed_reply" | "total_mismatch" | "missing_dimension" | "context_mismatch";

export type Location = { file: string, sheet: string | null, row: number | null, column: string | null, };

export type Issue = { severity: Severity, 
/**
 * A stable machine-readable code (`missing_column`, `not_json`, `bad_score`, …).
 */
code: string, 
/**
 * Boxed so results carrying an issue stay small.
 */
at: Location, message: string, };

export type Severity = "error" | "warning";

export type SheetOutcome = { report: SheetImportReport | null, errors: Array<CellError>, };

export type SheetImportReport = { rater: string, rows: number, inserted: number, updated: number, unchanged: number, 
/**
 * Choices on pairs new to the study, and changed in it.
 */
pairs_inserted: number, pairs_updated: number, 
/**
 * Spans of the spans sheets new to the study, and already there.
 */
spans_added: number, spans_unchanged: number, 
/**
 * Quotes not found in their item's answer (kept unlocated, never guessed).
 */
spans_unlocated: Array<SheetQuoteUnlocated>, };

export type SheetQuoteUnlocated = { sheet: string, 
/**
 * The row as the spreadsheet shows it.
 */
row: number, item: number, code: string, quote: string, };

export type CellError = { file: string, sheet: string | null, 
/**
 * The row as the user sees it (1-based, header row included).
 */
row: number | null, column: string | null, value: string | null, message: string, };

export type RatingsFormat = "long_csv" | "wide_csv" | "xlsx";

export type WrittenFile = { path: string, 
/**
 * Ratings in the file (rating exports) or items in it (rating sheets).
 */
count: number, 
/**
 * Set when the study is encrypted: the file written is not (see
 * [`crate::outputs::export::plain_copy_warning`]).
 */
warning: string | null, };

export type MethodsFiles = { dir: string, files: Array<string>, 
/**
 * Set when the study is encrypted: the files written are not.
 */
warning: string | null, };

export type PackageWritten = { path: string, summary: PackageSummary, };

export type PackageSummary = { package_id: string, rater: string, file: string, conversations: number, responses: number, assignments: number, ratings: number, retest_ratings: number, sources: number, 
/**
 * Pairs of answers to compare given to the expert.
 */
pairs: number, 
/**
 * The expert's verdicts on them already made.
 */
pair_verdicts: number, };

export type MergeReport = { package_id: string, rater: string, inserted: number, updated: number, unchanged: number, history_added: number, retest_inserted: number, retest_updated: number, progress_updated: number, flags_added: number, 
/**
 * Signatures the expert made in the package, recorded in the study.
 */
signatures_added: number, conflicts: Array<MergeConflict>, 
/**
 * Of the merged revisions (`updated`, `retest_updated`), those that revise a value an
 * earlier return of this package merged.
 */
revised_after_return: number, 
/**
 * Of the merged revisions, those that change a rating back to its value at issue (value and
 * raw value; the rationale may differ).
 */
changed_back: number, 
/**
 * Verdicts on pairs new to the study, and changed in it.
 */
pairs_inserted: number, pairs_updated: number, 
/**
 * Pairs whose progress (first shown, finished, time, rationale) came back.
 */
pair_progress_updated: number, pair_flags_added: number, pair_conflicts: Array<PairMergeConflict>, 
/**
 * The expert's evidence spans: added, changed, removed, already present, in conflict.
 */
spans: SpanMergeCounts, };

export type MergeConflict = { 
/**
 * The conversation's external id.
 */
conversation: string, 
/**
 * The response's source key (the study's name, not the package's code).
 */
source: string, 
/**
 * The reply's turn in a transcript, where one source answers at several turns (`None`: a
 * single-turn answer or a session item).
 */
turn: number | null, criterion: string, occasion: Occasion, base: number | null, 
/**
 * The value the study keeps.
 */
study: number | null, 
/**
 * The package's value, not merged.
 */
package: number | null, study_rationale: string | null, package_rationale: string | null, };

export type PairMergeConflict = { conversation: string, 
/**
 * The study's source keys of the pair's left and right answers.
 */
left: string, right: string, criterion: string, base: Winner | null, 
/**
 * The verdict the study keeps.
 */
study: Winner | null, 
/**
 * The package's verdict, not merged.
 */
package: Winner | null, };

export type SpanMergeCounts = { added: number, changed: number, removed: number, 
/**
 * Spans the package changed as the study already had them (not stored twice).
 */
already_present: number, conflicts: Array<SpanMergeConflict>, };

export type SpanMergeConflict = { 
/**
 * The conversation's external id.
 */
conversation: string, 
/**
 * The reply's source key (the study's name).
 */
source: string, code: string, start: number, end: number, 
/**
 * Whether the span was there at the base, in the study and in the package.
 */
in_base: boolean, in_study: boolean, in_package: boolean, 
/**
 * Its severity in each (`None` where it is absent or carries none).
 */
base_severity: string | null, study_severity: string | null, package_severity: string | null, };

export type ItemSpans = { item: number, codes: Array<Code>, spans: Array<ShownSpan>, };

export type ShownSpan = { 
/**
 * The code's key.
 */
code: string, 
/**
 * First character (a Unicode scalar value's index in the reply's text).
 */
start: number, 
/**
 * One past the last character.
 */
end: number, severity: string | null, };

export type SpanAt = { code: string, start: number, end: number, };

export type Winner = "left" | "right" | "tie";

export type Occasion = "first" | "retest" | "consensus" | "adjudicated";

export type AssignmentOptions = { 
/**
 * Experts per regular response (the fixed overlap).
 */
k: number, 
/**
 * Seed of every random choice (sample, calibration items, orders, retests).
 */
seed: number, 
/**
 * Conversations to draw; `None` takes every conversation.
 */
sample: number | null, 
/**
 * Only conversations rated with this rubric; `None` takes every rubric.
 */
rubric: string | null, 
/**
 * Stratify the draw by conversation category.
 */
stratify: boolean, 
/**
 * Responses every expert rates (drawn from the sample).
 */
calibration: number, 
/**
 * Test–retest items per expert.
 */
retest: number, 
/**
 * Items shown at least between an item and its retest.
 */
retest_gap: number, 
/**
 * Experts by name; empty means every expert of the study.
 */
experts: Array<string>, 
/**
 * Replace an existing assignment (refused once experts have rated assigned responses).
 */
replace: boolean, 
/**
 * Assign answers the study holds no text for (a MentalAlign-only study), for this reason
 * (recorded with the assignment); without it such answers are refused.
 */
without_text: string | null, };

export type AssignmentSummary = { options: AssignmentOptions, conversations: number, responses: number, calibration_items: number, strata: Array<StratumCount>, experts: Array<ExpertLoad>, 
/**
 * Rows written to the assignment table.
 */
assignments: number, 
/**
 * Drawn answers the study holds no text for (refused unless the options give a reason).
 */
without_text: number, };

export type AssignmentTable = { options: AssignmentOptions | null, sampled_conversations: number, experts: Array<ExpertProgress>, };

export type ExpertProgress = { name: string, assigned: number, 
/**
 * Items whose every criterion has a value.
 */
completed: number, remaining: number, regular: number, calibration: number, retest: number, 
/**
 * Ratings with a value on assigned items.
 */
ratings: number, };

export type ExpertLoad = { name: string, regular: number, calibration: number, retest: number, total: number, };

export type StratumCount = { 
/**
 * The category, `None` for conversations without one.
 */
category: string | null, available: number, drawn: number, };

export type ExpertAdded = { id: number, name: string, 
/**
 * False when an expert of that name was already there.
 */
created: boolean, };

export type RubricAdded = { id: number, key: string, 
/**
 * False when the identical rubric was already there.
 */
created: boolean, };

export type Level = "system" | "item";

export type Comparison = "judge_vs_experts" | "judge_vs_expert" | "expert_vs_expert";

export type Precision = "good" | "moderate" | "poor";

export type CiMethod = "bootstrap" | "f" | "cluster";

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
per_expert: boolean, 
/**
 * Leave out the responses of a judge's own model family (the paper's self-preference
 * exclusion). On by default; off shows what the exclusion changes.
 */
exclude_self_family: boolean, };

export type RaterRef = { name: string, kind: RaterKind, model_id: string | null, family: string | null, 
/**
 * Values present on the responses the report compares (those some expert rated).
 */
ratings: number, };

export type BlandAltman = { bias: number | null, sd_diff: number | null, loa95: [number | null, number | null], };

export type IccFormValue = { 
/**
 * `ICC1`, `ICC2` (= A,1), `ICC3` (= C,1), `ICC1k`, `ICC2k` (= A,k), `ICC3k` (= C,k).
 */
form: string, value: number | null, ci95: [number | null, number | null], };

export type TargetPoint = { source: string, reference: number, rater: number, };

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
 * Headline 95% interval of ICC(C,1): bootstrap at system level, F-based at item level (the
 * conversation-cluster bootstrap for replies of transcripts).
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
lin_ccc: number | null, 
/**
 * All six ICC forms of the same targets (F-based intervals).
 */
icc_forms: Array<IccFormValue>, 
/**
 * The targets themselves at system level (one per source); empty at item level.
 */
points: Array<TargetPoint>, 
/**
 * Conversations the headline interval resampled, when it is the conversation-cluster
 * bootstrap (item level over transcripts); absent otherwise.
 */
n_clusters?: number, };

export type ConversationCoverage = { scope: Scope, 
/**
 * Items some expert rated (the report's responses).
 */
items: number, 
/**
 * The conversations they belong to (the clusters of the cluster bootstrap).
 */
conversations: number, 
/**
 * The turn numbers the items stand at, ascending (empty for a session rubric).
 */
turns: Array<number>, 
/**
 * The level the figures are read at first: item level for a session rubric or when every
 * item is a reply of a transcript, system level when single-turn answers are among them.
 */
headline: Level, };

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
totals: Array<TotalsCell>, 
/**
 * A rubric of conversations: its scope, items, conversations and turns (absent otherwise,
 * so an earlier release's report reads as before).
 */
conversations?: ConversationCoverage, };

export type BinaryCell = { judge: string, criterion: string, attribute: string, 
/**
 * Responses with both a judge value and an expert consensus.
 */
n_items: number, 
/**
 * Responses the experts rated but tied on.
 */
n_no_consensus: number, percent_agreement: number | null, cohen_kappa: number | null, gwet_ac1: number | null, 
/**
 * Gwet's 95% interval of AC1.
 */
gwet_ac1_ci95: [number, number] | null, pabak: number | null, 
/**
 * Positive specific agreement (on "present") with its bootstrap 95% interval.
 */
positive_agreement: number | null, positive_agreement_ci95: [number, number] | null, 
/**
 * Negative specific agreement (on "absent") with its bootstrap 95% interval.
 */
negative_agreement: number | null, negative_agreement_ci95: [number, number] | null, 
/**
 * Krippendorff's α (nominal) with its bootstrap 95% interval.
 */
krippendorff_alpha: number | null, krippendorff_alpha_ci95: [number, number] | null, 
/**
 * The experts among themselves (no judge; sensitivity and specificity do not apply).
 */
experts: boolean, 
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

export type IccChoice = "C1" | "A1" | "Icc1" | "Icc1k" | "Ak" | "Ck";

export type CiChoice = "bootstrap" | "f";

export type TableView = { level: Level, comparison: Comparison, icc: IccChoice, ci: CiChoice, };

export type Verdict = "inside" | "below" | "above";

export type TableCell = { icc: number | null, ci95: [number | null, number | null], 
/**
 * The interval shown is the F-based one (asked for, or the only one available).
 */
ci_is_f: boolean, 
/**
 * The interval shown is the conversation-cluster bootstrap (item level over transcripts).
 */
ci_is_cluster: boolean, bias: number | null, mse: number | null, n_targets: number, n_pairs: number, status: Precision | null, verdict: Verdict | null, };

export type BandMethod = "reml" | "expert_pairs";

export type TableRow = { criterion: string, attribute: string, group: string | null, is_group: boolean, 
/**
 * The experts' band for this criterion (see `band_method`).
 */
expert_band: [number, number] | null, 
/**
 * How the band was found.
 */
band_method: BandMethod | null, 
/**
 * The band cannot place a judge (`verdict::band_uninformative`: 0.9 or more wide, or resting on
 * fewer than three responses rated by two or more experts): its cells carry no verdict and the
 * panel warns instead.
 */
band_uninformative: boolean, 
/**
 * Responses rated by two or more experts, as the band was estimated from (the most any
 * two experts share, for a band spanning their pairs' intervals).
 */
band_overlap: number | null, cells: Array<TableCell | null>, };

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

export type VerdictOptions = { 
/**
 * ε of the alt-test (0.2 for expert annotators).
 */
epsilon: number, 
/**
 * q of the Benjamini–Yekutieli procedure, and 1 − the confidence level of the intervals.
 */
alpha: number, };

export type ExpertBaseline = { criterion: string, attribute: string, 
/**
 * How it was computed, in words (model, design, what was used).
 */
method: string, n_responses: number, n_experts: number, n_ratings: number, 
/**
 * Responses rated by two or more experts (the overlap the band is estimated from).
 */
n_overlap: number, icc_a1: number | null, ci95_a1: [number | null, number | null], icc_c1: number | null, ci95_c1: [number | null, number | null], 
/**
 * Whether every expert rated every response (`None` when no baseline was computed).
 */
complete_design: boolean | null, 
/**
 * Variance components estimated at zero.
 */
boundary: Array<ZeroVariance>, 
/**
 * Why no baseline could be computed, when none was.
 */
note: string | null, };

export type ZeroVariance = "response" | "expert";

export type AltTestFinding = { winning_rate: number, advantage_probability: number, passed: boolean, 
/**
 * Experts tested (left out in turn).
 */
n_experts: number, 
/**
 * `accuracy` or `neg_rmse`.
 */
metric: string, };

export type Finding = { 
/**
 * `true` supports replacement, `false` argues against, `None` not computable.
 */
ok: boolean | null, 
/**
 * The result in words ("ω = 0.80, ρ = 0.91: passed").
 */
summary: string, rule: string, citation: string, 
/**
 * What `summary` and `rule` are written from.
 */
facts: FindingFacts, };

export type FindingFacts = { "kind": "alt_test", epsilon: number, alpha: number, metric: string, result: AltTestFinding | null, not_computed: NotComputed | null, } | { "kind": "icc_band", icc: number | null, ci95: [number | null, number | null], pairs: number, band: [number, number] | null, verdict: Verdict | null, 
/**
 * The band cannot place the judge ([`band_uninformative`]): no verdict.
 */
band_uninformative: boolean, 
/**
 * Responses rated by two or more experts.
 */
overlap: number, } | { "kind": "ppi_bias", judge_mean: number | null, ppi_mean: number | null, ci95: [number | null, number | null], lambda: number | null, n_labeled: number, n_unlabeled: number, 
/**
 * Judge-only mean − PPI++ mean.
 */
bias: number | null, 
/**
 * Whether the judge-only mean lies outside the PPI++ interval (`None`: not computed).
 */
detected: boolean | null, };

export type NotComputed = { "reason": "too_few_experts", experts: number, } | { "reason": "too_few_items", min: number, most: number, } | { "reason": "other", message: string, };

export type VerdictCard = { 
/**
 * The judge's model id (or name).
 */
judge: string, criterion: string, attribute: string, 
/**
 * `true` only when every finding supports replacement.
 */
can_replace: boolean, alt_test: AltTestFinding | null, alt_test_finding: Finding, 
/**
 * ICC(A,1) of (expert, judge) pairs and its 95% CI.
 */
icc_a1: number | null, icc_ci95: [number | null, number | null], band: [number, number] | null, band_verdict: Verdict | null, icc_finding: Finding, 
/**
 * Judge-only mean minus PPI++ mean over all the judge's responses.
 */
ppi_bias: number | null, ppi_finding: Finding, };

export type PpiMissing = "no_expert_rated" | "no_judge_only";

export type LeaderboardRow = { judge: string, criterion: string, attribute: string, 
/**
 * The rated model (source) name.
 */
source: string, n_judged: number, n_expert: number, judge_mean: number | null, judge_ci95: [number | null, number | null], ppi_mean: number | null, ppi_ci95: [number | null, number | null], ppi_lambda: number | null, 
/**
 * Why there is no PPI++ mean, when there is none.
 */
ppi_missing: PpiMissing | null, expert_mean: number | null, expert_ci95: [number | null, number | null], };

export type VerdictReport = { options: VerdictOptions, baselines: Array<ExpertBaseline>, cards: Array<VerdictCard>, leaderboard: Array<LeaderboardRow>, };

export type RepetitionAggregate = "median" | "mean" | "mode";

export type ReliabilityOptions = { 
/**
 * Rubric key; the study's only rubric with judge runs when `None`.
 */
rubric: string | null, 
/**
 * The aggregate of repetitions; the study's when `None`.
 */
aggregate: RepetitionAggregate | null, 
/**
 * Seed of the α bootstrap.
 */
seed: number, 
/**
 * Bootstrap resamples.
 */
resamples: number, 
/**
 * Equal-width bins of the reliability diagram.
 */
bins: number, 
/**
 * Source key → model family, overriding the study's source families.
 */
families: { [key in string]?: string }, 
/**
 * The reliability a judge's aggregate should reach (the repetitions it needs are reported).
 */
target_reliability: number, };

export type SelfConsistency = { 
/**
 * Responses with at least two repetitions.
 */
n_responses: number, 
/**
 * `interval` or `nominal`.
 */
alpha_metric: string, 
/**
 * Krippendorff's α across repetitions.
 */
alpha: number | null, 
/**
 * Percentile bootstrap 95% interval of α over responses.
 */
alpha_ci95: [number | null, number | null], 
/**
 * Share of agreeing repetition pairs, averaged over responses (Fleiss' P̄).
 */
exact_agreement: number | null, 
/**
 * Mean over responses of the sample SD of their repetitions.
 */
mean_within_sd: number | null, };

export type RepetitionsNeededRow = { 
/**
 * Repetitions aggregated (1…K).
 */
k: number, 
/**
 * Responses in the comparison (the same for every k).
 */
n_responses: number, 
/**
 * Observed judge–expert ICC(A,1) of the aggregate of repetitions 1…k.
 */
icc_a1: number | null, 
/**
 * Its McGraw & Wong 95% interval.
 */
icc_a1_ci95: [number | null, number | null], 
/**
 * Spearman–Brown reliability of a k-aggregate, ρₖ = kρ₁ / (1 + (k − 1)ρ₁).
 */
predicted_reliability: number | null, 
/**
 * Predicted judge–expert ICC(A,1): ICC₁ · √(ρₖ / ρ₁).
 */
predicted_icc_a1: number | null, };

export type RepetitionsNeeded = { 
/**
 * ρ₁: the one-way ICC(1,1) of the judge's K repetitions on the complete responses.
 */
single_repetition_reliability: number | null, 
/**
 * One row per k = 1…K.
 */
rows: Array<RepetitionsNeededRow>, };

export type CalibrationBin = { 
/**
 * Lower edge (inclusive).
 */
lower: number, 
/**
 * Upper edge (exclusive, except 1 for the last bin).
 */
upper: number, 
/**
 * Predictions in the bin.
 */
n: number, 
/**
 * Their mean predicted probability (`None` when empty).
 */
mean_predicted: number | null, 
/**
 * The share of them the experts' majority marked present.
 */
observed_rate: number | null, };

export type BinaryCalibration = { 
/**
 * Pairs (prediction, expert majority) used.
 */
n: number, 
/**
 * Every bin, empty ones included, in order.
 */
bins: Array<CalibrationBin>, 
/**
 * Expected calibration error over equal-width bins.
 */
ece: number | null, 
/**
 * Brier score.
 */
brier: number | null, };

export type IntervalEstimate = { 
/**
 * The estimate (`None` when undefined).
 */
estimate: number | null, 
/**
 * 95% interval.
 */
ci95: [number | null, number | null], 
/**
 * Observations used (for a difference: both groups together).
 */
n: number, 
/**
 * How it was computed, in words.
 */
rule: string, };

export type BandPoint = { x: number, 
/**
 * The fitted mean a + b·x.
 */
fitted: number, 
/**
 * Its 95% confidence interval.
 */
lower: number, upper: number, };

export type FittedLine = { intercept: number, slope: number, 
/**
 * Pairs used (both values finite).
 */
n: number, 
/**
 * The band at `points` evenly spaced x from the smallest to the largest observed x.
 */
band: Array<BandPoint>, };

export type Calibration = { 
/**
 * `logprobs` when every expected score came from token log-probabilities,
 * `repetitions` when from repetition frequencies, `mixed` when both.
 */
source: string | null, 
/**
 * Binary criteria: diagram, ECE and Brier against the expert majority.
 */
binary: BinaryCalibration | null, 
/**
 * 1–5 criteria: ICC(A,1) of the expected score against the expert mean …
 */
icc_a1_expected: number | null, 
/**
 * … beside that of the sampled (aggregated) score, on the same responses.
 */
icc_a1_sampled: number | null, 
/**
 * Responses in the 1–5 comparison.
 */
n_responses: number, };

export type QualityBand = { 
/**
 * 1 (the worst-rated third), 2 or 3.
 */
band: number, 
/**
 * The band's expert-mean range [lowest, highest] among its responses.
 */
range: [number | null, number | null], n_responses: number, icc_a1: number | null, icc_a1_ci95: [number | null, number | null], bias: IntervalEstimate, };

export type BiasAudit = { overall: IntervalEstimate, length: IntervalEstimate, self_preference: IntervalEstimate, order: IntervalEstimate, bands: Array<QualityBand>, };

export type TargetRepetitions = { reliability: number, 
/**
 * The smallest k whose Spearman–Brown reliability reaches it (`None` when no k does or ρ₁
 * is undefined).
 */
repetitions: number | null, };

export type JudgeReliability = { judge: string, model: string | null, family: string | null, criterion: string, 
/**
 * `likert` or `binary`.
 */
scale: string, 
/**
 * The highest repetition number among the judge's done calls on the rubric (K).
 */
repetitions: number, 
/**
 * The aggregate this criterion's repetitions get (a binary criterion's is the mode).
 */
aggregate: RepetitionAggregate, 
/**
 * Responses with a judge score.
 */
n_responses: number, 
/**
 * Responses with a judge score and an expert reference.
 */
n_compared: number, consistency: SelfConsistency, repetitions_needed: RepetitionsNeeded, 
/**
 * The repetitions the target reliability needs.
 */
target: TargetRepetitions, calibration: Calibration, bias: BiasAudit, };

export type LengthPoint = { log_length: number, difference: number, };

export type LengthScatter = { points: Array<LengthPoint>, line: FittedLine | null, };

export type CurvePoint = { k: number, reliability: number, };

export type ReliabilityRow = { figures: JudgeReliability, 
/**
 * ρₖ for k = 1 … max(K, the repetitions the target needs, up to [`CURVE_MOST`]); empty when
 * ρ₁ is undefined.
 */
curve: Array<CurvePoint>, length: LengthScatter, };

export type SectionState = "shown" | "no_judge_runs" | "imported_scores_only" | "single_repetition";

export type ReliabilitySection = { 
/**
 * The rubric reported on (`None` when the study has no judge runs to choose one by).
 */
rubric: string | null, state: SectionState, target_reliability: number, 
/**
 * Equal-width bins of the reliability diagrams.
 */
bins: number, 
/**
 * Judges by name, criteria in rubric order; empty unless shown.
 */
rows: Array<ReliabilityRow>, 
/**
 * With [`SectionState::ImportedScoresOnly`], the judges holding scores on the rubric that no
 * run gave (as the agreement table names them: model id, else name); empty otherwise.
 */
imported_judges: Array<string>, };

export type ProviderKind = "openai-compatible" | "anthropic";

export type ResponseSelection = { "kind": "all" } | { "kind": "expert-rated" } | { "kind": "sample", n: number, };

export type HistoryDepth = number | "all";

export type Prices = { input_per_million: number, output_per_million: number, };

export type ReplyFormat = "json-scores" | "reasons-then-dict" | "pair-preferences";

export type PromptTemplate = { format: ReplyFormat, system: string | null, user: string, };

export type RunSettings = { provider: ProviderKind, 
/**
 * Up to and including the version segment, e.g. `https://api.openai.com/v1`,
 * `http://localhost:11434/v1`, `https://api.anthropic.com/v1`.
 */
base_url: string, model: string, 
/**
 * The judge rater's name in the study; the model id when not given.
 */
rater_name: string | null, 
/**
 * The judge's model family; guessed from the model id when not given.
 */
family: string | null, 
/**
 * Rubric id; the rubric of the study's conversations when not given.
 */
rubric: string | null, selection: ResponseSelection, 
/**
 * Seed of the sample (and of nothing else that changes what is sent).
 */
seed: number, repetitions: number, temperature: number, top_p: number | null, 
/**
 * The most tokens a reply may have (Anthropic requires it; sent to both).
 */
max_tokens: number, 
/**
 * The prompt; the rubric's default template when not given.
 */
prompt: PromptTemplate | null, 
/**
 * Send through the provider's batch API instead of one request per call.
 */
batch: boolean, prices: Prices, 
/**
 * Ask an OpenAI-compatible provider for the reply tokens' log-probabilities (`logprobs`,
 * `top_logprobs`), from which each criterion's expected score Σ p·s is stored beside the
 * sampled one. Ignored by Anthropic, which does not return them.
 */
logprobs: boolean, 
/**
 * List the criteria in a seeded random order per call (recorded per call), so the bias audit
 * can compare criteria asked early with those asked late. Needs the rubric's default prompt.
 */
shuffle_criteria: boolean, 
/**
 * Ask for a schema-constrained reply (`judge::structured`): an OpenAI-compatible
 * `response_format` with a JSON schema (vLLM accepts it), an Anthropic forced tool.
 */
structured: boolean, 
/**
 * A pairwise run asks every pair twice, once each way round (the position-bias check);
 * otherwise each pair once, the side shown first drawn per pair from the seed.
 */
both_orders: boolean, 
/**
 * How many turns before a reply the judge sees (the last 10 unless told; a run of an
 * earlier release, whose items were single-turn, reads as the default).
 */
history: HistoryDepth, 
/**
 * Ask the judge to quote the reply's words that show each of the rubric's span codes
 * (`judge::spans`); needs a reply rubric that declares codes.
 */
spans: boolean, };

export type CostEstimate = { calls: number, input_tokens: number, output_tokens: number, cost_usd: number, 
/**
 * How the tokens were estimated.
 */
method: string, };

export type RunPreview = { 
/**
 * The earlier run these settings resume, if any.
 */
existing_run: number | null, rubric: string, responses: number, 
/**
 * Selected responses that have no text and so cannot be judged (left out).
 */
responses_without_text: number, calls: number, settings_sha256: string, prompt_sha256: string, 
/**
 * The estimate for the whole run (a resumed run sends only what is left).
 */
estimate: CostEstimate, };

export type RunStatus = { id: number, rater: string, provider: string, base_url: string, model: string, rubric: string, temperature: number, repetitions: number, batch: boolean, settings_sha256: string, prompt_sha256: string, created_at: number, updated_at: number, total: number, pending: number, in_flight: number, done: number, failed: number, input_tokens: number, output_tokens: number, cost_usd: number, };

export type RunPlan = { run_id: number, 
/**
 * True when the settings matched an earlier run, which is continued.
 */
resumed: boolean, status: RunStatus, };

export type CallFailure = { call_id: number, response_id: number, conversation: string, source: string, repetition: number, attempts: number, 
/**
 * `rate_limited`, `server_error`, `timeout`, `missing_score`, `out_of_range`, …
 */
kind: string, reason: string, http_status: number | null, raw_output: string | null, };

export type Progress = { run_id: number, total: number, done: number, failed: number, 
/**
 * Claimed and not yet answered (requests open, queued or in a provider batch).
 */
in_flight: number, pending: number, input_tokens: number, output_tokens: number, cost_usd: number, elapsed_ms: number, 
/**
 * Calls finished per second in this session.
 */
per_second: number, 
/**
 * Estimated time to finish the calls left, at this session's rate.
 */
eta_ms: number | null, 
/**
 * What the run is doing.
 */
phase: RunPhase, };

export type RunReport = { run_id: number, cancelled: boolean, 
/**
 * Rows a previous session left in flight (or failed, with `retry_failed`) that were queued again.
 */
requeued: number, 
/**
 * Calls finished (done or failed) in this session.
 */
finished_now: number, status: RunStatus, };

export type KeyChoice = { env_var: string | null, keyring_account: string | null, api_key: string | null, save_to_keyring: boolean, };

export type KeyOrigin = { "kind": "none" } | { "kind": "typed", save_to_keyring: string | null, } | { "kind": "keyring", account: string, fallback_env: string | null, } | { "kind": "env", var: string, };

export type Destination = { 
/**
 * The base URL, as the HTTP client reads it.
 */
endpoint: string, 
/**
 * The endpoint is this machine.
 */
loopback: boolean, key: KeyOrigin, };

export type RunPhase = "sending" | "waiting_for_batch" | "finished" | "cancelled";

export type JudgeStart = { settings: RunSettings, concurrency: number, 
/**
 * Also send again the calls that failed in an earlier session of the same run.
 */
retry_failed: boolean, key: KeyChoice, };

export type JudgeStarted = { plan: RunPlan, destination: Destination, note: string | null, };

export type JudgeActivity = { run_id: number | null, progress: Progress | null, };

export type JudgeFinished = { run_id: number, report: RunReport | null, error: IpcError | null, };

export type LikertRule = { "kind": "spread", gap: number, } | { "kind": "tolerance", points: number, };

export type DiscrepancyRule = { likert: LikertRule, 
/**
 * Every criterion of a response an expert flagged needs adjudication too.
 */
flagged: boolean, };

export type DiscrepancyReason = "spread" | "outside_tolerance" | "disagreement" | "flagged";

export type ExpertOpinion = { rater: string, value: number, rationale: string | null, 
/**
 * Whether the expert signed this value off, and whether it changed after the signature.
 */
signature: SignatureState, };

export type DecisionView = { value: number | null, unratable: boolean, reason: string, adjudicator: string, 
/**
 * Milliseconds since the epoch.
 */
decided_at: number, };

export type DiscrepantPair = { 
/**
 * The response's name (its external id, else its number).
 */
item: string, criterion: string, reason: DiscrepancyReason, values: Array<ExpertOpinion>, 
/**
 * The latest decision, when there is one.
 */
decision: DecisionView | null, 
/**
 * Why an expert flagged the response, when one did (the first open flag's reason).
 */
flag_reason: string | null, };

export type AdjudicationStatus = { 
/**
 * Pairs with at least two expert values, or flagged.
 */
pairs: number, unanimous: number, 
/**
 * Decided pairs (those marked unratable included).
 */
adjudicated: number, 
/**
 * Of the adjudicated, those marked unratable.
 */
unratable: number, unresolved: number, };

export type ReviewPair = { pair: DiscrepantPair, context: string, answer: string | null, 
/**
 * The criterion's label in every language the rubric gives.
 */
label: { [key in string]?: string }, min: number, max: number, binary: boolean, };

export type AdjudicationReview = { rule: DiscrepancyRule, status: AdjudicationStatus, pairs: Array<ReviewPair>, };

export type Ruling = { "kind": "value", value: number, } | { "kind": "unratable" };

export type Resolution = { item: string, criterion: string, ruling: Ruling, reason: string, adjudicator: string, };

export type ConsensusAgreement = { report: AgreementReport, table: AgreementTable, status: AdjudicationStatus, };

export type AgreementReference = "experts" | "consensus" | "dawid-skene";

export type LatentRater = { 
/**
 * A judge's model id (or name), or an expert's name.
 */
rater: string, kind: RaterKind, confusion: { [key in string]?: { [key in string]?: number } }, };

export type JudgeErrorCorrelation = { a: string, b: string, 
/**
 * Responses both judges rated.
 */
n: number, phi: number | null, };

export type LatentFit = { 
/**
 * Criterion key.
 */
criterion: string, 
/**
 * Its English display name.
 */
attribute: string, 
/**
 * The labels, in order (the values raters gave, as numbers, then gold-only values).
 */
labels: Array<string>, 
/**
 * Responses with at least one value.
 */
n_items: number, 
/**
 * Of them, held at an adjudicated value.
 */
n_gold: number, 
/**
 * Responses whose latent label differs from the experts' strict majority (ties counted as
 * differing).
 */
n_changed: number, priors: { [key in string]?: number }, raters: Array<LatentRater>, iterations: number, converged: boolean, 
/**
 * For every two judges.
 */
judge_error_correlation: Array<JudgeErrorCorrelation>, 
/**
 * Why no fit exists (then every other figure is empty and the experts' values are kept).
 */
not_computed: string | null, };

export type LatentAgreement = { report: AgreementReport, table: AgreementTable, fits: Array<LatentFit>, };

export type LabelSplit = { 
/**
 * Expert labels for items the experts would call positive.
 */
positive: number, 
/**
 * Expert labels for items the experts would call negative.
 */
negative: number, };

export type PrevalenceReason = "no_items" | "no_calibration" | "no_expert_positive" | "no_expert_negative" | "not_informative" | "too_few_expert_labels" | "other";

export type PrevalenceRow = { 
/**
 * The rubric's key.
 */
rubric: string, 
/**
 * The judge's model id (or name).
 */
judge: string, 
/**
 * Criterion key and its English display name.
 */
criterion: string, attribute: string, 
/**
 * Responses the judge labelled.
 */
n_items: number, 
/**
 * Of them, responses with an expert consensus (the calibration set).
 */
n_calibration: number, 
/**
 * Responses the judge labelled whose experts tied (left out of the calibration set).
 */
n_no_consensus: number, 
/**
 * The judge's positive rate over every response it labelled.
 */
raw_rate: number | null, 
/**
 * P(judge positive | experts positive) on the calibration set.
 */
sensitivity: number | null, 
/**
 * P(judge negative | experts negative) on the calibration set.
 */
specificity: number | null, 
/**
 * The Rogan–Gladen estimate, clipped to [0, 1].
 */
corrected: number | null, 
/**
 * Its interval (Lee et al.), both ends in [0, 1].
 */
ci: [number, number] | null, level: number, 
/**
 * With a calibration budget: how to split it.
 */
allocation: LabelSplit | null, 
/**
 * Why there is no corrected prevalence (or no allocation).
 */
not_computed: string | null, 
/**
 * The kind of reason there is no corrected prevalence.
 */
reason: PrevalenceReason | null, };

export type BudgetGoal = { "kind": "standard_error", "value": number } | { "kind": "budget", "value": number };

export type LabelBudgetQuestion = { 
/**
 * Criterion key.
 */
criterion: string, 
/**
 * The judge as the report names it (model id or name).
 */
judge: string, 
/**
 * The cost of one expert label and of one judge call.
 */
cost_expert: number, cost_judge: number, goal: BudgetGoal, };

export type ExpertOnlyDesign = { n_expert: number, se: number, cost: number, };

export type BudgetDesign = { 
/**
 * Answers labelled by experts (and judged).
 */
n_expert: number, 
/**
 * Answers judged only.
 */
n_judge: number, se: number, cost: number, 
/**
 * The pilot's PPI correlation.
 */
rho: number, expert_only: ExpertOnlyDesign, };

export type LabelBudget = { question: LabelBudgetQuestion, 
/**
 * Pilot pairs the study holds.
 */
n_pilot: number, design: BudgetDesign | null, 
/**
 * Why there is no design.
 */
not_computed: string | null, };

export type GStudyKind = "experts" | "judge";

export type DStudyPoint = { n_rater: number, n_occasion: number, 
/**
 * Eρ², the generalizability coefficient.
 */
relative: number | null, 
/**
 * Φ, the dependability coefficient.
 */
absolute: number | null, };

export type GCoefficientsView = { relative: number | null, absolute: number | null, };

export type StudyGStudy = { kind: GStudyKind, 
/**
 * `experts`, or the judge's model id (or name).
 */
raters: string, 
/**
 * Criterion key and its English display name.
 */
criterion: string, attribute: string, 
/**
 * The facets beside the responses: `rater` (and `occasion`) for experts, `repetition` for a
 * judge; the components and the D-study's `n_rater` use these names.
 */
facets: Array<string>, n_scores: number, n_targets: number, 
/**
 * Experts (or repetitions) seen.
 */
n_raters: number, n_occasions: number, 
/**
 * Variance components by name (`target`, the facets, their interactions, `residual`).
 */
components: { [key in string]?: number }, g: GCoefficientsView | null, 
/**
 * 1–10 raters (× 1–10 occasions with that facet).
 */
d_study: Array<DStudyPoint>, 
/**
 * The design with the fewest scores per response whose relative coefficient reaches
 * [`TARGET_RELIABILITY`], when one of the D-study's does.
 */
reaches_target: DStudyPoint | null, 
/**
 * Components estimated at zero.
 */
boundary: Array<string>, 
/**
 * Why there are no figures.
 */
not_computed: string | null, };

export type GStudySection = { rubric: string, target_reliability: number, studies: Array<StudyGStudy>, };

export type Facet = "category" | "turn";

export type Stratum = { 
/**
 * The facet's value; `None` for the responses without one.
 */
value: string | null, 
/**
 * Responses of the rubric with this value.
 */
n_responses: number, 
/**
 * Of them, the responses some expert rated (those the report compares).
 */
n_compared: number, 
/**
 * By turn: the conversations those responses belong to (the clusters the turn's intervals
 * resample); absent for other facets.
 */
n_conversations?: number, 
/**
 * The report of these responses alone, when there are enough.
 */
report: AgreementReport | null, 
/**
 * Why there is no report.
 */
not_computed: string | null, };

export type StratifiedReport = { facet: Facet, 
/**
 * What judges are compared with (`experts`, `consensus`, `dawid-skene`).
 */
reference: string, strata: Array<Stratum>, };

export type SeverityEstimate = { n: number, mean: number | null, sd: number | null, ci95: [number, number] | null, };

export type DriftDirection = "up" | "down";

export type SessionDrift = { n: number, block: number, first_mean: number | null, last_mean: number | null, difference: number | null, difference_ci95: [number, number] | null, cusum_max: number | null, cusum_p: number | null, alarm: boolean, change_at: number | null, direction: DriftDirection | null, 
/**
 * The standardised CUSUM path, when asked for (for plots).
 */
path: Array<number>, };

export type Retest = { n: number, icc_a1: number | null, icc_ci95: [number, number] | null, kappa: number | null, exact: number | null, within_one: number | null, };

export type StraightLines = { n: number, straight: number, share: number | null, panel_share: number | null, longest_run: number, p_value: number | null, };

export type CriterionQuality = { criterion: string, binary: boolean, 
/**
 * Values the expert entered on this criterion.
 */
n: number, 
/**
 * Mean offset from the other experts over shared items (positive = lenient).
 */
severity: SeverityEstimate, 
/**
 * `lenient`, `severe`, or none.
 */
severity_flag: SeverityFlag | null, 
/**
 * Whether `drift` ran on offsets from the panel (else on raw values).
 */
drift_on_offsets: boolean, drift: SessionDrift, test_retest: Retest, };

export type SeverityFlag = "lenient" | "severe";

export type TimeSummary = { 
/**
 * Items with a recorded time.
 */
n: number, median_seconds: number | null, too_fast: number, share_too_fast: number | null, };

export type QualityFlag = { "kind": "lenient", criterion: string, } | { "kind": "severe", criterion: string, } | { "kind": "drift", criterion: string, direction: DriftDirection, } | { "kind": "too_fast" } | { "kind": "straight_lining" };

export type ExpertQuality = { rater: string, ratings: number, items: number, criteria: Array<CriterionQuality>, time: TimeSummary, straight_lining: StraightLines, flags: Array<QualityFlag>, };

export type RaterQualityReport = { experts: Array<ExpertQuality>, panel_median_seconds: number | null, 
/**
 * Items faster than this are too fast.
 */
too_fast_below_seconds: number, };

export type PassRule = { 
/**
 * A 1–5 answer counts as right within this many points of the key.
 */
likert_tolerance: number, 
/**
 * Smallest share of right 1–5 answers.
 */
likert_min_share: number, 
/**
 * Smallest share of binary answers equal to the key.
 */
binary_min_share: number, };

export type CalibrationState = "not_required" | "in_progress" | "passed" | "failed" | "overridden";

export type CalibrationStatus = { rater: string, state: CalibrationState, 
/**
 * Gold items, and how many the expert has answered.
 */
items: number, answered: number, 
/**
 * Share of 1–5 answers within the tolerance (over answered pairs).
 */
likert_share: number | null, 
/**
 * Share of binary answers on the key.
 */
binary_share: number | null, rule: PassRule, 
/**
 * The lead's override: (lead, reason).
 */
overridden_by: [string, string] | null, 
/**
 * Whether the regular queue is open to this expert.
 */
may_rate: boolean, };

export type CalibrationCriterion = { key: string, label: { [key in string]?: string }, description: { [key in string]?: string }, scale: Scale, anchors: Array<Anchor>, answer: number | null, key_value: number | null, explanation: string | null, 
/**
 * The answer counts as right under the pass rule.
 */
right: boolean | null, };

export type CalibrationItem = { 
/**
 * 1-based number among the gold items.
 */
item: number, total: number, context: string, answer: string | null, criteria: Array<CalibrationCriterion>, answered: boolean, };

export type WebRaterAccess = { rater_id: number, name: string, 
/**
 * Whether the expert has set a web passphrase (and so can log in).
 */
has_login: boolean, last_login: number | null, 
/**
 * When a session of theirs last made a request (noted at most once a minute).
 */
last_seen: number | null, 
/**
 * Whether a session of theirs made a request within the idle time (they are connected).
 */
connected: boolean, 
/**
 * Until when a new guess at their passphrase must wait (their sessions go on).
 */
locked_until: number | null, 
/**
 * Invitations neither used nor expired.
 */
open_invitations: number, 
/**
 * Their queue: items done of all.
 */
completed: number, total: number, };

export type RatingsChanged = { "cause": "rated", progress: ItemProgress, } | { "cause": "import" } | { "cause": "merge" } | { "cause": "sheet" } | { "cause": "judge", progress: Progress | null, } | { "cause": "session_left" } | { "cause": "pair_rated", item: number, };

export type PhiScanSummary = { 
/**
 * Texts scanned.
 */
texts: number, 
/**
 * Open findings in the scanned texts.
 */
found: number, 
/**
 * Open findings in the whole study afterwards.
 */
open: number, 
/**
 * Open findings per class in the whole study.
 */
by_kind: { [key in string]?: number }, };

export type PhiField = "context" | "text" | "turn";

export type PhiStatus = "open" | "kept" | "redacted";

export type PhiFinding = { id: number, kind: string, item: string, field: PhiField, 
/**
 * Character offsets into the text as it was when the finding was made.
 */
start: number, end: number, status: PhiStatus, 
/**
 * The matched text; gone once redacted.
 */
excerpt: string | null, reason: string | null, resolved_by: string | null, };

export type PhiReviewItem = { before: string, matched: string, after: string, id: number, kind: string, item: string, field: PhiField, 
/**
 * Character offsets into the text as it was when the finding was made.
 */
start: number, end: number, status: PhiStatus, 
/**
 * The matched text; gone once redacted.
 */
excerpt: string | null, reason: string | null, resolved_by: string | null, };

export type PhiReview = { open: number, kept: number, redacted: number, items: Array<PhiReviewItem>, };

export type PhiDecision = { "kind": "redact" } | { "kind": "keep", reason: string, };

export type Interval = { lower: number | null, upper: number | null, };

export type PairF1 = { a: string, b: string, 
/**
 * `expert` or `judge`.
 */
a_kind: string, b_kind: string, f1_exact: number | null, f1_overlap: number | null, f1_exact_ci: Interval | null, f1_overlap_ci: Interval | null, 
/**
 * Replies both cover among those compared.
 */
replies: number, a_spans: number, b_spans: number, };

export type Range = { min: number | null, max: number | null, };

export type JudgeAgainstExperts = { judge: string, 
/**
 * The judge's pair with each expert (`a` the judge, `b` the expert).
 */
experts: Array<PairF1>, expert_range_exact: Range, expert_range_overlap: Range, };

export type CodeAgreement = { code: string, 
/**
 * Spans of this code the compared raters marked (located).
 */
spans: number, alpha_u: number | null, alpha_u_ci: Interval | null, pairs: Array<PairF1>, judges: Array<JudgeAgainstExperts>, };

export type SpanRater = { name: string, kind: string, 
/**
 * Located spans on the rubric's replies.
 */
spans: number, 
/**
 * Judges' quotes not located in their reply (left out of every figure).
 */
unlocated: number, 
/**
 * Replies the rater covers (rated or marked).
 */
replies_covered: number, };

export type SpanAgreementReport = { rubric: string, codes: Array<CodeAgreement>, overall: CodeAgreement, raters: Array<SpanRater>, 
/**
 * Replies some rater marked (the bootstrap's units).
 */
replies_marked: number, 
/**
 * Replies and characters of uα's continuum.
 */
continuum_replies: number, continuum_characters: number, resamples: number, seed: number, };

export type UnlocatedSpan = { response_id: number, conversation_id: string, 
/**
 * The reply's turn (2 for an earlier release's single-turn answer).
 */
turn: number, source: string, rater: string, code: string, quote: string, };

export type SpanReplyEntry = { response_id: number, conversation_id: string, turn: number, source: string, 
/**
 * Located spans on the reply, every rater's.
 */
located: number, 
/**
 * Quotes kept unlocated.
 */
unlocated: number, 
/**
 * Raters with a span (located or not) on the reply.
 */
raters: number, };

export type SpanPanel = { rubric: string, 
/**
 * Whether the rubric declares codes and rates replies (a session or pairwise rubric, or one
 * without `[[codes]]`, has no spans).
 */
has_codes: boolean, 
/**
 * The rubric's codes, with their labels and descriptions in every language.
 */
codes: Array<Code>, 
/**
 * The report, as `concord agreement --spans --json` prints it; `None` while no rater has a
 * located span on the rubric's replies.
 */
report: SpanAgreementReport | null, 
/**
 * Judges' quotes that could not be located, by conversation, turn, source and rater.
 */
unlocated: Array<UnlocatedSpan>, 
/**
 * The replies that carry spans, in the report's order (conversation id, turn, source).
 */
replies: Array<SpanReplyEntry>, };

export type TrackSpan = { code: string, 
/**
 * `[start, end)` in characters of the reply.
 */
start: number, end: number, severity: string | null, 
/**
 * The characters the span covers.
 */
text: string, };

export type TrackSegment = { text: string, 
/**
 * The rater's spans (indices into the row's `spans`) covering the stretch.
 */
spans: Array<number>, 
/**
 * Those of them that start here.
 */
starts: Array<number>, };

export type UnplacedQuote = { code: string, quote: string, };

export type RaterTrack = { rater: string, 
/**
 * `expert` or `judge`.
 */
kind: string, 
/**
 * Located spans in order of start, end and code.
 */
spans: Array<TrackSpan>, 
/**
 * The whole reply, cut at the spans' boundaries.
 */
segments: Array<TrackSegment>, unlocated: Array<UnplacedQuote>, };

export type SpanReplyView = { response_id: number, conversation_id: string, turn: number, source: string, text: string, 
/**
 * Experts first, then judges, each by name.
 */
raters: Array<RaterTrack>, };
