import { OpenWorkerError } from "../errors.js";

/**
 * Runs `action` and returns the {@link OpenWorkerError} it threw, so a test can assert its
 * `code` and message. Throws when nothing, or something else, was thrown, and when the
 * action returned a promise: async actions go to {@link captureRejection}.
 *
 * @example
 * ```ts
 * expect(captureError(() => validateQualifiedName("openworker.x")).code).toBe("NAMESPACE_RESERVED");
 * ```
 */
export function captureError(action: () => unknown): OpenWorkerError {
  let returned: unknown;
  try {
    returned = action();
  } catch (error) {
    if (OpenWorkerError.isInstance(error)) return error;
    throw error;
  }
  if (typeof (returned as PromiseLike<unknown> | undefined)?.then === "function") {
    // An async action rejects instead of throwing: its rejection is handled here (left
    // alone it would be unhandled, which ends a Node process) and the test is told why.
    void Promise.resolve(returned).then(undefined, () => undefined);
    throw new Error("captureError got a promise (an async action rejects, it does not throw): use `await captureRejection(promise)`");
  }
  throw new Error("expected an OpenWorkerError, nothing was thrown");
}

/**
 * Awaits `promise` and returns the {@link OpenWorkerError} it rejected with. Throws when it
 * resolved, or rejected with something else.
 *
 * @example
 * ```ts
 * expect((await captureRejection(loadBundle("missing/"))).code).toBe("BUNDLE_NOT_FOUND");
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
