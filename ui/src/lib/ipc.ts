// The one module that talks to the Rust side. Every command the UI uses is a typed function here;
// components never call `invoke` themselves. Errors arrive as the shell's `{code, message}` shape.
// Every call goes through `call`, whose command name is one of `COMMANDS` (commands.ts); the names
// and argument keys are checked against the shell's sources by commands.test.ts.
import { invoke } from "@tauri-apps/api/core";
import type { Command } from "./commands";
import { listen } from "@tauri-apps/api/event";
import type {
  AgreementOptions,
  AgreementReport,
  AgreementTable,
  ErrorCode,
  VerdictOptions,
  VerdictReport,
  IpcError,
  JudgeFinished,
  ImportProgress,
  LeftItem,
  MethodsFiles,
  PairItem,
  PairwiseReport,
  PairStatus,
  DesignMethod,
  DesignReport,
  PairAssignmentReport,
  PairProgress,
  PairQueue,
  ShownChoice,
  MoreTargets,
  Progress,
  RatingsChanged,
  TableFormat,
  TableView,
  ItemProgress,
  QueueSummary,
  RaterProfile,
  RaterProfiles,
  RatingItem,
  ItemSpans,
  ShownSpan,
  SpanAt,
  SignoffState,
  SessionInfo,
  StudyOverview,
  StudyStatus,
  StudySecurity,
  SecurityOutcome,
  CallFailure,
  JudgeActivity,
  Destination,
  JudgeStart,
  JudgeStarted,
  KeyChoice,
  PromptTemplate,
  RunPreview,
  RunSettings,
  RunStatus,
  AdjudicationReview,
  ConsensusAgreement,
  AgreementReference,
  Facet,
  GStudySection,
  LabelBudget,
  LabelBudgetQuestion,
  LatentAgreement,
  PrevalenceRow,
  StratifiedReport,
  CalibrationItem,
  CalibrationStatus,
  DecisionView,
  DiscrepancyRule,
  RaterQualityReport,
  ReliabilityOptions,
  ReliabilitySection,
  Resolution,
  WebRaterAccess,
  SpanPanel,
  SpanReplyView,
} from "./bindings";

export type { IpcError };

/** A problem the window finds in a form before anything is sent to the core. */
export type FormError = { code: "form"; message: string };

/** Turn whatever a failed invoke threw into the `{code, message}` shape. */
export function asIpcError(e: unknown): IpcError {
  if (e && typeof e === "object" && "code" in e && "message" in e) {
    const { code, message } = e as { code: unknown; message: unknown };
    // The shell only ever sends an ErrorCode (see src-tauri/src/error.rs).
    return { code: String(code) as ErrorCode, message: String(message) };
  }
  return { code: "internal", message: String(e) };
}

/**
 * Which way calls go: `tauri` in the desktop window, `http` in a browser served by `concord serve`
 * (the UI built with `vite build --mode web`, or any page without Tauri's IPC).
 */
export function transport(): "tauri" | "http" {
  if (import.meta.env.MODE === "web") return "http";
  return typeof window !== "undefined" && "__TAURI_INTERNALS__" in window ? "tauri" : "http";
}

/** The one `invoke`: a shell command by its checked name, with its arguments by camelCase key. */
async function call<T>(command: Command, args?: Record<string, unknown>): Promise<T> {
  if (transport() === "http") return httpCall<T>(command, args ?? {});
  try {
    return await invoke<T>(command, args);
  } catch (e) {
    throw asIpcError(e);
  }
}

// The HTTP transport: a rater session's commands as the routes of `concord serve`
// (src-tauri/crates/concord-web/src/api.rs). The expert is the server's session; the CSRF token
// the server gave at login goes with every write.
let csrfToken: string | null = null;
// The language the expert chose on the page: every request asks the server to answer in it.
let webLanguage: "en" | "zh" = "en";

/** Ask the server to word its answers (errors included) in `lang` from now on. */
export function setWebLanguage(lang: "en" | "zh") {
  webLanguage = lang;
}

/** The messages the page itself says about the connection, in the chosen language. */
const TRANSPORT_TEXT = {
  unreachable: {
    en: "The server cannot be reached. Check the connection and try again.",
    zh: "无法连接服务器。请检查网络连接后重试。",
  },
  notInBrowser: {
    en: "This is not available when rating in a browser.",
    zh: "在浏览器中评分时不能进行此操作。",
  },
};

