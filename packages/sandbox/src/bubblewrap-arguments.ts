import { lstatSync, readlinkSync } from "node:fs";
import path from "node:path";
import type { SandboxLaunch } from "@openworker/mcp-bridge";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { SANDBOX_ERROR_CODES as CODES } from "./codes.js";
import type { AllowlistProxy } from "./allowlist-proxy.js";
import { exists, findProgram, nodeInstall, programPaths } from "./locate.js";
import { sandboxEntrySource } from "./sandbox-entry.js";

/** Where the system's programs and libraries live; shown read-only (a merged-/usr link stays a link). */
const SYSTEM_PATHS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];
/** The little of /etc that programs need to load libraries, name users and check certificates. */
const ETC_PATHS = [
  "/etc/ld.so.cache",
  "/etc/ld.so.conf",
  "/etc/ld.so.conf.d",
  "/etc/alternatives",
  "/etc/passwd",
  "/etc/group",
  "/etc/nsswitch.conf",
  "/etc/localtime",
  "/etc/hosts",
  "/etc/ssl",
  "/etc/ca-certificates",
  "/etc/ca-certificates.conf",
];
/** Name resolution, only where there is a network to resolve on. */
const NETWORK_ETC_PATHS = ["/etc/resolv.conf", "/etc/gai.conf"];
/** The provider's scratch folder: a tmpfs of its own, made with the sandbox and gone with it. */
export const SCRATCH = "/tmp";

/**
 * The network a sandbox gets: none, the host's whole network, or only the hosts its
 * policy allows, through the host's proxy (its entry forwards a loopback port to it).
 */
export type SandboxNetwork = { readonly kind: "none" } | { readonly kind: "host" } | { readonly kind: "proxy"; readonly proxy: AllowlistProxy };

/** The bwrap arguments that run `launch` under its policy, with `network`. */
export function bubblewrapArguments(launch: SandboxLaunch, sandboxNetwork: SandboxNetwork): string[] {
  const network = sandboxNetwork.kind === "host";
  const label = `MCP provider ${JSON.stringify(launch.namespace)}`;
  const program = findProgram(launch.program, launch.env.PATH, launch.cwd);
  if (program === undefined) {
    throw new OpenWorkerError(
      CODES.programNotFound,
      `${label}: program ${JSON.stringify(launch.program)} was not found${launch.program.includes("/") ? "" : " on its PATH"} (or is not executable); the sandbox shows it only once it is found`,
      { details: { namespace: launch.namespace, program: launch.program } },
    );
  }
  const policy = launch.sandbox ?? {};
  const read = policy.read ?? [];
  const write = policy.write ?? [];
  for (const [field, paths] of [
    ["sandbox.read", read],
    ["sandbox.write", write],
  ] as const) {
    paths.forEach((item, index) => {
      if (!exists(item))
        throw missing(label, `${field}[${index}] ${JSON.stringify(item)} does not exist; create it or remove it from the policy`, launch.namespace, item);
    });
  }
  if (launch.cwd !== undefined && !exists(launch.cwd))
    throw missing(label, `working folder (cwd) ${JSON.stringify(launch.cwd)} does not exist`, launch.namespace, launch.cwd);

  const args = ["--unshare-all", ...(network ? ["--share-net"] : []), "--die-with-parent", "--new-session", "--cap-drop", "ALL"];
  for (const item of [...SYSTEM_PATHS, ...ETC_PATHS, ...(network ? NETWORK_ETC_PATHS : [])]) args.push(...systemPath(item));
  args.push("--proc", "/proc", "--dev", "/dev", "--tmpfs", SCRATCH);
  const installs = new Set([nodeInstall(process.execPath)]);
  if (path.basename(program) === "node") installs.add(nodeInstall(program));
  for (const item of [...installs, ...programPaths(program)]) if (!isSystem(item)) args.push("--ro-bind", item, item);
  for (const item of read) args.push("--ro-bind", item, item);
  for (const item of write) args.push("--bind", item, item);
  const cwd = launch.cwd === undefined ? SCRATCH : path.resolve(launch.cwd);
  if (launch.cwd !== undefined && ![...read, ...write].some((item) => within(cwd, item)) && !isSystem(cwd)) args.push("--ro-bind", cwd, cwd);
  if (sandboxNetwork.kind === "proxy") {
    const { proxy } = sandboxNetwork;
    args.push(
      "--ro-bind",
      proxy.folder,
      proxy.folder,
      "--chdir",
      cwd,
      "--",
      process.execPath,
      "-e",
      sandboxEntrySource(),
      proxy.socketPath,
      program,
      ...launch.args,
    );
  } else {
    args.push("--chdir", cwd, "--", program, ...launch.args);
  }
  return args;
}

function systemPath(item: string): string[] {
  let link: string | undefined;
  try {
    link = lstatSync(item).isSymbolicLink() ? readlinkSync(item) : undefined;
  } catch {
    return []; // Not on this system (no /lib32 here, say).
  }
  return link === undefined ? ["--ro-bind", item, item] : ["--symlink", link, item];
}

function isSystem(item: string): boolean {
  return SYSTEM_PATHS.some((root) => within(item, root));
}

function within(item: string, folder: string): boolean {
  const relative = path.relative(folder, item);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

function missing(label: string, what: string, namespace: string, item: string): OpenWorkerError {
  return new OpenWorkerError(CODES.pathMissing, `${label}: sandbox ${what}`, { details: { namespace, path: item } });
}
