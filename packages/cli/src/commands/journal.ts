import type { CallSummary } from "@openworker/journal";
import { OpenWorkerError } from "@openworker/tools-sdk";
import type { CommandContext, CommandSpec } from "../cli/command.js";
import { CLI_ERROR_CODES, EXIT_CODES, usageError } from "../cli/errors.js";
import { clip, table } from "../cli/terminal.js";
import { reportJournalOpening } from "../setup/runtime.js";
import { type JournalSource, openJournalSource } from "./journal-source.js";

const JOURNAL_DETAILS =
  "Reads the journal at --journal PATH (default <workspace>/.openworker/journal.db) read-only, beside a running writer;\n" +
  "--journal postgres://… reads a PostgreSQL journal (@openworker/journal-postgres) the same way.";

/** `journal sessions`: every session the journal holds. */
export const journalSessions: CommandSpec = {
  words: ["journal", "sessions"],
  summary: "List the journal's sessions",
  usage: "[--json]",
  positionals: { min: 0, max: 0 },
  listing: true,
  options: {},
  details: JOURNAL_DETAILS,
  run: (context) =>
    withJournal(context, async (journal) => {
      const sessions = await journal.sessions();
      return printListing(context, sessions, ["session", "opened", "closed", "calls", "open calls", "identity"], (session) => [
        session.sessionId,
        session.openedAt,
        session.closedAt ?? "open",
        String(session.calls),
        String(session.openCalls),
        session.executionIdentity.slice(0, 23),
      ]);
    }),
};

/** `journal show <id>`: one session and its calls. */
export const journalShow: CommandSpec = {
  words: ["journal", "show"],
  summary: "Show one session: identity, and each call with its approval and outcome",
  usage: "<session-id> [--json]",
  positionals: { min: 1, max: 1 },
  listing: true,
  options: {},
  details: JOURNAL_DETAILS,
  run: (context) =>
    withJournal(context, async (journal) => {
      const sessionId = context.positionals[0]!;
      const session = await journal.session(sessionId);
      if (!session) throw unknownSession(sessionId);
      const calls = await journal.calls(sessionId);
      const sandboxed = await sandboxedProviders(journal, sessionId);
      if (context.terminal.json) {
        context.terminal.printJson({ session, calls, ...(sandboxed === undefined ? {} : { sandboxedProviders: sandboxed }) });
        return EXIT_CODES.ok;
      }
      const { terminal } = context;
      terminal.line(`session   ${session.sessionId}`);
      terminal.line(`identity  ${session.executionIdentity}`);
      terminal.line(`bundle    ${session.bundleDir ?? "-"}`);
      terminal.line(`workspace ${session.workspace}`);
      // A4: the sandbox each sandbox-placed provider ran in, as its identity recorded it.
      for (const [namespace, launch] of Object.entries(sandboxed ?? {}))
        terminal.line(`sandbox   ${namespace}: ${JSON.stringify((launch as { sandbox?: unknown }).sandbox ?? {})}`);
      terminal.line(`opened    ${session.openedAt}   closed ${session.closedAt ?? "(open)"}`);
      terminal.line(`records   ${session.records}`);
      // M8: the OAuth scopes a call ran under, when any call of the session ran under some.
      const authorized = calls.some((call) => call.authorizedScopes !== undefined);
      // M9: what a provider asked the user during a call, and how it was answered and by whom.
      const elicited = calls.some((call) => call.elicitations !== undefined);
      const rows = calls.map((call) => [
        call.callId,
        call.qualifiedName,
        call.decision ? `${call.decision} (${call.decidedBy})` : "-",
        // A denied call has no call_finished: its denial is its terminal record.
        `${call.outcome ?? (call.decision === "denied" ? "denied" : call.started ? "running" : "-")}${call.code ? ` ${call.code}` : ""}`,
        ...(authorized ? [call.authorizedScopes === undefined ? "-" : call.authorizedScopes.join(" ") || "(none named)"] : []),
        ...(elicited ? [elicitationsText(call.elicitations)] : []),
      ]);
      const header = ["call", "tool", "approval", "outcome", ...(authorized ? ["authorized scopes"] : []), ...(elicited ? ["asked the user"] : [])];
      await terminal.stream(table([header, ...rows]), { signal: context.signal });
      return EXIT_CODES.ok;
    }),
};

