/** `promise`, or a rejection as soon as `signal` aborts (the promise is then left to itself). */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    ignoreRejection(promise);
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((resolve, reject) => {
    const abandon = () => {
      ignoreRejection(promise);
      reject(signal.reason as Error);
    };
    signal.addEventListener("abort", abandon, { once: true });
    Promise.resolve(promise).then(
      (value) => {
        signal.removeEventListener("abort", abandon);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", abandon);
        reject(error as Error);
      },
    );
  });
}

/**
 * The hooks are typed `void`, but TypeScript accepts an `async` function there: a
 * rejection it returns would be unhandled and end the host process.
 */
export function ignoreRejection(result: unknown): void {
  if (typeof result === "object" && result !== null && typeof (result as { then?: unknown }).then === "function") {
    (result as PromiseLike<unknown>).then(undefined, () => undefined);
  }
}
