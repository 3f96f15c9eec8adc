import { spawnSync } from "node:child_process";
import type { SandboxLauncher } from "@openworker/mcp-bridge";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { AllowlistProxy } from "./allowlist-proxy.js";
import { bubblewrapArguments, type SandboxNetwork } from "./bubblewrap-arguments.js";
import { SANDBOX_ERROR_CODES as CODES } from "./codes.js";
import { findProgram } from "./locate.js";

/**
 * How {@link bubblewrapLauncher} finds bubblewrap and what it lets through.
 *
 * @example
 * ```ts
 * const options: BubblewrapLauncherOptions = { bwrap: "/usr/bin/bwrap" };
 * ```
 */
export interface BubblewrapLauncherOptions {
  /** The `bwrap` program. Default: `bwrap` on the host's PATH. */
  readonly bwrap?: string;
  /**
   * A policy with `network: { allow: [...] }` reaches only those hosts, through an HTTP
   * proxy on the host (see the README, "Network"): programs that honour `HTTP_PROXY` and
   * `HTTPS_PROXY` reach them, and nothing else has a network. `true` gives such providers
   * the host's whole network instead, loopback services included, for programs that
   * cannot use a proxy; the host list is then not enforced. Default `false`.
   */
  readonly unfilteredNetwork?: boolean;
}

/**
 * A {@link SandboxLauncher} that runs each `placement: "sandbox"` provider under
 * bubblewrap: in namespaces of its own (`--unshare-all`: no network, its own process
 * tree, no view of the host's processes), ended with its parent, in a new session, with
 * no capabilities; seeing read-only only the system's programs and libraries, a minimal
 * `/etc`, its program and Node.js's install, plus its policy's `read` paths; writing only
 * to its policy's `write` paths and a scratch tmpfs at `/tmp` that ends with it. Its
 * environment is exactly what the bridge hands on (the safe base plus the provider's own
 * `env`, E6). A policy that allows hosts reaches exactly those, through a proxy on the
 * host that its entry forwards a loopback port to. Where bubblewrap is missing or cannot create namespaces, starting fails with
 * a coded error ({@link SANDBOX_ERROR_CODES}); the provider never falls back to the host.
 * Nothing is checked or spawned until a sandboxed provider first starts.
 *
 * @example
 * ```ts
 * new McpBridge(registry.providers(), { sandbox: bubblewrapLauncher() });
 * ```
 */
export function bubblewrapLauncher(options: BubblewrapLauncherOptions = {}): SandboxLauncher {
  let bwrap: string | undefined;
  const proxies = new Map<string, AllowlistProxy>();
  return (launch) => {
    // A working bwrap stays working; a missing one is looked for again at the next start.
    bwrap ??= checkedBubblewrap(options.bwrap);
    const allow = typeof launch.sandbox?.network === "object" ? launch.sandbox.network.allow : undefined;
    let network: SandboxNetwork = { kind: "none" };
    if (allow !== undefined && options.unfilteredNetwork === true) network = { kind: "host" };
    else if (allow !== undefined) {
      // One proxy per provider and host list, for the launcher's life: a provider's restarts reuse it.
      const key = `${launch.namespace}\n${allow.join("\n")}`;
      let proxy = proxies.get(key);
      if (proxy === undefined) proxies.set(key, (proxy = new AllowlistProxy(launch.namespace, allow)));
      network = { kind: "proxy", proxy };
    }
    return { program: bwrap, args: bubblewrapArguments(launch, network), env: launch.env };
  };
}

/** bwrap's absolute path once it has run a program in fresh namespaces; a coded error naming what is missing otherwise. */
function checkedBubblewrap(given: string | undefined): string {
  if (process.platform !== "linux") {
    throw new OpenWorkerError(
      CODES.platformUnsupported,
      `the bubblewrap sandbox needs Linux (this is ${process.platform}); give the host a sandbox launcher for this system, or place the provider on the host`,
      {
        details: { platform: process.platform },
      },
    );
  }
  const bwrap = findProgram(given ?? "bwrap", process.env.PATH, undefined);
  if (bwrap === undefined) {
    throw new OpenWorkerError(
      CODES.bwrapMissing,
      given === undefined
        ? "bubblewrap (bwrap) is not installed: no bwrap on PATH; install it (Debian, Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"
        : `bubblewrap was given as ${JSON.stringify(given)}, which is not an executable file`,
      { details: { bwrap: given ?? "bwrap" } },
    );
  }
  // The same view a provider gets, running Node.js itself: what fails here would fail every start.
  const probe = bubblewrapArguments({ namespace: "(probe)", program: process.execPath, args: ["-e", ""], env: {}, cwd: undefined }, { kind: "none" });
  const result = spawnSync(bwrap, probe, { env: {}, stdio: ["ignore", "ignore", "pipe"], timeout: 10_000, encoding: "utf8" });
  if (result.status !== 0) {
    const said = (result.stderr ?? "").trim().slice(0, 300) || (result.error?.message ?? `exit ${result.status ?? result.signal}`);
    throw new OpenWorkerError(
      CODES.namespacesUnavailable,
      `bubblewrap (${bwrap}) cannot create a sandbox on this machine: ${said}. It needs unprivileged user namespaces ` +
        "(sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 and later an AppArmor profile for bwrap, or kernel.apparmor_restrict_unprivileged_userns=0; in a container, one allowed to create namespaces)",
      { details: { bwrap, stderr: said } },
    );
  }
  return bwrap;
}
