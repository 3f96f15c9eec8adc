import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

/** What a request head may hold before the proxy refuses it. */
const MAX_HEAD_BYTES = 16 * 1024;
/** How long a client may take to send its request head. */
const HEAD_TIMEOUT_MS = 10_000;
/** Connections one sandbox may hold open through its proxy at once. */
const MAX_CONNECTIONS = 256;
/** How long connecting to an allowed host may take. */
const CONNECT_TIMEOUT_MS = 30_000;

/** One entry of a policy's `network.allow`: a host, and a port when the entry names one. */
interface AllowedHost {
  readonly host: string;
  readonly port: number | undefined;
}

/**
 * The host side of a sandbox's network: an HTTP proxy on a Unix socket that connects only
 * to the hosts a provider's policy allows. The sandbox has no network of its own; its
 * entry forwards a loopback port to this socket, and its program reaches the proxy through
 * `HTTP_PROXY`/`HTTPS_PROXY`. `CONNECT host:port` (HTTPS, and any tunnel) and absolute-form
 * requests (`GET http://host/…`) are served; every other request, and a host or port the
 * policy does not list, is refused with an HTTP error naming it. Names are resolved here,
 * on the host. The listener does not keep the host alive, and its socket folder is removed
 * when the host exits.
 */
export class AllowlistProxy {
  /** The Unix socket the sandbox's entry connects to. */
  readonly socketPath: string;
  /** The folder holding it, shown to the sandbox read-only. */
  readonly folder: string;
  private readonly allowed: readonly AllowedHost[];

  constructor(
    private readonly namespace: string,
    allow: readonly string[],
  ) {
    this.allowed = allow.map(parseAllowed);
    this.folder = mkdtempSync(path.join(tmpdir(), "openworker-sandbox-net-"));
    this.socketPath = path.join(this.folder, "proxy.sock");
    const server = net.createServer((client) => this.serve(client));
    // A listener that fails after this (there is no such case known) leaves the sandbox without network: fail closed.
    server.on("error", () => server.close());
    server.maxConnections = MAX_CONNECTIONS;
    server.listen(this.socketPath);
    server.unref();
    const folder = this.folder;
    process.once("exit", () => rmSync(folder, { recursive: true, force: true }));
  }

  /** Whether the policy lets the sandbox reach `host:port`. */
  allows(host: string, port: number): boolean {
    const wanted = normalHost(host);
    return this.allowed.some((entry) => hostMatches(entry.host, wanted) && (entry.port === undefined || entry.port === port));
  }

  private serve(client: net.Socket): void {
    let head = Buffer.alloc(0);
    client.setTimeout(HEAD_TIMEOUT_MS, () => client.destroy());
    client.on("error", () => client.destroy());
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) {
        if (head.length > MAX_HEAD_BYTES) refuse(client, 431, "the request head is too large");
        return;
      }
      client.off("data", onData);
      client.setTimeout(0);
      this.route(client, head.subarray(0, end).toString("latin1"), head.subarray(end + 4));
    };
    client.on("data", onData);
  }

  private route(client: net.Socket, head: string, rest: Buffer): void {
    const [requestLine = "", ...headers] = head.split("\r\n");
    const [method = "", target = "", version = "HTTP/1.1"] = requestLine.split(" ");
    let host: string;
    let port: number;
    let first: Buffer;
    if (method === "CONNECT") {
      const at = target.lastIndexOf(":");
      host = target.slice(0, at).replace(/^\[(.*)\]$/, "$1");
      port = Number(target.slice(at + 1));
      first = Buffer.alloc(0);
    } else {
      let url: URL;
      try {
        url = new URL(target);
      } catch {
        refuse(client, 400, "the sandbox's proxy takes CONNECT host:port or an absolute http:// URL");
        return;
      }
      if (url.protocol !== "http:") {
        refuse(client, 400, `the sandbox's proxy forwards http:// URLs (use CONNECT for ${url.protocol})`);
        return;
      }
      host = url.hostname.replace(/^\[(.*)\]$/, "$1");
      port = url.port === "" ? 80 : Number(url.port);
      // Origin-form to the server, without the proxy's own headers.
      const kept = headers.filter((line) => !/^proxy-(connection|authorization):/i.test(line));
      first = Buffer.from(`${method} ${url.pathname}${url.search} ${version}\r\n${kept.join("\r\n")}\r\n\r\n`, "latin1");
    }
    if (host === "" || !Number.isInteger(port) || port < 1 || port > 65_535) {
      refuse(client, 400, `"${target}" is not host:port`);
      return;
    }
    if (!this.allows(host, port)) {
      refuse(client, 403, `the sandbox policy of MCP provider "${this.namespace}" does not allow ${host}:${port}`);
      return;
    }
    const upstream = net.connect({ host, port });
    let connected = false;
    upstream.setTimeout(CONNECT_TIMEOUT_MS, () => upstream.destroy(new Error("timed out")));
    upstream.once("connect", () => {
      connected = true;
      upstream.setTimeout(0);
      if (method === "CONNECT") client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      else upstream.write(first);
      if (rest.length > 0) upstream.write(rest);
      client.pipe(upstream).pipe(client);
    });
    upstream.once("error", (error: NodeJS.ErrnoException) => {
      if (!connected) refuse(client, 502, `${host}:${port} could not be reached (${error.code ?? error.message})`);
      else client.destroy();
    });
    client.once("close", () => upstream.destroy());
    upstream.once("close", () => client.end());
  }
}

function refuse(client: net.Socket, status: number, reason: string): void {
  const text = { 400: "Bad Request", 403: "Forbidden", 431: "Request Header Fields Too Large", 502: "Bad Gateway" }[status] ?? "Error";
  const body = `${reason}\n`;
  client.end(
    `HTTP/1.1 ${status} ${text}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** `host`, `host:port`, `[v6]` or `[v6]:port`, as the registry checked them. */
function parseAllowed(entry: string): AllowedHost {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return { host: normalHost(bracketed[1]!), port: bracketed[2] === undefined ? undefined : Number(bracketed[2]) };
  const parts = entry.split(":");
  if (parts.length === 2 && /^\d+$/.test(parts[1]!)) return { host: normalHost(parts[0]!), port: Number(parts[1]) };
  return { host: normalHost(entry), port: undefined };
}

function normalHost(host: string): string {
  return host.toLowerCase().replace(/\.$/, "");
}

/** An allowed host matches itself; `*.example.com` matches every name under example.com (not example.com itself). */
function hostMatches(allowed: string, host: string): boolean {
  return allowed.startsWith("*.") ? host.endsWith(allowed.slice(1)) && host.length > allowed.length - 1 : allowed === host;
}