/** `journal verify [id]`: check the hash chains. */
export const journalVerify: CommandSpec = {
  words: ["journal", "verify"],
  summary: "Verify the hash chain of every session (or one); exit 1 on a break",
  usage: "[session-id] [--json]",
  positionals: { min: 0, max: 1 },
  listing: true,
  options: {},
  details: `${JOURNAL_DETAILS}\nEvery record is hashed onto its session's chain; a changed, missing or reordered record breaks it.`,
  run: (context) =>
    withJournal(context, async (journal) => {
      const sessionId = context.positionals[0];
      if (sessionId !== undefined && !(await journal.session(sessionId))) throw unknownSession(sessionId);
      const report = await journal.verify(sessionId);
      if (context.terminal.json) {
        context.terminal.printJson(report);
        return report.ok ? EXIT_CODES.ok : EXIT_CODES.failed;
      }
      const { terminal } = context;
      const scope = sessionId === undefined ? `${report.sessions} session(s)` : `session ${sessionId}`;
      if (report.ok) {
        terminal.line(`${terminal.paint("green", "verified")}: ${scope}, ${report.records} record(s), every chain intact`);
        return EXIT_CODES.ok;
      }
      const at = report.firstBreak;
      terminal.line(
        `${terminal.paint("red", "BROKEN")}: ${scope}; first break in ${at?.sessionId} at record ${at?.seq}: ${clip(at?.problem ?? "unknown", 300)}`,
      );
      return EXIT_CODES.failed;
    }),
};

/** `journal export <id>`: the session as JSON lines. */
export const journalExport: CommandSpec = {
  words: ["journal", "export"],
  summary: "Export one session as JSON lines (canonical records with prevHash and hash)",
  usage: "<session-id>",
  positionals: { min: 1, max: 1 },
  options: {},
  details: `${JOURNAL_DETAILS}\nOne record per line. To check a line: drop prevHash and hash, canonicalize, and\n` + "sha256(prevHash + text) is hash.",
  run: (context) =>
    withJournal(context, async (journal) => {
      const sessionId = context.positionals[0]!;
      if (!(await journal.session(sessionId))) throw unknownSession(sessionId);
      await context.terminal.stream(await journal.exportSession(sessionId), { signal: context.signal, exact: true });
      return EXIT_CODES.ok;
    }),
};

/** `journal approvals`: the remembered approvals. */
export const journalApprovals: CommandSpec = {
  words: ["journal", "approvals"],
  summary: "List remembered approvals (an [s] answer, or a once approval not yet used)",
  usage: "[--tool NAME] [--identity ID] [--json]",
  positionals: { min: 0, max: 0 },
  listing: true,
  options: {
    tool: { type: "string", value: "NAME", description: "only this tool's (qualified name)" },
    identity: { type: "string", value: "ID", description: "only those of this execution identity (owid3:…, as journal show prints it)" },
  },
  details:
    `${JOURNAL_DETAILS}\nA remembered approval answers for every later session with the same execution identity,\n` +
    "until the tool's schema, catalog entry or provider changes, or it is revoked.",
  run: (context) =>
    withJournal(context, async (journal) => {
      const approvals = await journal.approvals(approvalFilter(context));
      return printListing(context, approvals, ["tool", "scope", "decided by", "at", "identity"], (approval) => [
        approval.qualifiedName,
        approval.scope,
        `${approval.by}${approval.who ? ` (${approval.who})` : ""}`,
        approval.decidedAt,
        approval.executionIdentity.slice(0, 23),
      ]);
    }),
};

