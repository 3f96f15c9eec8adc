import type { ProviderSandboxPolicy } from "@openworker/registry";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { MCP_ERROR_CODES } from "../codes.js";

/** What a stdio provider would run as, handed to the host's {@link SandboxLauncher}. */
export interface SandboxLaunch {
  readonly namespace: string;
  readonly program: string;
  readonly args: readonly string[];
  /** The child's whole environment (the safe base plus the provider's own, E6). */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string | undefined;
  /** The provider's sandbox policy as registered (read, write, network), if it gave one. */
  readonly sandbox?: ProviderSandboxPolicy;
}

/** What to run instead: the sandbox program with the provider's command inside it. */
export interface SandboxCommand {
  readonly program: string;
  readonly args: readonly string[];
  /** The environment of the sandbox program. Default: the launch's `env`. */
  readonly env?: Readonly<Record<string, string>>;
  /** Its working folder. Default: the launch's `cwd`. */
  readonly cwd?: string;
}

/**
 * The host's way to start a provider registered with `placement: "sandbox"`: it wraps the
 * provider's command in the host's sandbox (bubblewrap, firejail, a container, a VM's
 * agent…) and returns what to run. Called once per start, synchronously. The bridge owns
 * the process it starts as any other (M4: stdio, the process tree, verified cleanup); what
 * the sandbox allows is the launcher's to decide.
 *
 * @example
 * ```ts
 * const sandbox: SandboxLauncher = ({ program, args, env }) => ({
 *   program: "bwrap",
 *   args: ["--ro-bind", "/", "/", "--dev", "/dev", "--unshare-all", "--die-with-parent", "--", program, ...args],
 *   env,
 * });
 * new McpBridge(registry.providers(), { sandbox });
 * ```
 */
export type SandboxLauncher = (launch: SandboxLaunch) => SandboxCommand;

/**
 * The command a stdio provider starts as: its own for `placement` `"host"` (or none), the
 * launcher's for `"sandbox"`. Fails closed: a sandboxed provider without a launcher, or
 * with a launcher that throws or answers nonsense, is never started as host code.
 */
export function placedCommand(
  launch: SandboxLaunch,
  placement: "host" | "sandbox" | undefined,
  launcher: SandboxLauncher | undefined,
): Required<Omit<SandboxCommand, "cwd">> & { readonly cwd: string | undefined } {
  if (placement !== "sandbox") return { program: launch.program, args: launch.args, env: launch.env, cwd: launch.cwd };
  const label = `MCP provider ${JSON.stringify(launch.namespace)}`;
  if (launcher === undefined) {
    throw new OpenWorkerError(
      MCP_ERROR_CODES.sandboxUnavailable,
      `${label} asks for placement "sandbox" and this host has no sandbox launcher, so it was not started. ` +
        `Give one (the bridge's \`sandbox\` option; the runtime's \`mcp: { sandbox }\`; \`mainWithRegistry(registry, { sandbox })\`), or set placement "host" to run it as host code`,
      { details: { namespace: launch.namespace } },
    );
  }
  let command: unknown;
  try {
    command = launcher(Object.freeze({ ...launch, args: Object.freeze([...launch.args]), env: Object.freeze({ ...launch.env }) }));
  } catch (cause) {
    throw failed(label, `the sandbox launcher threw: ${cause instanceof Error ? cause.message : String(cause)}`, launch.namespace, cause);
  }
  if (typeof command !== "object" || command === null) throw failed(label, "the sandbox launcher returned no command object", launch.namespace);
  const { program, args, env, cwd } = command as Record<string, unknown>;
  if (typeof program !== "string" || program.length === 0 || program.includes("\0"))
    throw failed(label, 'the sandbox launcher\'s "program" must be a non-empty string', launch.namespace);
  if (!Array.isArray(args) || !args.every((arg) => typeof arg === "string" && !arg.includes("\0")))
    throw failed(label, 'the sandbox launcher\'s "args" must be an array of strings', launch.namespace);
  if (env !== undefined && (typeof env !== "object" || env === null || Array.isArray(env) || !Object.values(env).every((value) => typeof value === "string"))) {
    throw failed(label, 'the sandbox launcher\'s "env" must be an object of strings when given', launch.namespace);
  }
  if (cwd !== undefined && (typeof cwd !== "string" || cwd.length === 0))
    throw failed(label, 'the sandbox launcher\'s "cwd" must be a non-empty string when given', launch.namespace);
  return {
    program,
    args: [...(args as string[])],
    env: env === undefined ? launch.env : { ...(env as Record<string, string>) },
    cwd: (cwd as string | undefined) ?? launch.cwd,
  };
}

function failed(label: string, why: string, namespace: string, cause?: unknown): OpenWorkerError {
  return new OpenWorkerError(MCP_ERROR_CODES.sandboxFailed, `${label} (placement "sandbox") was not started: ${why}`, {
    details: { namespace },
    ...(cause === undefined ? {} : { cause }),
  });
}
