import type { CommandSpec } from "../cli/command.js";
import { stringOption } from "../cli/command.js";
import { EXIT_CODES, usageError } from "../cli/errors.js";
import { openRuntime } from "../setup/runtime.js";
import { SCRIPT_OPTION, SERVE_SESSION_OPTIONS } from "./options.js";

/** `serve`: the harness as a process (`--stdio`) or the bundle's tools as an MCP server (`--mcp`). */
export const serveCommand: CommandSpec = {
  words: ["serve"],
  summary: "Serve the harness over stdio JSON-RPC (--stdio), or a bundle's tools as an MCP server (--mcp)",
  usage:
    "--stdio [--script FILE] | --mcp --bundle DIR [--http PORT [--max-sessions N] [--idle-timeout SECONDS]] [--tool-names alias|published] [--policy FILE] [--approve ask|yes|no] [--elicitation-timeout SECONDS]",
  positionals: { min: 0, max: 0 },
  options: {
    stdio: { type: "boolean", description: "the harness for a host application: newline-delimited JSON-RPC 2.0 on stdin/stdout" },
    mcp: { type: "boolean", description: "an MCP server exposing the bundle's selected tools, every call governed" },
    http: { type: "string", value: "PORT", description: "with --mcp: streamable HTTP on 127.0.0.1:PORT (0 picks a free port) instead of stdio" },
    "max-sessions": {
      type: "string",
      value: "N",
      description:
        "with --mcp --http: concurrent MCP sessions (default 32; each has its own MCP processes); at the bound the least recently used idle one is closed for a new client",
    },
    "idle-timeout": {
      type: "string",
      value: "SECONDS",
      description:
        "with --mcp --http: close a client's MCP session after this long with no request, event stream or tool call in progress, as DELETE would (default 300: 5 minutes; 1-999999)",
    },
    "tool-names": {
      type: "string",
      value: "alias|published",
      choices: ["alias", "published"],
      description:
        "with --mcp: serve tools by model alias (default), or by the names their providers publish (native tools: qualified names; a name two tools share stays an alias)",
    },
    bundle: { type: "string", value: "DIR", description: "with --mcp: the bundle whose selection is served" },
    "elicitation-timeout": {
      type: "string",
      value: "SECONDS",
      description:
        "how long an MCP provider's request for input waits for the host's (or --mcp: the client's) answer before it is declined (default 600: 10 minutes; 1-999999)",
    },
    ...SCRIPT_OPTION,
    ...SERVE_SESSION_OPTIONS,
  },
  // One method per line, params as the README's protocol table gives them (a test holds the two together).
  details:
    "--stdio: newline-delimited JSON-RPC 2.0 on stdin/stdout. Methods and their params:\n" +
    "  session.open {bundle, policy?, model?: {provider?, model?}, sessionId?, workspace?}\n" +
    "  turn.run {sessionId, text}\n" +
    "  turn.cancel {sessionId, reason?, turnId?}\n" +
    "  call {sessionId, name: qualifiedName, arguments}\n" +
    "  session.close {sessionId}\n" +
    "  inventory.mcp {sessionId?, serverNames?: string[], sessionDeniedTools?: {serverName: string[]}}\n" +
    "  models.list {}\n" +
    "  models.readiness {provider, model}\n" +
    "  shutdown {}\n" +
    "The harness sends `event` notifications {event} and asks the host\n" +
    "  approval.request {sessionId, turnId, callId, qualifiedName, alias, kind, classification, args}\n" +
    "answered {approved, scope?, who?, reason?, decidedBy?}, and, when an MCP provider asks the user during a call,\n" +
    "  elicitation.request {sessionId, turnId, callId, qualifiedName, provider, mode, message, requestedSchema?, url?}\n" +
    "answered {action: accept|decline|cancel, content?, who?}. Ends when stdin closes. The protocol is described in the @openworker/cli README.\n" +
    "A model for turn.run comes from this command line: --script FILE, or --base-url URL --model NAME.\n" +
    "--mcp: tools/list gives the bundle's selected tools by model alias (or --tool-names published) with\n" +
    "their published title, schemas, annotations and icons; each tools/call runs through the session's\n" +
    "pipeline (validation, policy, journal, limits). Approvals the policy leaves to a person are\n" +
    "answered by --approve (default no: an MCP client is not a person at this terminal; ask needs --http).",
  async run(context) {
    const stdio = context.options.stdio === true;
    const mcp = context.options.mcp === true;
    if (stdio === mcp) throw usageError("serve needs exactly one of --stdio or --mcp");
    // An option that does not apply would be silently ignored: a policy the user believes in, say.
    const foreign = stdio ? ["bundle", "http", "policy", "approve", "max-sessions", "idle-timeout", "tool-names"] : ["script"];
    const given = foreign.find((name) => context.options[name] !== undefined);
    if (given !== undefined) {
      throw usageError(
        stdio
          ? `serve --stdio: --${given} applies to serve --mcp only (the host sends bundle and policy with each session.open, and answers approvals itself)`
          : `serve --mcp: --${given} applies to serve --stdio only (an MCP server runs no model)`,
      );
    }
    const elicitationTimeoutMs = elicitationTimeoutOption(stringOption(context, "elicitation-timeout"));
    if (mcp) {
      const { serveMcp } = await import("../mcp/serve-mcp.js");
      return serveMcp(context, elicitationTimeoutMs);
    }
    const { HarnessServer } = await import("../stdio/harness-server.js");
    const server = new HarnessServer(
      context.stdin,
      context.stdout,
      ({ approver, elicitor }) =>
        openRuntime(context, { approver, elicitor, elicitationTimeoutMs, scriptFile: stringOption(context, "script"), needsModel: false }),
      context.signal,
    );
    await server.finished;
    // `shutdown` ends the harness even while the host keeps its end of stdin open.
    (context.stdin as { destroy?: () => void }).destroy?.();
    return EXIT_CODES.ok;
  },
};

/** `--elicitation-timeout SECONDS` in milliseconds: 1–999999 s, 10 minutes when not given. */
function elicitationTimeoutOption(text: string | undefined): number {
  if (text === undefined) return 600_000;
  const seconds = /^\d{1,6}$/.test(text) ? Number(text) : 0;
  if (seconds < 1) throw usageError(`--elicitation-timeout must be a whole number of seconds from 1 to 999999, got ${JSON.stringify(text)}`);
  return seconds * 1000;
}