/** The event the page hears when the server stops answering (`reconnecting`) and answers again. */
export const CONNECTION_EVENT = "concord-connection";
/** Dispatched on `window` when the server answers that the web session has ended (it ends after
 *  the study's idle-lock minutes without a request): the page then goes back to the login. */
export const SESSION_ENDED_EVENT = "concord-session-ended";
/** How long a call keeps trying to reach the server before it fails. */
const GIVE_UP_MS = 10 * 60 * 1000;
let reconnecting = false;

function connection(state: "reconnecting" | "online") {
  const now = state === "reconnecting";
  if (now === reconnecting) return;
  reconnecting = now;
  if (typeof window !== "undefined") window.dispatchEvent(new CustomEvent(CONNECTION_EVENT, { detail: state }));
}

/**
 * A request to the server; a failure arrives in the `{code, message}` shape. While the server
 * cannot be reached (down, restarting, a proxy answering 502–504) the request is sent again, in
 * order, until it answers: a value is saved at most once per cell (the server keeps the last
 * value of each), and what the page holds — a typed rationale — stays on the page meanwhile.
 */
async function request<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { "accept-language": webLanguage === "zh" ? "zh-CN" : "en" };
  if (method === "POST") {
    headers["content-type"] = "application/json";
    if (csrfToken) headers["x-csrf-token"] = csrfToken;
  }
  const started = Date.now();
  let wait = 250;
  let response: Response | null = null;
  while (response === null) {
    try {
      const r = await fetch(path, {
        method,
        headers,
        body: method === "POST" ? JSON.stringify(body ?? {}) : undefined,
        credentials: "same-origin",
        cache: "no-store",
      });
      if (r.status >= 502 && r.status <= 504) throw new Error(`proxy ${r.status}`);
      response = r;
    } catch {
      if (Date.now() - started > GIVE_UP_MS) {
        throw { code: "io", message: TRANSPORT_TEXT.unreachable[webLanguage] } as IpcError;
      }
      connection("reconnecting");
      await new Promise((done) => setTimeout(done, wait));
      wait = Math.min(wait * 2, 4000);
    }
  }
  connection("online");
  const text = await response.text();
  const value: unknown = text === "" ? null : JSON.parse(text);
  if (!response.ok) {
    const refusal: WebRefusal = asIpcError(value ?? { code: "internal", message: response.statusText });
    const reason = (value as { reason?: unknown } | null)?.reason;
    if (reason === "used" || reason === "expired" || reason === "invalid") refusal.reason = reason;
    if (response.status === 401 && refusal.code === "web_session" && typeof window !== "undefined") {
      window.dispatchEvent(new CustomEvent(SESSION_ENDED_EVENT));
    }
    throw refusal;
  }
  return value as T;
}

const item = (args: Record<string, unknown>) => `/api/items/${Number(args.item)}`;

/** Each command a web rater session may call, as its route. */
const ROUTES: Partial<Record<Command, (args: Record<string, unknown>) => [("GET" | "POST"), string, unknown?]>> = {
  open_queue: () => ["GET", "/api/queue"],
  rating_item: (a) => ["GET", item(a)],
  left_items: () => ["GET", "/api/left"],
  rate: (a) => ["POST", `${item(a)}/rate`, { criterion: a.criterion, value: a.value, reason: a.reason ?? null }],
  set_rationale: (a) => ["POST", `${item(a)}/rationale`, { rationale: a.rationale }],
  flag_item: (a) => ["POST", `${item(a)}/flag`, { reason: a.reason }],
  leave_item: (a) => ["POST", `${item(a)}/leave`, { seconds: a.seconds, next_item: a.nextItem }],
  signoff_state: () => ["GET", "/api/signoff"],
  set_signing_passphrase: (a) => ["POST", "/api/signoff/passphrase", { passphrase: a.passphrase, current: a.current ?? null }],
  sign_off: (a) => ["POST", "/api/signoff", { passphrase: a.passphrase }],
  calibration_status: () => ["GET", "/api/calibration"],
  calibration_item: (a) => ["GET", `/api/calibration/${Number(a.item)}`],
  calibration_answer: (a) => ["POST", `/api/calibration/${Number(a.item)}`, { values: a.values }],
  pair_queue: () => ["GET", "/api/pairs"],
  pair_item: (a) => ["GET", `/api/pairs/${Number(a.item)}`],
  rate_pair: (a) => ["POST", `/api/pairs/${Number(a.item)}/choose`, { criterion: a.criterion, choice: a.choice ?? null }],
  set_pair_rationale: (a) => ["POST", `/api/pairs/${Number(a.item)}/rationale`, { rationale: a.rationale }],
  flag_pair: (a) => ["POST", `/api/pairs/${Number(a.item)}/flag`, { reason: a.reason }],
  leave_pair: (a) => ["POST", `/api/pairs/${Number(a.item)}/leave`, { seconds: a.seconds }],
  // Evidence spans marked on the rating screen.
  item_spans: (a) => ["GET", `${item(a)}/spans`],
  mark_span: (a) => ["POST", `${item(a)}/spans`, { span: a.span }],
  change_span: (a) => ["POST", `${item(a)}/spans/change`, { at: a.at, span: a.span }],
  remove_span: (a) => ["POST", `${item(a)}/spans/remove`, { at: a.at }],
};

