/**
 * The first program of a sandbox whose policy allows hosts: it listens on a loopback
 * port inside the sandbox's own network namespace, forwards each connection to the host's
 * {@link AllowlistProxy} over its Unix socket, and runs the provider's program with
 * `HTTP_PROXY`/`HTTPS_PROXY` naming that port (and `NODE_USE_ENV_PROXY=1`, so Node.js's
 * `fetch` uses it). The program's stdio is the sandbox's own, so MCP passes through
 * untouched; its exit is the entry's exit, and a signal to the entry is handed on.
 *
 * {@link sandboxEntrySource} hands its text to `node -e`, so a bundled host ships no file
 * for it; it must stay self-contained (it sees only `process` and the built-in modules it
 * loads). Arguments: the proxy's socket path, then the program and its arguments.
 */
export function sandboxEntry(): void {
  const net = process.getBuiltinModule("node:net");
  const { spawn } = process.getBuiltinModule("node:child_process");
  const [socketPath, program, ...args] = process.argv.slice(1);
  if (socketPath === undefined || program === undefined) {
    process.stderr.write("openworker sandbox entry: expected <proxy socket> <program> [args…]\n");
    process.exit(2);
  }
  const forwarder = net.createServer((local) => {
    const remote = net.connect(socketPath);
    local.on("error", () => remote.destroy());
    remote.on("error", () => local.destroy());
    local.pipe(remote).pipe(local);
  });
  forwarder.listen(0, "127.0.0.1", () => {
    const { port } = forwarder.address() as { port: number };
    const proxy = `http://127.0.0.1:${port}`;
    const child = spawn(program, args, {
      stdio: "inherit",
      env: {
        ...process.env,
        HTTP_PROXY: proxy,
        HTTPS_PROXY: proxy,
        http_proxy: proxy,
        https_proxy: proxy,
        NO_PROXY: "",
        no_proxy: "",
        NODE_USE_ENV_PROXY: "1",
      },
    });
    for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, () => child.kill(signal));
    child.on("error", (error) => {
      process.stderr.write(`openworker sandbox entry: cannot start ${program}: ${error.message}\n`);
      process.exit(127);
    });
    child.on("exit", (code, signal) => process.exit(code ?? (signal === null ? 1 : 128 + (signalNumber(signal) ?? 0))));
  });
  const signalNumber = (signal: NodeJS.Signals): number | undefined => process.getBuiltinModule("node:os").constants.signals[signal];
}

/** The `node -e` text that runs {@link sandboxEntry} (with a no-op `__name`, for builds that keep function names). */
export function sandboxEntrySource(): string {
  return `const __name = (target) => target;\n(${sandboxEntry.toString()})();\n`;
}
