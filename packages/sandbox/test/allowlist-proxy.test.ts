import { createServer as createHttpServer, type Server } from "node:http";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AllowlistProxy } from "../src/allowlist-proxy.js";

// The sandbox's proxy as a sandboxed program meets it, over its Unix socket, without a
// sandbox around: what it refuses, and how a client that misbehaves is answered.
let web: Server;
let port = 0;
let proxy: AllowlistProxy;

beforeAll(async () => {
  web = createHttpServer((request, response) => response.end(`served ${request.url} host=${request.headers.host}`));
  await new Promise<void>((resolve) => web.listen(0, "127.0.0.1", resolve));
  port = (web.address() as { port: number }).port;
  proxy = new AllowlistProxy("probe", [`127.0.0.1:${port}`, "*.example.test", "[::1]:9"]);
});

afterAll(() => new Promise<void>((resolve) => web.close(() => resolve())));

/** Sends `request` to the proxy and resolves with everything it answered before closing. */
function ask(request: string | Buffer, { end = false } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(proxy.socketPath);
    let answer = "";
    socket.on("data", (chunk) => (answer += chunk.toString("latin1")));
    socket.once("close", () => resolve(answer));
    socket.once("error", reject);
    socket.write(request);
    if (end) socket.end();
  });
}

describe("the sandbox's allowlist proxy", () => {
  it("A4 matches hosts and ports as the policy lists them: exact ports, any port, wildcards below a name, IPv6", () => {
    expect(proxy.allows("127.0.0.1", port)).toBe(true);
    expect(proxy.allows("127.0.0.1", port + 1)).toBe(false);
    expect(proxy.allows("localhost", port)).toBe(false);
    expect(proxy.allows("API.Example.Test", 443)).toBe(true);
    expect(proxy.allows("deep.api.example.test", 8443)).toBe(true);
    expect(proxy.allows("example.test", 443)).toBe(false);
    expect(proxy.allows("evilexample.test", 443)).toBe(false);
    expect(proxy.allows("::1", 9)).toBe(true);
    expect(proxy.allows("::1", 10)).toBe(false);
  });

  it("A4 forwards an allowed absolute-form request in origin form, without the proxy's headers", async () => {
    const answer = await ask(`GET http://127.0.0.1:${port}/a?b=1 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nProxy-Authorization: x\r\nConnection: close\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toContain(`served /a?b=1 host=127.0.0.1:${port}`);
  });

  it("A4 refuses what the policy does not list, and requests that are not proxy requests, each with an HTTP error naming why", async () => {
    expect(await ask(`CONNECT 127.0.0.1:${port + 1} HTTP/1.1\r\n\r\n`)).toContain(`403 Forbidden\r\n`);
    expect(await ask(`GET http://localhost:${port}/ HTTP/1.1\r\n\r\n`)).toContain(`does not allow localhost:${port}`);
    expect(await ask("GET /relative HTTP/1.1\r\n\r\n")).toContain("400 Bad Request");
    expect(await ask("GET https://127.0.0.1/ HTTP/1.1\r\n\r\n")).toContain("use CONNECT for https:");
    expect(await ask("CONNECT 127.0.0.1:99999 HTTP/1.1\r\n\r\n")).toContain('"127.0.0.1:99999" is not host:port');
  });

  it("A4 a head past 16 KiB is refused (431) without waiting for its end; an allowed host that is down is 502", async () => {
    expect(await ask(Buffer.alloc(17 * 1024, "a"))).toContain("431 Request Header Fields Too Large");
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const downPort = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const down = new AllowlistProxy("probe", [`127.0.0.1:${downPort}`]);
    const answer = await new Promise<string>((resolve) => {
      const socket = net.connect(down.socketPath);
      let text = "";
      socket.on("data", (chunk) => (text += chunk.toString("latin1")));
      socket.once("close", () => resolve(text));
      socket.write(`CONNECT 127.0.0.1:${downPort} HTTP/1.1\r\n\r\n`);
    });
    expect(answer).toContain(`502 Bad Gateway`);
    expect(answer).toContain("ECONNREFUSED");
  });

  it("A4 a client that closes before its head ends gets nothing and leaves nothing", async () => {
    expect(await ask(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\n`, { end: true })).toBe("");
  });
});
