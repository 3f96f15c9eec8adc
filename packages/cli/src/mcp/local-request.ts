/** The loopback names `serve --mcp --http` answers to, exactly as a client spells them. */
const LOCAL_HOSTNAMES = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * DNS-rebinding guard of `serve --mcp --http`: a request is served only when its Host
 * header names this machine's loopback address on our port, and its Origin (when a
 * browser sends one) is a loopback origin too. A web page on another site whose name
 * was rebound to 127.0.0.1 still sends its own name in Host/Origin, so it is refused.
 * Names are compared as written (case aside), not as a URL parser would normalize them:
 * `127.1` or `0x7f.1` reach the same address, but no client spells them so, and the list
 * the README gives is the whole list.
 */
export function checkLocalRequest(
  headers: { host?: string | undefined; origin?: string | undefined },
  port: number,
): { ok: true } | { ok: false; reason: string } {
  const host = headers.host;
  if (!host) return { ok: false, reason: "the request has no Host header" };
  const authority = splitAuthority(host);
  if (!authority || !LOCAL_HOSTNAMES.has(authority.hostname))
    return { ok: false, reason: `Host ${JSON.stringify(host)} is not this machine's loopback address` };
  if (authority.port !== String(port)) return { ok: false, reason: `Host ${JSON.stringify(host)} does not name port ${port}` };
  const origin = headers.origin;
  if (origin !== undefined) {
    const scheme = /^(https?):\/\/(.*)$/i.exec(origin);
    const originAuthority = scheme ? splitAuthority(scheme[2]!) : undefined;
    if (!originAuthority || !LOCAL_HOSTNAMES.has(originAuthority.hostname)) {
      return { ok: false, reason: `Origin ${JSON.stringify(origin)} is not a local origin` };
    }
  }
  return { ok: true };
}

/** `name[:port]` or `[v6][:port]`, hostname lower-cased; undefined when malformed. */
function splitAuthority(text: string): { hostname: string; port: string } | undefined {
  const match = /^(\[[0-9a-f:.]+\]|[^\s:/?#@[\]]+)(?::(\d{1,5}))?$/i.exec(text);
  if (!match) return undefined;
  return { hostname: match[1]!.toLowerCase(), port: match[2] ?? "" };
}
