/**
 * Every error code `@openworker/sandbox` throws. Its launcher runs inside the bridge's
 * start, so a host sees them as the `cause` of the bridge's `MCP_SANDBOX_FAILED` (whose
 * message carries this one's). Codes are stable: hosts match on them.
 *
 * @example
 * ```ts
 * if (OpenWorkerError.hasCode(error.cause, SANDBOX_ERROR_CODES.bwrapMissing)) console.log("apt-get install bubblewrap");
 * ```
 */
export const SANDBOX_ERROR_CODES = Object.freeze({
  /** Not Linux: bubblewrap needs Linux namespaces. */
  platformUnsupported: "SANDBOX_PLATFORM_UNSUPPORTED",
  /** No `bwrap` program where the launcher looked. */
  bwrapMissing: "SANDBOX_BWRAP_MISSING",
  /** `bwrap` is there but cannot create the namespaces (user namespaces disabled, a seccomp or AppArmor rule, a container without them). */
  namespacesUnavailable: "SANDBOX_NAMESPACES_UNAVAILABLE",
  /** A read or write path of the policy, or the provider's working folder, does not exist. */
  pathMissing: "SANDBOX_PATH_MISSING",
  /** The provider's program is not found (a bare name not on its PATH, or a path that does not exist). */
  programNotFound: "SANDBOX_PROGRAM_NOT_FOUND",
});
