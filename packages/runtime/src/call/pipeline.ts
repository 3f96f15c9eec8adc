import type { ResolvedSelection, ResolvedTool } from "@openworker/bundle-resolver";
import { LIMITS, OpenWorkerError, utf8Bytes, type JsonValue, type ProgressEvent } from "@openworker/tools-sdk";
import { JOURNAL_ERRORS } from "@openworker/journal";
import { executeTool, FAULT_CODES, type CallOutcome, type ExecutionResult } from "@openworker/tools-sdk/execution";
import { RUNTIME_ERROR_CODES } from "../errors.js";
import { decideApproval, standingVerdict } from "./approval.js";
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
  readonly args: { readonly text: string } | { readonly json: JsonValue };
  readonly signal: AbortSignal;
  /** A refusal decided before the pipeline (e.g. past the calls-per-attempt cap): journaled, never run. */
  readonly refusal?: { readonly code: string; readonly message: string };
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
  /** A fault (E4): the turn stops and nothing is replayed. */
  readonly stopsTurn: boolean;
}

const FAULTS: ReadonlySet<CallOutcome> = new Set(["timed_out", "cancelled", "limit_exceeded", "crashed"]);
const UNSELECTED = "(unselected)";

/**
 * Arguments larger than this are refused unread (`ARGUMENTS_TOO_LARGE`), and the journal
 * keeps a note of their size instead of the bytes: a model cannot bloat the journal.
 */
export const MAX_ARGUMENT_BYTES = LIMITS.resultBytes;

/**
 * The governed call, one implementation for native and MCP tools: alias → selected tool
 * (never a search), journal the request, validate the arguments (E5), approval (A1),
 * journal `started` durably, run within the limits (E1–E3), journal exactly one terminal
 * record (A3), and tell the model. A fault stops the turn (E4); a `ToolError`, a denial or
 * invalid arguments go back to the model and the turn goes on.
 */
export async function runGovernedCall(
  environment: CallEnvironment,
  selection: ResolvedSelection,
  request: CallRequest,
): Promise<CallReport> {
  const { journal, redactor, sessionId } = environment;
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
  journal.callRequested({
    sessionId,
    turnId,
    callId,
    alias: shownAlias(environment, request.alias),
    qualifiedName: resolved?.qualifiedName ?? UNSELECTED,
    args: journaledArgs,
  });
  // From here the call is journaled: whatever fails, it gets exactly one terminal record (A3).
  try {
    return await decideAndRun(environment, request, resolved, parsed, journaledArgs);
  } catch (error) {
    return pipelineFailed(environment, request, resolved, error);
  }
}

async function decideAndRun(
  environment: CallEnvironment,
  request: CallRequest,
  resolved: ResolvedTool | undefined,
  parsed: ParsedArguments,
  journaledArgs: JsonValue,
): Promise<CallReport> {
  const { journal, redactor, sessionId } = environment;
  const { callId } = request;
  if (request.refusal) return refuse(environment, request, resolved, request.refusal.code, request.refusal.message);
  if (!resolved) {
    const message =
      request.qualifiedName === undefined
        ? `no selected tool has the alias ${JSON.stringify(shownAlias(environment, request.alias))}; use only the tools you were given`
        : `no selected tool is named ${JSON.stringify(shownAlias(environment, request.qualifiedName))}; names are exact (N7), see the session's selection`;
    return refuse(environment, request, undefined, RUNTIME_ERROR_CODES.UNKNOWN_TOOL, message);
  }
  if ("tooLarge" in parsed) {
    const message = `arguments are ${parsed.tooLarge} bytes; the limit is ${MAX_ARGUMENT_BYTES}`;
    return refuse(environment, request, resolved, RUNTIME_ERROR_CODES.ARGUMENTS_TOO_LARGE, message);
  }
  if ("tooDeep" in parsed) {
    const message = `arguments nest deeper than ${MAX_ARGUMENT_DEPTH} levels; send flatter arguments`;
    return refuse(environment, request, resolved, RUNTIME_ERROR_CODES.ARGUMENTS_INVALID, message);
  }
  if (!parsed.ok) {
    return refuse(environment, request, resolved, RUNTIME_ERROR_CODES.ARGUMENTS_INVALID, `arguments are not JSON: ${parsed.problem}`);
  }
  const check = resolved.validator.check(parsed.value);
  if (!check.ok) {
    const message = `arguments do not match the input schema of ${resolved.alias}: ${check.message}`;
    return refuse(environment, request, resolved, RUNTIME_ERROR_CODES.ARGUMENTS_INVALID, message);
  }

  const verdict = standingVerdict(environment, resolved) ?? (await decideApproval(environment, resolved, journaledArgs, request));
  journal.approvalDecided({
    sessionId,
    callId,
    decision: verdict.approved ? "approved" : "denied",
    by: verdict.by,
    who: verdict.who || undefined,
    scope: verdict.scope,
    key: verdict.key,
    reason: verdict.reason ? redactor.text(verdict.reason) : undefined,
  });
  if (!verdict.approved) {
    const message = `the call was not approved${verdict.reason ? ` (${verdict.reason})` : ""}; do not retry it unless the user asks`;
    emitFinished(environment, request, resolved, "denied", RUNTIME_ERROR_CODES.APPROVAL_DENIED);
    return report(request, resolved, {
      outcome: "denied",
      code: RUNTIME_ERROR_CODES.APPROVAL_DENIED,
      message: redactor.text(message),
      modelText: `Error ${RUNTIME_ERROR_CODES.APPROVAL_DENIED}: ${redactor.text(message)}`,
      isError: true,
    });
  }

  // Cancelled before it could start (a host call whose signal had already aborted, a session
  // closing as it was decided): it never starts, and the journal does not say it did.
  if (request.signal.aborted) return finish(environment, request, resolved, notCalled("the call was cancelled before it started"));
  await journal.callStarted({ sessionId, callId });
  // Cancelled while its start was made durable (a session closing in the same tick): the
  // record stands, the tool is not called, and the terminal record says so.
  if (request.signal.aborted) return finish(environment, request, resolved, notCalled("the call was cancelled as it started; the tool was not called"));
  if (environment.events.active) environment.events.emit({ type: "call_started", sessionId, turnId: request.turnId, callId, qualifiedName: resolved.qualifiedName });
  const result = await execute(environment, resolved, parsed.value, request);
  return finish(environment, request, resolved, result);
}