/** `journal revoke-approvals`: forget remembered approvals. */
export const journalRevokeApprovals: CommandSpec = {
  words: ["journal", "revoke-approvals"],
  summary: "Forget remembered approvals: the next call of those tools asks again",
  usage: "(--tool NAME | --identity ID | --all)",
  positionals: { min: 0, max: 0 },
  options: {
    tool: { type: "string", value: "NAME", description: "forget this tool's (qualified name)" },
    identity: { type: "string", value: "ID", description: "forget those of this execution identity" },
    all: { type: "boolean", description: "forget every remembered approval" },
  },
  details:
    "Opens the journal at --journal PATH as its writer: stop the host that writes it first (one writer at a time).\n" +
    "A PostgreSQL journal (--journal postgres://…) is changed for every host at once, beside running hosts.\n" +
    "The journal's records of past decisions stay; only what would answer future calls is forgotten.",
  run: async (context) => {
    const filter = approvalFilter(context);
    if (context.options.all !== true && filter.qualifiedName === undefined && filter.executionIdentity === undefined) {
      throw usageError("journal revoke-approvals needs --tool NAME, --identity ID or --all");
    }
    if (context.options.all === true && (filter.qualifiedName !== undefined || filter.executionIdentity !== undefined)) {
      throw usageError("journal revoke-approvals: --all forgets every approval; leave out --tool and --identity, or drop --all");
    }
    const journal = await openJournalSource(context, { write: true });
    try {
      // Opening as the writer recovers what a crash left: say so, as every writing command does.
      reportJournalOpening(context, journal);
      const forgotten = await journal.revokeApprovals(filter);
      context.terminal.line(`forgot ${forgotten} remembered approval(s); the next call of ${filter.qualifiedName ?? "those tools"} asks again`);
      return EXIT_CODES.ok;
    } finally {
      await journal.close();
    }
  },
};

/** A listing: the items as JSON with `--json`, else a table streamed to the terminal. */
async function printListing<T>(context: CommandContext, items: readonly T[], header: readonly string[], row: (item: T) => string[]): Promise<number> {
  if (context.terminal.json) context.terminal.printJson(items);
  else await context.terminal.stream(table([header, ...items.map(row)]), { signal: context.signal });
  return EXIT_CODES.ok;
}

function approvalFilter(context: CommandContext): { qualifiedName?: string; executionIdentity?: string } {
  const tool = context.options.tool;
  const identity = context.options.identity;
  return {
    ...(typeof tool === "string" ? { qualifiedName: tool } : {}),
    ...(typeof identity === "string" ? { executionIdentity: identity } : {}),
  };
}

async function withJournal(context: CommandContext, work: (journal: JournalSource) => number | Promise<number>): Promise<number> {
  const journal = await openJournalSource(context);
  try {
    return await work(journal);
  } finally {
    await journal.close();
  }
}

function unknownSession(sessionId: string): OpenWorkerError {
  return new OpenWorkerError(CLI_ERROR_CODES.SESSION_UNKNOWN, `the journal holds no session ${JSON.stringify(sessionId)}`);
}

/** The placement and policy of the session's sandbox-placed providers, from its `session_opened` record (A2, A4). */
async function sandboxedProviders(journal: JournalSource, sessionId: string): Promise<Record<string, unknown> | undefined> {
  // The session's first record; the iteration stops there.
  for (const record of await journal.records(sessionId)) {
    if (record.kind !== "session_opened") return undefined;
    return (record as { identityInputs?: { sandboxedProviders?: Record<string, unknown> } }).identityInputs?.sandboxedProviders;
  }
  return undefined;
}

/** A call's elicitations as `journal show` lists them: `form: accept (person ada)`, one after another. */
function elicitationsText(elicitations: CallSummary["elicitations"]): string {
  if (elicitations === undefined) return "-";
  return elicitations
    .map(
      (asked) =>
        `${asked.mode}: ${asked.action === undefined ? "unanswered" : `${asked.action} (${asked.by}${asked.who === undefined ? "" : ` ${asked.who}`})`}`,
    )
    .join(", ");
}
