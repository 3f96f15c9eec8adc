/**
 * Why a request to a streamable-HTTP service never got an answer, read from the error's
 * `cause` chain (fetch itself says only "fetch failed"): a refused connection, a name DNS
 * could not resolve, a TLS failure, a reset. Undefined when no cause names a network code.
 *
 * @example
 * ```ts
 * networkFailure(new TypeError("fetch failed", { cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }) }));
 * // "connection refused (ECONNREFUSED)"
 * ```
 */
export function networkFailure(error: unknown): string | undefined {
  const found = networkCause(error, 0);
  if (found === undefined) return undefined;
  const { code, message } = found;
  const known = PLAIN[code];
  if (known !== undefined) return `${known} (${code})`;
  if (TLS.test(code)) return `TLS failed: ${message || "the certificate or handshake was refused"} (${code})`;
  return `${message || "the request failed"} (${code})`;
}

const PLAIN: Readonly<Record<string, string>> = {
  ECONNREFUSED: "connection refused",
  ENOTFOUND: "host name not found (DNS)",
  EAI_AGAIN: "host name lookup failed for now (DNS)",
  EAI_NONAME: "host name not found (DNS)",
  ECONNRESET: "connection reset",
  ECONNABORTED: "connection aborted",
  EPIPE: "connection closed while sending",
  ETIMEDOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  EADDRNOTAVAIL: "address not available",
  UND_ERR_CONNECT_TIMEOUT: "connection timed out",
  UND_ERR_SOCKET: "the connection closed unexpectedly",
  UND_ERR_HEADERS_TIMEOUT: "no response headers in time",
};

// Node's TLS errors (ERR_TLS_*, ERR_SSL_*) and OpenSSL's certificate verdicts.
const TLS = /^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|UNABLE_TO_(GET_ISSUER_CERT|VERIFY_LEAF_SIGNATURE))/;
const NETWORK = /^(E[A-Z]+|EAI_[A-Z]+|UND_ERR_[A-Z_]+)$/;

function networkCause(error: unknown, depth: number): { code: string; message: string } | undefined {
  if (typeof error !== "object" || error === null || depth > 8) return undefined;
  const { code, message, cause, errors } = error as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  // The innermost cause is the most precise; an AggregateError (several addresses tried) names its first.
  const inner = networkCause(cause, depth + 1) ?? (Array.isArray(errors) ? networkCause(errors[0], depth + 1) : undefined);
  if (inner !== undefined) return inner;
  if (typeof code === "string" && (NETWORK.test(code) || TLS.test(code))) return { code, message: typeof message === "string" ? message : "" };
  return undefined;
}
