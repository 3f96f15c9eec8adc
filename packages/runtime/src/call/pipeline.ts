import type { ResolvedSelection, ResolvedTool } from "@openworker/bundle-resolver";
import { OpenWorkerError, type JsonValue, type ProgressEvent } from "@openworker/tools-sdk";
import { JOURNAL_ERRORS } from "@openworker/journal";
import {
  argumentsFailure,
  executeTool,
  FAULT_CODES,
  MAX_ARGUMENT_DEPTH,
  readArgumentsText,
  readHostArguments,
  schemaMismatchMessage,
  type ArgumentsReading,
  type CallOutcome,
  type ExecutionResult,
  type LimitName,
} from "@openworker/tools-sdk/internal/execution";
import { RUNTIME_ERROR_CODES } from "../errors.js";
import { decideApproval, standingVerdict, type ApprovalVerdict } from "./approval.js";
import { callElicitation, type Elicitor } from "./elicitation.js";
import type { CallEnvironment } from "./environment.js";
import { holdImages, type PendingImage } from "./images.js";
import { clip, messageOf } from "../describe.js";

/** One call to put through the pipeline. */
export interface CallRequest {
  readonly turnId: string;
  readonly callId: string;
  /** The alias the model used (or the alias of the qualified name a host called). */
  readonly alias: string;
  /**
   * The exact name a host called (host-driven calls): the tool the alias resolves to must
   * have this name. Aliases are not unique spellings (`a.b__c` and `a.b.c` share one),
   * and names are exact (N7): no other spelling reaches a tool.
   */
  readonly qualifiedName?: string;
  /** JSON text as the model sent it, or parsed arguments (from a host, or a provider that parses). */
  readonly args: { readonly text: string } | { readonly json: JsonValue | object | undefined };
  readonly signal: AbortSignal;
  /**
   * A refusal decided before the pipeline (e.g. past the calls-per-attempt cap): journaled,
   * never run; under `qualifiedName` when it names a selected tool the turn could not
   * resolve (its provider was down).
   */
  readonly refusal?: { readonly code: string; readonly message: string; readonly qualifiedName?: string };
  /** Told when the call is approved, before it starts: a host call counts from then as using its tool (T5). */
  readonly onApproved?: () => void;
  /** Told each progress event the call's bounded reporter accepted (E2), redacted as the journal keeps it (E6). */
  readonly onProgress?: (event: ProgressEvent) => void;
  /** Answers this call's elicitations instead of the runtime's elicitor (M9). */
  readonly onElicitation?: Elicitor;
}

/** The approval a call got, as its report tells the host: what the journal's `approval_decided` says. */
export interface CallApproval {
  readonly approved: boolean;
  /** A person (through the host's approver, or a remembered answer), the policy's rule, or bypass mode. */
  readonly by: "person" | "policy" | "bypass";
  /** Who answered (the approver's `who`), or the policy's name. */
  readonly who?: string;
  readonly scope: "once" | "session";
  /** Why, when there is a reason (redacted, E6). */
  readonly reason?: string;
}

/** The bytes of one audio clip of a call's result. */
export interface CallAudio {
  readonly mimeType: string;
  readonly data: Uint8Array;
}

/** How one call ended, for the model, the host and the turn loop. */
export interface CallReport {
  readonly callId: string;
  readonly alias: string;
  readonly qualifiedName: string | undefined;
  /** The terminal outcome, or `denied` when approval said no (no tool ran). */
  readonly outcome: CallOutcome | "denied";
  readonly code?: string;
  readonly message?: string;
  /** The structured result of a successful call (redacted, E6). */
  readonly json?: JsonValue;
  /** What the model is told. */
  readonly modelText: string;
  readonly isError: boolean;
  /** Images awaiting their consent recheck and delivery (T4). */
  readonly images: readonly PendingImage[];
  /**
   * Audio clips an MCP result carried (M7), for a host that delivers them (`serve --mcp`
   * to its client): never given to the model nor journaled (T4), where the JSON keeps each
   * clip's reference (`{ type: "audio", audio: index, bytes, sha256 }`). Absent when there are none.
   */
  readonly audio?: readonly CallAudio[];
  /** A fault (E4): the turn stops and nothing is replayed. */
  readonly stopsTurn: boolean;
  /**
   * The approval step's verdict; absent when the call ended before it (an unknown
   * alias, invalid arguments, a refusal). A host shows who approved without reading the journal.
   */
  readonly approval?: CallApproval;
}

