import type { NativeResolvedTool } from "@openworker/bundle-resolver";
import type { ToolRegistry } from "@openworker/registry";
import { OpenWorkerError, type Tool } from "@openworker/tools-sdk";
import { untilAborted } from "@openworker/tools-sdk/internal/execution";
import type { Bundle } from "@openworker/bundle-resolver";
import type { CallEnvironment } from "../call/environment.js";
import { releaseImages, type PendingImage } from "../call/images.js";
import { runGovernedCall, type CallReport } from "../call/pipeline.js";
import { clip, messageOf } from "../describe.js";
import { RUNTIME_ERROR_CODES } from "../errors.js";
import type { ModelMessage, ModelProvider, ModelResponse } from "../model/types.js";
import { gatherFacts, newFactsTurn, type SlowHooks } from "./facts.js";
import { prepareTurn, unavailableRefusal, type PreparedTurn } from "./prepare.js";

/** An answer with more than this many times `maxCallsPerAttempt` tool calls is dropped whole. */
const ANSWER_CALLS_FACTOR = 8;

/** Why a turn ended. */
export type TurnStopReason = "answered" | "fault" | "cancelled" | "model_error" | "attempts_exhausted" | "preparation_failed";

/** The result of one turn. */
export interface TurnResult {
  readonly turnId: string;
  /** True when the model answered without further tool calls. */
  readonly completed: boolean;
  readonly reason: TurnStopReason;
  /** The model's final text (empty when the turn did not complete). */
  readonly text: string;
  readonly calls: readonly CallReport[];
  /** The error that stopped the turn, for `model_error`, `fault` and `preparation_failed`. */
  readonly error?: { readonly code: string; readonly message: string };
}

/** Everything one turn needs from its session. */
export interface TurnContext {
  readonly environment: CallEnvironment;
  readonly registry: ToolRegistry;
  readonly bundle: Bundle;
  readonly provider: ModelProvider;
  readonly model: string;
  readonly instructions: string;
  readonly maxAttempts: number;
  /** Tool calls run per model attempt; later ones are refused (journaled, never run). */
  readonly maxCallsPerAttempt: number;
  /** A `modelContext` hook slower than this is skipped for the session (L1). */
  readonly modelContextBudgetMs: number;
  /** The session's conversation; the turn appends to it. */
  readonly messages: ModelMessage[];
  /** What the session remembers of slow modelContext hooks (L1, see `gatherFacts`). */
  readonly slowFacts: SlowHooks;
  nextCallId(): string;
  /**
   * The session's selected native tools by name, for settling a turn whose preparation
   * did not finish (cancelled or failed): T5 still owes them their revoke.
   */
  selectedNatives(): readonly SettledTool[];
  /** Remembers the selection so host-driven calls and revocation use the latest turn's. */
  onPrepared(prepared: PreparedTurn): void;
  /** The turn is over: called before `turn_finished` is emitted, so a listener may start the next one. */
  onEnded(): void;
  /**
   * Settles the turn's tools at its end (T5): `settleTools`, except that a tool a host
   * call is still using is left to that call's end (the session knows which).
   */
  settle(tools: readonly SettledTool[], reason: "turn" | "cancel", completed: boolean): void;
}

/**
 * One turn: prepare (discovery and resolution, journaled), then provider attempts until
 * the model answers without tool calls or the turn stops (E4 fault, cancellation, model
 * failure, attempt budget). At the end each selected native tool's `turnFinished` runs
 * (default revoke); on cancellation `revoke` is called directly (T5). A turn that never
 * got its selection settles the session's selected natives by name: a cancelled one
 * revokes them (a tool may hold access kept across the previous turn), and one whose
 * preparation failed ends them like any incomplete turn (`turnFinished(…, false)`).
 */
export async function runTurn(context: TurnContext, turnId: string, input: string, signal: AbortSignal): Promise<TurnResult> {
  const { environment } = context;
  const { journal, events, sessionId } = environment;
  events.emit({ type: "turn_started", sessionId, turnId });
  newFactsTurn(context.slowFacts);
  const calls: CallReport[] = [];
  const state: TurnState = { prepared: undefined, ended: false };
  // Ends the turn once: tools settled (T5), the end journaled, the session told, the event
  // sent. A journal that fails its write still lets the rest happen, then the error goes up.
  const end = (reason: TurnStopReason, text: string, error?: { code: string; message: string }): TurnResult => {
    state.ended = true;
    const completed = reason === "answered";
    context.settle(state.prepared ? natives(state.prepared) : context.selectedNatives(), reason === "cancelled" ? "cancel" : "turn", completed);
    try {
      journal.turnFinished({ sessionId, turnId, completed, reason });
    } finally {
      context.onEnded();
      events.emit({ type: "turn_finished", sessionId, turnId, completed, reason, ...(error ? { code: error.code } : {}) });
    }
    return { turnId, completed, reason, text, calls, ...(error ? { error } : {}) };
  };
  try {
    return await attempts(context, turnId, input, signal, calls, state, end);
  } catch (error) {
    // Only the journal's own failure gets here (the pipeline records everything else): the
    // turn cannot be recorded, but its tools are still settled and its end still announced.
    if (!state.ended) {
      try {
        end(signal.aborted ? "cancelled" : "fault", "");
      } catch {
        // The journal refused the end too; the first error is the one to report.
      }
    }
    throw error;
  }
}