async function httpCall<T>(command: Command, args: Record<string, unknown>): Promise<T> {
  const route = ROUTES[command];
  if (!route) {
    throw { code: "rater_session", message: TRANSPORT_TEXT.notInBrowser[webLanguage] } as IpcError;
  }
  const [method, path, body] = route(args);
  return request<T>(method, path, body);
}

/** What the server says of the browser's session. */
export type WebSession = { rater_id: number; rater_name: string; csrf: string; idle_minutes: number };

/** What the pages before a login say of the study: its title, the lead and how to reach them. */
export type StudyWelcome = { study: string; lead: string | null; contact: string | null };

/** A refusal from the server; an invitation's says why (`used`, `expired`, `invalid`). */
export type WebRefusal = IpcError & { reason?: "used" | "expired" | "invalid" };

function keep(session: WebSession): WebSession {
  csrfToken = session.csrf;
  return session;
}

/** The browser's own calls: invitation, login, logout and the session (HTTP transport only). */
export const webIpc = {
  session: () => request<WebSession>("GET", "/api/session").then(keep),
  welcome: () => request<StudyWelcome>("GET", "/api/welcome"),
  invitation: (token: string) => request<{ rater_name: string }>("POST", "/api/invitation", { token }),
  accept: (token: string, passphrase: string) =>
    request<WebSession>("POST", "/api/invitation/accept", { token, passphrase }).then(keep),
  login: (name: string, passphrase: string) =>
    request<WebSession>("POST", "/api/login", { name, passphrase }).then(keep),
  logout: async () => {
    await request<null>("POST", "/api/logout");
    csrfToken = null;
  },
};