const FAULTS: ReadonlySet<CallOutcome> = new Set(["timed_out", "cancelled", "limit_exceeded", "crashed"]);
const UNSELECTED = "(unselected)";

/**
 * The governed call, one implementation for native and MCP tools: alias → selected tool
 * (never a search), journal the request, validate the arguments (E5), approval (A1),
 * journal `started` durably, run within the limits (E1–E3), journal exactly one terminal
 * record (A3), and tell the model. A fault stops the turn (E4); a `ToolError`, a denial or
 * invalid arguments go back to the model and the turn goes on.
 */
export async function runGovernedCall(environment: CallEnvironment, selection: ResolvedSelection, request: CallRequest): Promise<CallReport> {
  const { journal, redactor, sessionId } = environment;
  // A refusal's name came from the host or the model: journaled, reported and announced
  // redacted like any text they give (E6).
  const refused = request.refusal?.qualifiedName;
  if (refused !== undefined && request.refusal !== undefined && redactor.text(refused) !== refused)
    request = { ...request, refusal: { ...request.refusal, qualifiedName: redactor.text(refused) } };
  const { callId, turnId } = request;
  const byAlias = selection.byAlias(request.alias);
  const resolved = request.qualifiedName === undefined || byAlias?.qualifiedName === request.qualifiedName ? byAlias : undefined;
  const parsed = parseArguments(request.args);
  const journaledArgs =
    "tooLarge" in parsed
      ? { omitted: `${parsed.tooLarge} bytes of arguments` }
      : "tooDeep" in parsed
        ? { omitted: `arguments nested deeper than ${MAX_ARGUMENT_DEPTH} levels` }
        : redactor.json(parsed.ok ? parsed.value : "text" in request.args ? request.args.text : null);
  const qualifiedName = resolved?.qualifiedName ?? request.refusal?.qualifiedName ?? UNSELECTED;
  journal.callRequested({
    sessionId,
    turnId,
    callId,
    alias: shownAlias(environment, request.alias),
    qualifiedName,
    args: journaledArgs,
  });
  if (environment.events.active) {
    environment.events.emit({
      type: "call_requested",
      sessionId,
      turnId,
      callId,
      qualifiedName,
      ...(resolved ? { kind: resolved.kind } : {}),
      args: journaledArgs,
    });
  }
  // From here the call is journaled: whatever fails, it gets exactly one terminal record (A3).
  try {
    return await decideAndRun(environment, selection, request, resolved, parsed, journaledArgs);
  } catch (error) {
    return pipelineFailed(environment, request, resolved, error);
  }
}