/** What a turn's steps share with its end. */
interface TurnState {
  prepared: PreparedTurn | undefined;
  ended: boolean;
}

/** A turn after its start: preparation, then provider attempts (see {@link runTurn}). */
async function attempts(
  context: TurnContext,
  turnId: string,
  input: string,
  signal: AbortSignal,
  calls: CallReport[],
  state: TurnState,
  end: (reason: TurnStopReason, text: string, error?: { code: string; message: string }) => TurnResult,
): Promise<TurnResult> {
  const { environment } = context;
  const { events, sessionId } = environment;

  // Cancelled before it began: nothing is prepared, so no provider starts for it (M4).
  if (signal.aborted) return end("cancelled", "");
  let prepared: PreparedTurn;
  try {
    prepared = await prepareTurn({
      environment,
      registry: context.registry,
      bundle: context.bundle,
      turnId,
      maxToolNameLength: context.provider.maxToolNameLength,
      signal,
    });
  } catch (error) {
    if (signal.aborted) return end("cancelled", "");
    return end("preparation_failed", "", describe(error));
  }
  state.prepared = prepared;
  context.onPrepared(prepared);
  for (const provider of prepared.unavailable) {
    events.emit({
      type: "diagnostic",
      sessionId,
      code: RUNTIME_ERROR_CODES.PROVIDER_UNAVAILABLE,
      message: `${provider.namespace}: ${provider.message}`,
      provider: provider.namespace,
    });
  }
  context.messages.push({ role: "user", content: input });
  // Keyed by the tool message itself, not its call id: a model may reuse ids across
  // attempts and turns (`call_0` every time), and an image must reach it once (T4).
  const pendingImages = new Map<ModelMessage, readonly PendingImage[]>();
  // Selected tools of providers that could not be reached are named to the model (M2).
  const instructions = prepared.unavailableNotice === undefined ? context.instructions : `${context.instructions}\n\n${prepared.unavailableNotice}`;
  const nativeTools = natives(prepared);

  for (let attempt = 1; attempt <= context.maxAttempts; attempt++) {
    if (signal.aborted) return end("cancelled", "");
    events.emit({ type: "attempt_started", sessionId, turnId, attempt, provider: context.provider.id, model: context.model });
    const { facts, diagnostics } = gatherFacts(nativeTools, sessionId, context.slowFacts, context.modelContextBudgetMs, (value) =>
      environment.redactor.json(value),
    );
    for (const diagnostic of diagnostics) {
      // A hook's error text is the tool's own (a failed auth call names its key): redacted like any error (E6).
      const message = environment.redactor.text(`${diagnostic.alias}: ${diagnostic.reason}`);
      events.emit({ type: "diagnostic", sessionId, code: RUNTIME_ERROR_CODES.MODEL_CONTEXT_SKIPPED, message });
    }
    const messages = await deliverImages(context.messages, pendingImages, environment, signal);
    let response;
    try {
      // A provider that ignores the signal is abandoned, not awaited: cancel and close must end the turn.
      response = await untilAborted(context.provider.complete({ model: context.model, instructions, facts, messages, tools: prepared.tools, signal }), signal);
    } catch (error) {
      if (signal.aborted) return end("cancelled", "");
      events.emit({ type: "attempt_finished", sessionId, turnId, attempt, toolCalls: 0, code: RUNTIME_ERROR_CODES.MODEL_FAILED });
      return end("model_error", "", { code: RUNTIME_ERROR_CODES.MODEL_FAILED, message: environment.redactor.text(describe(error).message) });
    }
    // A few calls past the bound are refused one by one, each journaled and answered; an
    // answer far past it (a runaway model: a 32 MiB answer can hold 500,000 calls) is
    // dropped whole, before any of it runs, is journaled or joins the conversation.
    const mostCalls = context.maxCallsPerAttempt * ANSWER_CALLS_FACTOR;
    if (response.toolCalls.length > mostCalls) {
      events.emit({
        type: "attempt_finished",
        sessionId,
        turnId,
        attempt,
        toolCalls: response.toolCalls.length,
        code: RUNTIME_ERROR_CODES.MODEL_TOO_MANY_CALLS,
      });
      const message = `the model answered with ${response.toolCalls.length} tool calls; an answer may hold at most ${mostCalls} (${context.maxCallsPerAttempt} run); the answer was dropped and none of it ran`;
      return end("model_error", "", { code: RUNTIME_ERROR_CODES.MODEL_TOO_MANY_CALLS, message });
    }
    events.emit({
      type: "attempt_finished",
      sessionId,
      turnId,
      attempt,
      toolCalls: response.toolCalls.length,
      ...(response.usage ? { usage: response.usage } : {}),
    });
    // A model can echo a secret it was shown or guessed (its API key, say): what the runtime
    // hands on (events, the turn's text, the session's messages) is redacted (E6).
    const text = environment.redactor.text(response.text);
    context.messages.push({ role: "assistant", content: text, toolCalls: redactedCalls(environment, response.toolCalls) });
    if (text) events.emit({ type: "message", sessionId, turnId, text });
    // A cancel from a `message` listener came before the turn's end: it ends cancelled (T5:
    // revoke), as `cancel()` answered.
    if (response.toolCalls.length === 0) return signal.aborted ? end("cancelled", "") : end("answered", text);

    for (const [index, toolCall] of response.toolCalls.entries()) {
      // A cancelled turn starts no further call and asks nobody to approve one.
      if (signal.aborted) {
        answerNotRun(context, response.toolCalls, index, "the turn was cancelled");
        return end("cancelled", "");
      }
      const callId = context.nextCallId();
      const args = typeof toolCall.arguments === "string" ? { text: toolCall.arguments } : { json: toolCall.arguments };
      const refusal =
        index < context.maxCallsPerAttempt
          ? unavailableRefusal(prepared, { alias: toolCall.name })
          : {
              code: RUNTIME_ERROR_CODES.TOO_MANY_CALLS,
              message: `only ${context.maxCallsPerAttempt} tool calls run per model answer; this one was not run, ask for it again if it is still needed`,
            };
      const report = await runGovernedCall(environment, prepared.selection, {
        turnId,
        callId,
        alias: toolCall.name,
        args,
        signal,
        ...(refusal ? { refusal } : {}),
      });
      calls.push(report);
      const answer: ModelMessage = {
        role: "tool",
        toolCallId: toolCall.id,
        name: toolCall.name,
        content: report.modelText,
        isError: report.isError,
        images: [],
      };
      context.messages.push(answer);
      if (report.images.length > 0) pendingImages.set(answer, report.images);
      if (report.stopsTurn) {
        answerNotRun(
          context,
          response.toolCalls,
          index + 1,
          signal.aborted ? "the turn was cancelled" : `the turn stopped at an earlier call (${report.code ?? report.outcome})`,
        );
        if (signal.aborted) return end("cancelled", "");
        return end("fault", "", { code: report.code ?? "FAULT", message: report.modelText });
      }
    }
  }
  return end("attempts_exhausted", "", {
    code: RUNTIME_ERROR_CODES.TURN_ATTEMPTS_EXHAUSTED,
    message: `no final answer after ${context.maxAttempts} model attempts`,
  });
}