/** The result of a call cancelled before its tool was called. */
function notCalled(message: string): ExecutionResult {
  return { outcome: "cancelled", error: { code: FAULT_CODES.cancelled, message }, progress: { accepted: 0, dropped: 0, jsonBytes: 0, breaches: [] }, durationMs: 0 };
}

function execute(
  environment: CallEnvironment,
  resolved: ResolvedTool,
  args: JsonValue,
  request: CallRequest,
): Promise<ExecutionResult> {
  const { journal, redactor, sessionId, events } = environment;
  const onProgress = (event: ProgressEvent) => {
    const clean = redactor.json(event);
    journal.callProgress({ sessionId, callId: request.callId, event: clean as JsonValue });
    events.emit({ type: "call_progress", sessionId, callId: request.callId, event: clean });
  };
  const timeout = environment.callTimeoutMs === undefined ? {} : { timeoutMs: environment.callTimeoutMs };
  if (resolved.kind === "native") {
    return executeTool(resolved.tool, args, {
      sessionId,
      turnId: request.turnId,
      callId: request.callId,
      workspace: environment.workspace,
      signal: request.signal,
      onProgress,
      ...timeout,
    });
  }
  return environment.mcp.callTool(resolved.provider.namespace, resolved.remoteName, args, {
    signal: request.signal,
    onProgress,
    ...timeout,
  });
}

function finish(environment: CallEnvironment, request: CallRequest, resolved: ResolvedTool, result: ExecutionResult): CallReport {
  const { journal, redactor, sessionId } = environment;
  const images = result.outcome === "succeeded" && result.output ? holdImages(result.output.images) : [];
  const json = result.output ? redactor.json(result.output.json) : undefined;
  const message = result.error ? redactor.text(result.error.message) : undefined;
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
    code: result.error?.code,
    message,
    result: json,
    imageDigests: images.length > 0 ? images.map((image) => image.digest) : undefined,
    breach: result.breach && { ...result.breach },
  });
  emitFinished(environment, request, resolved, result.outcome, result.error?.code);
  if (result.outcome === "succeeded") {
    const text = redactor.text(result.output!.text);
    return report(request, resolved, { outcome: "succeeded", json: json!, modelText: text, isError: false, images });
  }
  const stopsTurn = FAULTS.has(result.outcome);
  const code = result.error?.code ?? result.outcome.toUpperCase();
  const modelText = stopsTurn
    ? `The call ended ${result.outcome.replace("_", " ")} (${code}: ${message}). The turn was stopped; the call may have had effects and was not retried.`
    : `Error ${code}: ${message}`;
  return report(request, resolved, { outcome: result.outcome, code, ...(message ? { message } : {}), modelText, isError: true, stopsTurn });
}

/**
 * The last line of defence: something in the pipeline threw after the call was journaled.
 * The call ends `crashed` (a fault: the turn stops, nothing is replayed, E4) with one
 * terminal record (A3), unless the journal itself is what failed: then there is nowhere
 * to record it, and the error goes up.
 */