async function decideAndRun(
  environment: CallEnvironment,
  selection: ResolvedSelection,
  request: CallRequest,
  resolved: ResolvedTool | undefined,
  parsed: ArgumentsReading,
  journaledArgs: JsonValue,
): Promise<CallReport> {
  const { journal, redactor, sessionId } = environment;
  const { callId } = request;
  if (request.refusal) return refuse(environment, request, resolved, request.refusal.code, request.refusal.message);
  if (!resolved) {
    const message =
      request.qualifiedName === undefined
        ? `no selected tool has the alias ${JSON.stringify(shownAlias(environment, request.alias))}; use only the tools you were given`
        : `no selected tool is named ${JSON.stringify(shownAlias(environment, request.qualifiedName))}; names are exact, see the session's selection${aliasHint(selection, request.qualifiedName)}`;
    return refuse(environment, request, undefined, RUNTIME_ERROR_CODES.UNKNOWN_TOOL, message);
  }
  if (!parsed.ok) {
    const { code, message } = argumentsFailure(parsed);
    return refuse(environment, request, resolved, code, message);
  }
  const check = resolved.validator.check(parsed.value);
  if (!check.ok) return refuse(environment, request, resolved, RUNTIME_ERROR_CODES.ARGUMENTS_INVALID, schemaMismatchMessage(resolved.alias, check.message));

  // Cancelled before it was decided (a host call whose signal had already aborted): nobody
  // is asked about a call that will not run, and it ends cancelled, not denied.
  if (request.signal.aborted) return finish(environment, request, resolved, notCalled("the call was cancelled before it started"), undefined);
  const verdict = standingVerdict(environment, resolved) ?? (await decideApproval(environment, resolved, journaledArgs, request));
  const approval = approvalOf(environment, verdict);
  journal.approvalDecided({
    sessionId,
    callId,
    decision: verdict.approved ? "approved" : "denied",
    by: verdict.by,
    who: verdict.who || undefined,
    scope: verdict.scope,
    key: verdict.key,
    reason: approval.reason,
  });
  if (environment.events.active) {
    const { approved, by, scope } = verdict;
    environment.events.emit({
      type: "approval_decided",
      sessionId,
      turnId: request.turnId,
      callId,
      qualifiedName: resolved.qualifiedName,
      approved,
      by,
      scope,
    });
  }
  if (!verdict.approved) {
    const message = `the call was not approved${verdict.reason ? ` (${verdict.reason})` : ""}; do not retry it unless the user asks`;
    emitFinished(environment, request, resolved, "denied", RUNTIME_ERROR_CODES.APPROVAL_DENIED);
    return report(request, resolved, {
      outcome: "denied",
      code: RUNTIME_ERROR_CODES.APPROVAL_DENIED,
      message: redactor.text(message),
      modelText: `Error ${RUNTIME_ERROR_CODES.APPROVAL_DENIED}: ${redactor.text(message)}`,
      isError: true,
      approval,
    });
  }

  request.onApproved?.();
  // Cancelled before it could start (a host call whose signal had already aborted, a session
  // closing as it was decided): it never starts, and the journal does not say it did.
  if (request.signal.aborted) return finish(environment, request, resolved, notCalled("the call was cancelled before it started"), approval);
  // M8: the scopes an OAuth provider's token grants the call (never the token).
  const scopes = resolved.kind === "mcp" ? environment.mcp.authorizedScopes(resolved.provider.namespace) : undefined;
  await journal.callStarted(scopes === undefined ? { sessionId, callId } : { sessionId, callId, authorizedScopes: scopes });
  // Cancelled while its start was made durable (a session closing in the same tick): the
  // record stands, the tool is not called, and the terminal record says so.
  if (request.signal.aborted)
    return finish(environment, request, resolved, notCalled("the call was cancelled as it started; the tool was not called"), approval);
  if (environment.events.active)
    environment.events.emit({ type: "call_started", sessionId, turnId: request.turnId, callId, qualifiedName: resolved.qualifiedName });
  const result = await execute(environment, resolved, parsed.value, request);
  return finish(environment, request, resolved, result, approval);
}

// A standing verdict (bypass, a policy rule) is one object per selected tool: its view is made once.
const approvals = new WeakMap<ApprovalVerdict, CallApproval>();

/** The verdict as the report and the journal give it: no key, the reason redacted (E6). */
function approvalOf(environment: CallEnvironment, verdict: ApprovalVerdict): CallApproval {
  let approval = approvals.get(verdict);
  if (approval === undefined) {
    const { approved, by, who, scope, reason } = verdict;
    approval = Object.freeze({ approved, by, scope, ...(who ? { who } : {}), ...(reason ? { reason: environment.redactor.text(reason) } : {}) });
    approvals.set(verdict, approval);
  }
  return approval;
}

/** The result of a call cancelled before its tool was called. */
function notCalled(message: string): ExecutionResult {
  return {
    outcome: "cancelled",
    error: { code: FAULT_CODES.cancelled, message },
    progress: { accepted: 0, dropped: 0, jsonBytes: 0, breaches: [] },
    durationMs: 0,
  };
}

function execute(environment: CallEnvironment, resolved: ResolvedTool, args: JsonValue, request: CallRequest): Promise<ExecutionResult> {
  const { journal, redactor, sessionId, events } = environment;
  const onProgress = (event: ProgressEvent) => {
    const clean = redactor.json(event);
    journal.callProgress({ sessionId, callId: request.callId, event: clean as JsonValue });
    events.emit({ type: "call_progress", sessionId, callId: request.callId, event: clean });
    if (request.onProgress === undefined) return;
    try {
      request.onProgress(clean as ProgressEvent);
    } catch {
      // The host's listener must not change what the call does (as for event listeners).
    }
  };
  const timeout = environment.callTimeoutMs === undefined ? {} : { timeoutMs: environment.callTimeoutMs };
  if (resolved.kind === "native") {
    return executeTool(resolved.tool, args, {
      toolName: resolved.qualifiedName,
      sessionId,
      turnId: request.turnId,
      callId: request.callId,
      workspace: environment.workspace,
      signal: request.signal,
      onProgress,
      ...timeout,
    });
  }
  const provider = resolved.provider.namespace;
  // M9: what the provider asks the user during the call is journaled with how it was answered.
  const elicitation = callElicitation(
    environment,
    { turnId: request.turnId, callId: request.callId, qualifiedName: resolved.qualifiedName, provider },
    request.onElicitation ?? environment.elicitor,
  );
  // The entry the approval was bound to: a discovery since (a host's prepare, a reconnect)
  // may have taken a catalog that describes the tool otherwise (M3).
  return environment.mcp
    .callTool(provider, resolved.remoteName, args, {
      signal: request.signal,
      onProgress,
      toolFingerprint: resolved.catalogFingerprint,
      ...(elicitation.onElicitation === undefined ? {} : { onElicitation: elicitation.onElicitation }),
      onElicitationAnswered: elicitation.onElicitationAnswered,
      ...timeout,
    })
    .finally(elicitation.end);
}