/**
 * Answers, in the conversation only, the tool calls of an answer that the turn stopped
 * before: a provider needs an answer to every call id of an assistant message (an
 * OpenAI-compatible endpoint refuses the next turn's request otherwise). They were never
 * requested, so nothing is journaled for them.
 */
function answerNotRun(context: TurnContext, calls: ModelResponse["toolCalls"], from: number, why: string): void {
  for (const toolCall of calls.slice(from)) {
    context.messages.push({
      role: "tool",
      toolCallId: toolCall.id,
      name: toolCall.name,
      content: `Not run: ${why}. Ask for it again if it is still needed.`,
      isError: true,
      images: [],
    });
  }
}

/**
 * Puts held images into this attempt's view of the conversation after rechecking consent
 * (T4), then forgets their bytes: an image reaches the model once.
 */
async function deliverImages(
  history: ModelMessage[],
  pending: Map<ModelMessage, readonly PendingImage[]>,
  environment: CallEnvironment,
  signal: AbortSignal,
): Promise<readonly ModelMessage[]> {
  // Providers get a snapshot: the history keeps growing after the attempt.
  if (pending.size === 0) return history.slice();
  const view: ModelMessage[] = [];
  for (const message of history) {
    const held = pending.get(message);
    if (!held || message.role !== "tool") {
      view.push(message);
      continue;
    }
    const { images, notes } = await releaseImages(held, signal);
    for (const note of notes) {
      environment.events.emit({ type: "diagnostic", sessionId: environment.sessionId, code: RUNTIME_ERROR_CODES.IMAGE_WITHHELD, message: note });
    }
    view.push({ ...message, content: [message.content, ...notes].join("\n"), images });
  }
  pending.clear();
  return view;
}

