import { OpenWorkerError } from "@openworker/tools-sdk";

/** `OpenWorkerError.isInstance`, false for a thrown value whose brand cannot even be read (a hostile Proxy). */
export function isOpenWorkerError(cause: unknown): cause is OpenWorkerError {
  try {
    return OpenWorkerError.isInstance(cause);
  } catch {
    return false;
  }
}

/** The message of whatever was thrown, without letting a hostile value throw again. */
export function messageOf(cause: unknown): string {
  try {
    return cause instanceof Error ? cause.message : String(cause);
  } catch {
    return "(a value that cannot be printed)";
  }
}
