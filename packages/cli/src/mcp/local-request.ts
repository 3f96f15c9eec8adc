const LOCAL_HOSTNAMES = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * DNS-rebinding guard of `serve --mcp --http`: a request is served only when its Host
 * header names this machine's loopback address on our port, and its Origin (when a
 * browser sends one) is a loopback origin too. A web page on another site whose name
 * was rebound to 127.0.0.1 still sends its own name in Host/Origin, so it is refused.
 */
export function checkLocalRequest(headers: { host?: string | undefined; origin?: string | undefined }, port: number): { ok: true } | { ok: false; reason: string } {
  const host = headers.host;
  if (!host) return { ok: false, reason: "the request has no Host header" };
  const parsedHost = parseAuthority(`http://${host}`);
  if (!parsedHost || !LOCAL_HOSTNAMES.has(parsedHost.hostname)) return { ok: false, reason: `Host ${JSON.stringify(host)} is not this machine's loopback address` };
  if (parsedHost.port !== String(port)) return { ok: false, reason: `Host ${JSON.stringify(host)} does not name port ${port}` };
  const origin = headers.origin;
  if (origin !== undefined) {
    const parsedOrigin = parseAuthority(origin);
    if (!parsedOrigin || (parsedOrigin.protocol !== "http:" && parsedOrigin.protocol !== "https:") || !LOCAL_HOSTNAMES.has(parsedOrigin.hostname)) {
      return { ok: false, reason: `Origin ${JSON.stringify(origin)} is not a local origin` };
    }
  }
  return { ok: true };
}

function parseAuthority(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}