function natives(prepared: PreparedTurn): NativeResolvedTool[] {
  return prepared.selection.tools.filter((tool): tool is NativeResolvedTool => tool.kind === "native");
}

/** What settling a native tool needs: its implementation and its name. */
export type SettledTool = Pick<NativeResolvedTool, "tool" | "qualifiedName">;

/** T5: end-of-turn hooks (default revoke), or a direct revoke on cancellation or close. */
export function settleTools(
  context: Pick<TurnContext, "environment">,
  tools: readonly SettledTool[],
  reason: "turn" | "cancel" | "close",
  completed: boolean,
): void {
  const { environment } = context;
  const { journal, sessionId } = environment;
  for (const resolved of tools) {
    const tool: Tool = resolved.tool;
    // A hook's failure must not keep the turn from ending; the partner learns of it from a diagnostic.
    const failed = (hook: string) => (error: unknown) => hookFailed(environment, resolved.qualifiedName, hook, error);
    // The hook being read or called: what a failure caught below is reported as.
    let hook: "turnFinished" | "revoke" = reason === "turn" ? "turnFinished" : "revoke";
    try {
      if (reason === "turn" && tool.turnFinished) {
        ignoreRejection(tool.turnFinished(sessionId, completed), failed("turnFinished"));
        continue;
      }
      // Without turnFinished, the end of a turn revokes (the SDK's finishTurn default). The
      // journal records the runtime's revocation first: a hook that throws was still told.
      // A journal that cannot record it does not keep the tool from being revoked.
      hook = "revoke";
      if (!tool.revoke) continue;
      try {
        journal.revoked({ sessionId, tool: resolved.qualifiedName, reason });
      } finally {
        try {
          ignoreRejection(tool.revoke(sessionId), failed("revoke"));
        } catch (error) {
          failed("revoke")(error);
        }
      }
    } catch (error) {
      // The journal's failure goes up with the turn's end; a hook's (or a getter's) is reported.
      if (!(OpenWorkerError.isInstance(error) && error.code.startsWith("JOURNAL_"))) failed(hook)(error);
    }
  }
}

/**
 * A `diagnostic` event for a hook that threw or rejected (E6: its text redacted, and
 * clipped). Never throws: it runs as a rejection handler, where a throw would be an
 * unhandled rejection that ends the host, and inside a turn's end, which must complete.
 */
function hookFailed(environment: CallEnvironment, qualifiedName: string, hook: string, error: unknown): void {
  try {
    if (!environment.events.active) return;
    const message = environment.redactor.text(`${qualifiedName}: ${hook} failed: ${clip(messageOf(error), 500)}`);
    environment.events.emit({ type: "diagnostic", sessionId: environment.sessionId, code: RUNTIME_ERROR_CODES.HOOK_FAILED, message });
  } catch {
    // Nothing is left to tell: the hook's failure stays without a diagnostic.
  }
}

/** The model's tool calls as the session's history keeps them: arguments redacted (E6); the same array when nothing changed. */
function redactedCalls(environment: CallEnvironment, calls: ModelResponse["toolCalls"]): ModelResponse["toolCalls"] {
  if (calls.length === 0) return calls;
  return calls.map((call) => {
    const args = typeof call.arguments === "string" ? environment.redactor.text(call.arguments) : environment.redactor.json(call.arguments);
    return args === call.arguments ? call : { ...call, arguments: args };
  });
}

/**
 * The hooks are typed `void`, but TypeScript accepts an `async` function there: a
 * rejection it returns would be unhandled and end the host process.
 */
function ignoreRejection(result: unknown, onRejected: (error: unknown) => void): void {
  if (typeof result === "object" && result !== null && typeof (result as { then?: unknown }).then === "function") {
    (result as PromiseLike<unknown>).then(undefined, onRejected);
  }
}

function describe(error: unknown): { code: string; message: string } {
  if (OpenWorkerError.isInstance(error)) return { code: error.code, message: error.message };
  return { code: "INTERNAL", message: error instanceof Error ? error.message : String(error) };
}
