import { OpenWorkerError } from "../errors.js";

/**
 * Runs `action` and returns the {@link OpenWorkerError} it threw, so a test can assert its
 * `code` and message. Throws when nothing, or something else, was thrown.
 *
 * @example
 * ```ts
 * expect(captureError(() => validateQualifiedName("openworker.x")).code).toBe("NAMESPACE_RESERVED");
 * ```
 */
export function captureError(action: () => unknown): OpenWorkerError {
  try {
    action();
  } catch (error) {
    if (OpenWorkerError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected an OpenWorkerError, nothing was thrown");
}

/**
 * Awaits `promise` and returns the {@link OpenWorkerError} it rejected with. Throws when it
 * resolved, or rejected with something else.
 *
 * @example
 * ```ts
 * expect((await captureRejection(loadBundle("missing/"))).code).toBe("MANIFEST_MISSING");
 * ```
 */
export async function captureRejection(promise: Promise<unknown>): Promise<OpenWorkerError> {
  try {
    await promise;
  } catch (error) {
    if (OpenWorkerError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected an OpenWorkerError, the promise resolved");
}
