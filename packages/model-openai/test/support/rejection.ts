import { inspect } from "node:util";
import { OpenWorkerError } from "@openworker/tools-sdk";

/** The `OpenWorkerError` a promise rejects with; fails the test when it resolves or rejects with anything else. */
export async function rejection(promise: Promise<unknown>): Promise<OpenWorkerError> {
  const error = await promise.then(
    () => {
      throw new Error("expected the promise to reject");
    },
    (reason: unknown) => reason,
  );
  if (!OpenWorkerError.isInstance(error)) throw new Error(`expected an OpenWorkerError, got ${inspect(error)}`);
  return error;
}