function finish(
  environment: CallEnvironment,
  request: CallRequest,
  resolved: ResolvedTool,
  result: ExecutionResult,
  approval: CallApproval | undefined,
): CallReport {
  const { journal, redactor, sessionId } = environment;
  const images = result.outcome === "succeeded" && result.output && result.output.images.length > 0 ? holdImages(result.output.images, redactor) : [];
  const json = result.output ? redactor.json(result.output.json) : undefined;
  const message = result.error ? redactor.text(result.error.message) : undefined;
  const errorCode = result.error ? cleanCode(environment, result.error.code) : undefined;
  if (result.progress.dropped > 0) {
    // E2: progress past a bound was dropped; the journal keeps the count and which bounds.
    const breaches = result.progress.breaches.map((breach) => ({ limit: breach.limit, max: breach.max, message: breach.message }));
    journal.callProgress({ sessionId, callId: request.callId, event: { droppedEvents: result.progress.dropped, breaches } });
  }
  // Fields left out are `undefined`, which the journal leaves out of the record.
  journal.callFinished({
    sessionId,
    callId: request.callId,
    outcome: result.outcome,
    code: errorCode,
    message,
    result: json,
    imageDigests: images.length > 0 ? images.map((image) => image.digest) : undefined,
    breach: result.breach && { ...result.breach },
  });
  emitFinished(environment, request, resolved, result.outcome, errorCode, result.breach?.limit, json);
  if (result.outcome === "succeeded") {
    const text = redactor.text(result.output!.text);
    const succeeded = report(request, resolved, {
      outcome: "succeeded",
      json: json!,
      modelText: text,
      isError: false,
      images,
      ...(approval ? { approval } : {}),
    });
    const audio = result.output!.audio;
    return audio === undefined || audio.length === 0 ? succeeded : { ...succeeded, audio };
  }
  const stopsTurn = FAULTS.has(result.outcome);
  const code = errorCode ?? result.outcome.toUpperCase();
  const modelText = stopsTurn
    ? `The call ended ${result.outcome.replace("_", " ")} (${code}: ${message}). The turn was stopped; the call may have had effects and was not retried.`
    : `Error ${code}: ${message}`;
  return report(request, resolved, {
    outcome: result.outcome,
    code,
    ...(message ? { message } : {}),
    modelText,
    isError: true,
    stopsTurn,
    ...(approval ? { approval } : {}),
  });
}

/**
 * The last line of defence: something in the pipeline threw after the call was journaled.
 * The call ends `crashed` (a fault: the turn stops, nothing is replayed, E4) with one
 * terminal record (A3), unless the journal itself is what failed: then there is nowhere
 * to record it, and the error goes up.
 */
function pipelineFailed(environment: CallEnvironment, request: CallRequest, resolved: ResolvedTool | undefined, error: unknown): CallReport {
  if (OpenWorkerError.isInstance(error) && error.code.startsWith("JOURNAL_")) {
    // Nowhere to record the end, but whoever watches the events learns the call is over.
    emitFinished(environment, request, resolved, "crashed", error.code);
    throw error;
  }
  const code = RUNTIME_ERROR_CODES.CALL_PIPELINE_FAILED;
  const message = environment.redactor.text(`the call failed inside the runtime: ${clip(messageOf(error), 500)}`);
  try {
    environment.journal.callFinished({ sessionId: environment.sessionId, callId: request.callId, outcome: "crashed", code, message });
  } catch (journalError) {
    // The failure came after the call's terminal record (or its denial): that record stands.
    if (!OpenWorkerError.hasCode(journalError, JOURNAL_ERRORS.TERMINAL_EXISTS) && !OpenWorkerError.hasCode(journalError, JOURNAL_ERRORS.CALL_DENIED))
      throw journalError;
  }
  emitFinished(environment, request, resolved, "crashed", code);
  return report(request, resolved, {
    outcome: "crashed",
    code,
    message,
    modelText: `The call ended crashed (${code}: ${message}). The turn was stopped; the call may have had effects and was not retried.`,
    isError: true,
    stopsTurn: true,
  });
}