function pipelineFailed(environment: CallEnvironment, request: CallRequest, resolved: ResolvedTool | undefined, error: unknown): CallReport {
  if (OpenWorkerError.isInstance(error) && error.code.startsWith("JOURNAL_")) throw error;
  const code = RUNTIME_ERROR_CODES.CALL_PIPELINE_FAILED;
  const message = environment.redactor.text(`the call failed inside the runtime: ${clip(messageOf(error), 500)}`);
  try {
    environment.journal.callFinished({ sessionId: environment.sessionId, callId: request.callId, outcome: "crashed", code, message });
  } catch (journalError) {
    // The failure came after the call's terminal record (or its denial): that record stands.
    if (!OpenWorkerError.hasCode(journalError, JOURNAL_ERRORS.TERMINAL_EXISTS) && !OpenWorkerError.hasCode(journalError, JOURNAL_ERRORS.CALL_DENIED)) throw journalError;
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

/** The alias as journaled and quoted back: redacted (E6), and clipped when a model sent a huge one. */
function shownAlias(environment: CallEnvironment, alias: string): string {
  if (alias === "") return "(empty)";
  const clipped = alias.length > MAX_SHOWN_ALIAS ? `${clip(alias, MAX_SHOWN_ALIAS)} (${alias.length} characters)` : alias;
  return environment.redactor.text(clipped);
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
): void {
  if (!environment.events.active) return;
  environment.events.emit({
    type: "call_finished",
    sessionId: environment.sessionId,
    turnId: request.turnId,
    callId: request.callId,
    qualifiedName: resolved?.qualifiedName ?? UNSELECTED,
    outcome,
    ...(code ? { code } : {}),
  });
}

function report(
  request: CallRequest,
  resolved: ResolvedTool | undefined,
  fields: Omit<CallReport, "callId" | "alias" | "qualifiedName" | "images" | "stopsTurn"> & {
    images?: readonly PendingImage[];
    stopsTurn?: boolean;
  },
): CallReport {
  // Built field by field: properties followed by a spread leave V8's fast path (~100 ns).
  const report: { -readonly [K in keyof CallReport]: CallReport[K] } = {
    callId: request.callId,
    alias: request.alias,
    qualifiedName: resolved?.qualifiedName,
    outcome: fields.outcome,
    modelText: fields.modelText,
    isError: fields.isError,
    images: fields.images ?? [],
    stopsTurn: fields.stopsTurn ?? false,
  };
  if (fields.code !== undefined) report.code = fields.code;
  if (fields.message !== undefined) report.message = fields.message;
  if (fields.json !== undefined) report.json = fields.json;
  return report;
}

type ParsedArguments = { ok: true; value: JsonValue } | { ok: false; problem: string } | { ok: false; tooLarge: number } | { ok: false; tooDeep: true };

/**
 * Arguments nested deeper than this are refused (`ARGUMENTS_INVALID`) and journaled as a
 * note: the journal refuses values deeper than 256 levels, and no tool schema needs this many.
 */
export const MAX_ARGUMENT_DEPTH = 128;

function parseArguments(args: CallRequest["args"]): ParsedArguments {
  if ("json" in args) return hostArguments(args.json);
  // Cheap bound first: a string can never take more than 3 bytes per UTF-16 unit.
  if (args.text.length > MAX_ARGUMENT_BYTES / 3) {
    const bytes = utf8Bytes(args.text);
    if (bytes > MAX_ARGUMENT_BYTES) return { ok: false, tooLarge: bytes };
  }
  // Models send "" for a tool without parameters.
  if (args.text.trim() === "") return { ok: true, value: {} };
  let value: JsonValue;
  try {
    value = JSON.parse(args.text) as JsonValue;
  } catch (error) {
    return { ok: false, problem: (error as Error).message };
  }
  return nestsDeeperThan(value, MAX_ARGUMENT_DEPTH) ? { ok: false, tooDeep: true } : { ok: true, value };
}

/**
 * Arguments a host passed as a value (`session.callTool`): what is validated, journaled and
 * handed to the tool is their JSON, parsed back, never the host's object. So `NaN` becomes
 * `null` (and fails a `number` schema), a `Date` its ISO text, a `toJSON` its result, a
 * function or `undefined` field disappears, and the size bound measures what the tool gets.
 * A value with no JSON text (a BigInt, a cycle, a throwing getter) is `ARGUMENTS_INVALID`.
 */
function hostArguments(value: unknown): ParsedArguments {
  if (value === undefined) return { ok: true, value: {} };
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    return { ok: false, problem: clip(messageOf(error), 500) };
  }
  if (text === undefined) return { ok: false, problem: `a ${typeof value} has no JSON text` };
  const bytes = utf8Bytes(text);
  if (bytes > MAX_ARGUMENT_BYTES) return { ok: false, tooLarge: bytes };
  const json = JSON.parse(text) as JsonValue;
  return nestsDeeperThan(json, MAX_ARGUMENT_DEPTH) ? { ok: false, tooDeep: true } : { ok: true, value: json };
}

/** Whether parsed JSON nests deeper than `max` arrays/objects; iterative, so any depth is safe to ask about. */
function nestsDeeperThan(value: JsonValue, max: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  const stack: { value: object; depth: number }[] = [{ value, depth: 1 }];
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (depth > max) return true;
    const children = Array.isArray(current) ? current : Object.values(current);
    for (const child of children) if (typeof child === "object" && child !== null) stack.push({ value: child, depth: depth + 1 });
  }
  return false;
}