export const ipc = {
  studyStatus: () => call<StudyStatus>("study_status"),
  studySecurity: () => call<StudySecurity>("study_security"),
  unlockStudy: (passphrase: string, remember: boolean) =>
    call<SecurityOutcome>("unlock_study", { passphraseText: passphrase, remember }),
  lockStudy: () => call<boolean>("lock_study"),
  encryptStudy: (passphrase: string, remember: boolean) =>
    call<SecurityOutcome>("encrypt_open_study", { newPassphrase: passphrase, remember }),
  changePassphrase: (current: string, next: string, remember: boolean) =>
    call<SecurityOutcome>("change_passphrase", {
      currentPassphrase: current,
      newPassphrase: next,
      remember,
    }),
  setIdleLock: (minutes: number) => call<number>("set_idle_lock", { minutes }),
  studyOverview: () => call<StudyOverview>("study_overview"),
  raterProfiles: () => call<RaterProfiles>("rater_profiles"),
  createRaterProfile: (name: string) => call<RaterProfile>("create_rater_profile", { name }),
  // The expert of these calls is the shell's rater session, never an argument.
  raterSession: () => call<SessionInfo>("rater_session"),
  startRaterSession: (raterId: number) => call<SessionInfo>("start_rater_session", { raterId }),
  leaveRaterSession: (leadPassphrase: string | null) =>
    call<SessionInfo>("leave_rater_session", { leadPassphrase }),
  openQueue: () => call<QueueSummary>("open_queue"),
  ratingItem: (item: number) => call<RatingItem>("rating_item", { item }),
  leftItems: () => call<LeftItem[]>("left_items"),
  rate: (item: number, criterion: string, value: number, reason: string | null = null) =>
    call<ItemProgress>("rate", { item, criterion, value, reason }),
  setRationale: (item: number, rationale: string) => call<null>("set_rationale", { item, rationale }),
  flagItem: (item: number, reason: string) => call<null>("flag_item", { item, reason }),
  leaveItem: (item: number, seconds: number, nextItem: number) =>
    call<null>("leave_item", { item, seconds, nextItem }),
  // Evidence spans: offsets are Unicode scalar values of the reply (see lib/spans.ts).
  itemSpans: (item: number) => call<ItemSpans>("item_spans", { item }),
  markSpan: (item: number, span: ShownSpan) => call<ItemSpans>("mark_span", { item, span }),
  changeSpan: (item: number, at: SpanAt, span: ShownSpan) => call<ItemSpans>("change_span", { item, at, span }),
  removeSpan: (item: number, at: SpanAt) => call<ItemSpans>("remove_span", { item, at }),
  pairQueue: () => call<PairQueue>("pair_queue"),
  pairItem: (item: number) => call<PairItem>("pair_item", { item }),
  setPairRationale: (item: number, rationale: string) => call<null>("set_pair_rationale", { item, rationale }),
  flagPair: (item: number, reason: string) => call<null>("flag_pair", { item, reason }),
  leavePair: (item: number, seconds: number) => call<null>("leave_pair", { item, seconds }),
  ratePair: (item: number, criterion: string, choice: ShownChoice | null) =>
    call<PairProgress>("rate_pair", { item, criterion, choice }),
  signoffState: () => call<SignoffState>("signoff_state"),
  setSigningPassphrase: (passphrase: string, current: string | null) =>
    call<SignoffState>("set_signing_passphrase", { passphrase, current }),
  signOff: (passphrase: string) => call<SignoffState>("sign_off", { passphrase }),
  agreementReport: (options: AgreementOptions) => call<AgreementReport>("agreement_report", { options }),
  pairwiseAgreement: () => call<PairwiseReport | null>("pairwise_agreement"),
  agreementConsensus: (options: AgreementOptions, view: TableView) =>
    call<ConsensusAgreement>("agreement_consensus", { options, view }),
  agreementPrevalence: (rubric: string) => call<PrevalenceRow[]>("agreement_prevalence", { rubric }),
  labelBudget: (options: AgreementOptions, question: LabelBudgetQuestion) =>
    call<LabelBudget>("label_budget", { options, question }),
  agreementGstudy: (rubric: string) => call<GStudySection>("agreement_gstudy", { rubric }),
  agreementLatent: (options: AgreementOptions, view: TableView) =>
    call<LatentAgreement>("agreement_latent", { options, view }),
  agreementBy: (options: AgreementOptions, reference: AgreementReference, facet: Facet) =>
    call<StratifiedReport>("agreement_by", { options, reference, facet }),
  // The span section of the agreement panel.
  spanAgreementPanel: (rubric: string, seed: number, resamples: number) =>
    call<SpanPanel>("span_agreement_panel", { rubric, seed, resamples }),
  spanReply: (response: number) => call<SpanReplyView>("span_reply", { response }),
  judgeVerdicts: (options: AgreementOptions, verdict: VerdictOptions) =>
    call<VerdictReport>("judge_verdicts", { options, verdict }),
  judgeReliability: (options: ReliabilityOptions) =>
    call<ReliabilitySection>("judge_reliability", { options }),
  agreementTable: (options: AgreementOptions, view: TableView) =>
    call<AgreementTable>("agreement_table", { options, view }),
  exportAgreement: (options: AgreementOptions, view: TableView, format: TableFormat) =>
    call<string>("export_agreement", { options, view, format }),
  saveFigure: (name: string, bytes: Uint8Array) =>
    call<string>("save_figure", { name, bytes: Array.from(bytes) }),
  /** The methods appendix into the folder `out` (blank: `methods-<rubric>` in the export folder). */
  exportMethods: (options: AgreementOptions, out: string, overwrite = false, overridePhi = "") =>
    call<MethodsFiles>("export_methods", {
      options,
      out: out.trim() === "" ? null : out.trim(),
      overwrite,
      overridePhi: overridePhi.trim() === "" ? null : overridePhi.trim(),
    }),
  planMore: (
    options: AgreementOptions,
    view: TableView,
    criterion: string,
    rater: string,
    reference: string,
    width: number,
  ) => call<MoreTargets>("plan_more", { options, view, criterion, rater, reference, width }),
  // judge-run screen
  judgeDefaultPrompt: (rubric: string | null) => call<PromptTemplate>("judge_default_prompt", { rubric }),
  judgePreview: (settings: RunSettings) => call<RunPreview>("judge_preview", { settings }),
  judgeDestination: (settings: RunSettings, key: KeyChoice) =>
    call<Destination>("judge_destination", { settings, key }),
  judgeStart: (request: JudgeStart) => call<JudgeStarted>("judge_start", { request }),
  judgeCancel: () => call<boolean>("judge_cancel"),
  judgeActivity: () => call<JudgeActivity>("judge_activity"),
  judgeRuns: () => call<RunStatus[]>("judge_runs"),
  judgeFailures: (runId: number) => call<CallFailure[]>("judge_failures", { runId }),
  adjudicationReview: (rule: DiscrepancyRule) => call<AdjudicationReview>("adjudication_review", { rule }),
  adjudicationResolve: (resolution: Resolution) => call<DecisionView>("adjudication_resolve", { resolution }),
  raterQuality: () => call<RaterQualityReport>("rater_quality"),
  // Raters in browsers (`concord serve`): who has access, who is connected, invitations.
  webAccess: () => call<WebRaterAccess[]>("web_access"),
  webInvite: (rater: string, baseUrl: string, days: number) =>
    call<string>("web_invite", { rater, baseUrl, days }),
  webRevoke: (rater: string) => call<boolean>("web_revoke", { rater }),
  calibrationStatus: () => call<CalibrationStatus>("calibration_status"),
  calibrationItem: (item: number) => call<CalibrationItem>("calibration_item", { item }),
  calibrationAnswer: (item: number, values: [string, number][]) =>
    call<CalibrationItem>("calibration_answer", { item, values }),
};

