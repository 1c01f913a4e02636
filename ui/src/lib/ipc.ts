// The one module that talks to the Rust side. Every command the UI uses is a typed function here;
// components never call `invoke` themselves. Errors arrive as the shell's `{code, message}` shape.
import { invoke } from "@tauri-apps/api/core";
import type { IpcError, StudyOverview, StudyStatus } from "./bindings";

export type { IpcError };

/** Turn whatever a failed invoke threw into the `{code, message}` shape. */
export function asIpcError(e: unknown): IpcError {
  if (e && typeof e === "object" && "code" in e && "message" in e) {
    const { code, message } = e as { code: unknown; message: unknown };
    return { code: String(code), message: String(message) };
  }
  return { code: "internal", message: String(e) };
}

async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (e) {
    throw asIpcError(e);
  }
}

export const ipc = {
  studyStatus: () => call<StudyStatus>("study_status"),
  studyOverview: () => call<StudyOverview>("study_overview"),
};
