/**
 * A headless user agent for the OAuth tests: follows the authorization server's redirects
 * (login and consent are granted at once by the test server), carrying its cookies, and
 * returns the redirect back to the client, which it does not visit.
 */
export async function followAuthorization(authorizationUrl: URL | string, redirectPrefix: string): Promise<string> {
  const cookies = new Map<string, string>();
  let next = new URL(authorizationUrl);
  for (let hop = 0; hop < 20; hop++) {
    if (next.href.startsWith(redirectPrefix)) return next.href;
    const response = await fetch(next, { redirect: "manual", headers: { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join("; ") } });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const equals = pair.indexOf("=");
      cookies.set(pair.slice(0, equals).trim(), pair.slice(equals + 1));
    }
    const location = response.headers.get("location");
    if (location === null) throw new Error(`the authorization server answered ${response.status} without a redirect: ${(await response.text()).slice(0, 300)}`);
    next = new URL(location, next);
  }
  throw new Error("too many redirects");
}