/**
 * A failed call's code as journaled, reported and told to the model: a tool's own code
 * (a `ToolError`'s, an MCP server's) is its text like the message, and one holding a secret
 * is replaced whole by `CODE_REDACTED` (E6), since a masked code would not be a code.
 */
function cleanCode(environment: CallEnvironment, code: string): string {
  const { redactor } = environment;
  return redactor.text(code) === code ? code : RUNTIME_ERROR_CODES.CODE_REDACTED;
}

/** The alias as journaled and quoted back: redacted (E6), and clipped when a model sent a huge one. */
function shownAlias(environment: CallEnvironment, alias: string): string {
  if (alias === "") return "(empty)";
  const clipped = alias.length > MAX_SHOWN_ALIAS ? `${clip(alias, MAX_SHOWN_ALIAS)} (${alias.length} characters)` : alias;
  return environment.redactor.text(clipped);
}

/**
 * A host that passes a model alias (`shipping__track`) where the qualified name belongs:
 * the name of the selected tool it is the alias of, as a hint. Empty otherwise.
 */
function aliasHint(selection: ResolvedSelection, name: string): string {
  const tool = name.includes(".") ? undefined : selection.byAlias(name);
  return tool === undefined ? "" : `; did you mean ${JSON.stringify(tool.qualifiedName)}? (${JSON.stringify(name)} is its model alias)`;
}

/** Aliases fit 80 bytes (N4); a longer name from a model is shown clipped to this many characters. */
const MAX_SHOWN_ALIAS = 200;

function refuse(environment: CallEnvironment, request: CallRequest, resolved: ResolvedTool | undefined, code: string, message: string): CallReport {
  const clean = environment.redactor.text(message);
  environment.journal.callFinished({ sessionId: environment.sessionId, callId: request.callId, outcome: "failed", code, message: clean });
  emitFinished(environment, request, resolved, "failed", code);
  return report(request, resolved, { outcome: "failed", code, message: clean, modelText: `Error ${code}: ${clean}`, isError: true });
}

function emitFinished(
  environment: CallEnvironment,
  request: CallRequest,
  resolved: ResolvedTool | undefined,
  outcome: CallOutcome | "denied",
  code: string | undefined,
  limit?: LimitName,
  result?: JsonValue,
): void {
  if (!environment.events.active) return;
  environment.events.emit({
    type: "call_finished",
    sessionId: environment.sessionId,
    turnId: request.turnId,
    callId: request.callId,
    qualifiedName: resolved?.qualifiedName ?? request.refusal?.qualifiedName ?? UNSELECTED,
    outcome,
    ...(code ? { code } : {}),
    ...(limit ? { limit } : {}),
    ...(result !== undefined ? { result } : {}),
  });
}

function report(
  request: CallRequest,
  resolved: ResolvedTool | undefined,
  fields: Omit<CallReport, "callId" | "alias" | "qualifiedName" | "images" | "stopsTurn" | "approval"> & {
    approval?: CallApproval;
    images?: readonly PendingImage[];
    stopsTurn?: boolean;
  },
): CallReport {
  // Built field by field: properties followed by a spread leave V8's fast path (~100 ns).
  const report: { -readonly [K in keyof CallReport]: CallReport[K] } = {
    callId: request.callId,
    alias: request.alias,
    qualifiedName: resolved?.qualifiedName ?? request.refusal?.qualifiedName,
    outcome: fields.outcome,
    modelText: fields.modelText,
    isError: fields.isError,
    images: fields.images ?? [],
    stopsTurn: fields.stopsTurn ?? false,
  };
  if (fields.code !== undefined) report.code = fields.code;
  if (fields.message !== undefined) report.message = fields.message;
  if (fields.json !== undefined) report.json = fields.json;
  if (fields.approval !== undefined) report.approval = fields.approval;
  return report;
}

function parseArguments(args: CallRequest["args"]): ArgumentsReading {
  return "json" in args ? readHostArguments(args.json) : readArgumentsText(args.text);
}