/** The events the shell sends, each with its one payload type (src-tauri/src/events.rs). */
export type AppEvents = {
  "ratings-changed": RatingsChanged;
  "judge-progress": Progress;
  "judge-finished": JudgeFinished;
  "import-progress": ImportProgress;
  /** The id of the native menu item chosen (src-tauri/src/menu.rs). */
  menu: string;
  /** A file the desktop handed to the running app (a second launch, a double-click). */
  "open-file": string;
  "backup-taken": BackupEntry;
  "backup-failed": IpcError;
};

/** Subscribe to an app event; returns the unsubscribe function. */
export async function onEvent<K extends keyof AppEvents>(
  name: K,
  handler: (payload: AppEvents[K]) => void,
): Promise<() => void> {
  return listen<AppEvents[K]>(name, (e) => handler(e.payload));
}

// The lead's setup wizard (commands/setup.rs).
import type {
  AssignmentOptions,
  AssignmentSummary,
  AssignmentTable,
  ExpertAdded,
  ImportOutcome,
  ImportRequest,
  MergeReport,
  PackageWritten,
  PhiDecision,
  PhiReview,
  RatingsFormat,
  RubricAdded,
  SheetOutcome,
  WrittenFile,
} from "./bindings";

/** An optional typed output path: blank means the default file in the study's export folder. */
const outPath = (out: string) => (out.trim() === "" ? null : out.trim());

/** The lead's reason to write despite open PHI findings; blank means no override. */
const phiOverride = (reason: string) => (reason.trim() === "" ? null : reason.trim());

export const setupIpc = {
  exportDir: () => call<string>("setup_export_dir"),
  addRubric: (path: string) => call<RubricAdded>("setup_add_rubric", { path }),
  importData: (request: ImportRequest) => call<ImportOutcome>("setup_import", { request }),
  addExpert: (name: string) => call<ExpertAdded>("setup_add_expert", { name }),
  /** Fill an empty study with the demo study's content. */
  startFromDemo: () => call<null>("setup_start_from_demo"),
  previewAssignment: (options: AssignmentOptions) =>
    call<AssignmentSummary>("setup_preview_assignment", { options }),
  assign: (options: AssignmentOptions) => call<AssignmentSummary>("setup_assign", { options }),
  assignmentTable: () => call<AssignmentTable>("setup_assignment_table"),
  /** The pair design with every rater's progress, or null while no pairs are drawn. */
  pairsStatus: () => call<PairStatus | null>("setup_pairs_status"),
  pairsDesign: (method: DesignMethod, seed: number) => call<DesignReport>("setup_pairs_design", { method, seed }),
  pairsAssign: (k: number, seed: number) => call<PairAssignmentReport>("setup_pairs_assign", { k, seed }),
  exportPackage: (expert: string, out: string, passphrase: string, overridePhi = "", overwrite = false) =>
    call<PackageWritten>("setup_export_package", {
      expert,
      out: outPath(out),
      overwrite,
      packagePassphrase: passphrase,
      overridePhi: phiOverride(overridePhi),
    }),
  mergePackage: (path: string, passphrase: string) =>
    call<MergeReport>("setup_merge_package", { path, packagePassphrase: passphrase }),
  exportRatings: (format: RatingsFormat, out: string, excel: boolean, overridePhi = "", overwrite = false) =>
    call<WrittenFile>("setup_export_ratings", {
      format,
      out: outPath(out),
      overwrite,
      excel,
      overridePhi: phiOverride(overridePhi),
    }),
  exportSheet: (expert: string, out: string, overridePhi = "", overwrite = false) =>
    call<WrittenFile>("setup_export_sheet", {
      expert,
      out: outPath(out),
      overwrite,
      overridePhi: phiOverride(overridePhi),
    }),
  importSheet: (path: string) => call<SheetOutcome>("setup_import_sheet", { path }),
  phiReview: () => call<PhiReview>("phi_review"),
  phiDecide: (ids: number[], decision: PhiDecision) => call<PhiReview>("phi_decide", { ids, decision }),
};

// The window itself (commands/desktop.rs): which study is open, native dialogs, files handed to
// the app, backups, zoom and About.
import type {
  AppInfo,
  BackupEntry,
  BackupList,
  FilePurpose,
  FileRole,
  MenuLanguage,
  PackageIdentity,
  RecentStudy,
  ReturnedCopy,
  StudyOpened,
} from "./bindings";
import { getCurrentWebview } from "@tauri-apps/api/webview";

export const desktopIpc = {
  openStudy: (path: string) => call<StudyOpened>("open_study", { path }),
  newStudy: (path: string) => call<StudyOpened>("new_study", { path }),
  closeStudy: () => call<string | null>("close_study"),
  recentStudies: () => call<RecentStudy[]>("recent_studies"),
  classifyFile: (path: string) => call<FileRole>("classify_file", { path }),
  packageIdentity: () => call<PackageIdentity | null>("package_identity"),
  defaultReturnPath: () => call<string>("default_return_path"),
  /** Save the package to send back; says which earlier copies beside it are superseded. */
  returnRatings: (out: string, overwrite = false) => call<ReturnedCopy>("return_ratings", { out, overwrite }),
  /** A native open dialog; null when cancelled. */
  pickFile: (purpose: FilePurpose) => call<string | null>("pick_file", { purpose }),
  pickFolder: (title: string) => call<string | null>("pick_folder", { title }),
  pickSave: (title: string, suggested: string | null) =>
    call<string | null>("pick_save", { title, suggested }),
  reveal: (path: string) => call<null>("reveal", { path }),
  appInfo: () => call<AppInfo>("app_info"),
  listBackups: () => call<BackupList>("list_backups"),
  backupNow: () => call<BackupEntry>("backup_now"),
  restoreBackup: (backup: string, dest: string) =>
    call<StudyOpened>("restore_backup", { backup, dest }),
  setBackupFolder: (folder: string | null) => call<string>("set_backup_folder", { folder }),
  setZoom: (factor: number) => call<null>("set_zoom", { factor }),
  /** Build the native menu in the window's interface language (kept for the next launch). */
  setMenuLanguage: (language: MenuLanguage) => call<null>("set_menu_language", { language }),
  /** Quit the app (the study is backed up and closed whole first). */
  quit: () => call<null>("quit_app"),
};

/** Files dropped onto the window (their absolute paths); returns the unsubscribe function. */
export async function onFilesDropped(handler: (paths: string[]) => void): Promise<() => void> {
  return getCurrentWebview().onDragDropEvent((e) => {
    if (e.payload.type === "drop") handler(e.payload.paths);
  });
}
