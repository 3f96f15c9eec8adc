import type { JsonObject, JsonSchema } from "@openworker/tools-sdk";
import { onAbort } from "@openworker/tools-sdk/internal/execution";
import { compileInputSchema } from "@openworker/tools-sdk/internal/validation";
import { redact } from "../redact.js";

/**
 * A provider's request for user input during one of its calls (MCP `elicitation/create`,
 * SPEC M9), as the call's {@link McpCallOptions.onElicitation} receives it. The message is
 * stripped of the provider's configured secrets (E6).
 *
 * @example
 * ```ts
 * const onElicitation = async (request: McpElicitationRequest): Promise<McpElicitationAnswer> =>
 *   request.mode === "form" ? { action: "accept", content: { ok: true } } : { action: "decline" };
 * ```
 */
export interface McpElicitationRequest {
  readonly namespace: string;
  /** `form`: fill in `requestedSchema`; `url`: open `url` (out of band: the answer carries no content). */
  readonly mode: "form" | "url";
  readonly message: string;
  /** Form mode: the flat object schema the answer's `content` must match. */
  readonly requestedSchema?: JsonObject;
  /** URL mode: where to send the user. */
  readonly url?: string;
  /** URL mode (2025 revisions): the server's identifier of this elicitation. */
  readonly elicitationId?: string;
  /** Aborts when the call ends, is cancelled, or the elicitation's bound passes: the request is answered `cancel`. */
  readonly signal: AbortSignal;
}

/** A value of an accepted form: what MCP's restricted elicitation schemas can ask for. */
export type McpElicitationValue = string | number | boolean | readonly string[];

/** How the user answered an elicitation (the MCP `ElicitResult` shapes). */
export type McpElicitationAnswer =
  | { readonly action: "accept"; readonly content?: Readonly<Record<string, McpElicitationValue>> }
  | { readonly action: "decline" }
  | { readonly action: "cancel" };

/** The host's side of one call's elicitations. */
export type McpElicitor = (request: McpElicitationRequest) => Promise<McpElicitationAnswer>;

/**
 * How one elicitation of a call was answered, as the provider received it (M9): by the
 * host's elicitor, or by the bridge failing closed (declined) for `reason`.
 *
 * @example
 * ```ts
 * const onElicitationAnswered = (outcome: McpElicitationOutcome) => console.log(outcome.answer.action, outcome.answeredBy, outcome.reason ?? "");
 * ```
 */
export interface McpElicitationOutcome {
  /** The request as the elicitor saw it (or would have: with no elicitor, or a call already ending, it was not asked). */
  readonly request: McpElicitationRequest;
  /** What the provider was sent. */
  readonly answer: McpElicitationAnswer;
  readonly answeredBy: "elicitor" | "bridge";
  /** Why the bridge answered: no elicitor, a timeout, the call's end, a failing elicitor or a malformed answer. */
  readonly reason?: string;
}

/** One call in flight that a provider's elicitation may belong to. */
export interface ElicitationRoute {
  readonly handler: McpElicitor | undefined;
  /** Told how each elicitation of the call was answered; its errors are ignored. */
  readonly onAnswered: ((outcome: McpElicitationOutcome) => void) | undefined;
  /** Aborted when the call settles, is cancelled, or runs past its own bound (M10). */
  readonly signal: AbortSignal;
}

type WireValue = string | number | boolean | string[];

/** The wire answer sent back to the provider. */
export type ElicitAnswer = { action: "accept"; content?: Record<string, WireValue> } | { action: "decline" } | { action: "cancel" };

const DECLINE: ElicitAnswer = Object.freeze({ action: "decline" }) as ElicitAnswer;
const CANCEL: ElicitAnswer = Object.freeze({ action: "cancel" }) as ElicitAnswer;

/**
 * The calls in flight on one connection, as elicitation sees them. On the 2025 revisions a
 * provider's `elicitation/create` carries nothing that ties it to a call: it belongs to the
 * connection's only call in flight, or to none.
 */
export class CallsInFlight {
  private readonly routes = new Set<ElicitationRoute>();

  /** Notes a call as started; the returned `end` removes it and aborts its route's signal. */
  enter(
    handler: McpElicitor | undefined,
    onAnswered: ((outcome: McpElicitationOutcome) => void) | undefined,
    signal: AbortSignal | undefined,
  ): { readonly route: ElicitationRoute; readonly end: () => void } {
    const ended = new AbortController();
    const stopListening = signal ? onAbort(signal, () => ended.abort()) : undefined;
    const route: ElicitationRoute = { handler, onAnswered, signal: ended.signal };
    this.routes.add(route);
    return {
      route,
      end: () => {
        this.routes.delete(route);
        stopListening?.();
        ended.abort();
      },
    };
  }

  /** The one call in flight; `"several"` when it cannot be told which; undefined with none. */
  only(): ElicitationRoute | "several" | undefined {
    if (this.routes.size > 1) return "several";
    for (const route of this.routes) return route;
    return undefined;
  }
}

/** The parts of an `elicitation/create` request the bridge reads (already checked by the SDK). */
export interface ElicitParams {
  readonly mode?: string;
  readonly message: string;
  readonly requestedSchema?: unknown;
  readonly url?: string;
  readonly elicitationId?: string;
}

/**
 * Asks the call's elicitor and answers fail-closed (M9): no elicitor, one that throws or
 * answers something malformed, content that does not match `requestedSchema`, the call's
 * end, cancellation or bound, the request's own cancellation (`wire`), and the
 * elicitation's bound (`timeoutMs`) all decline. Never rejects. Elicited content is never
 * logged, nor put in any message (E6). The route hears the outcome.
 */
export async function answerElicitation(
  namespace: string,
  route: ElicitationRoute,
  params: ElicitParams,
  wire: AbortSignal | undefined,
  timeoutMs: number,
  secrets: readonly string[],
): Promise<ElicitAnswer> {
  const mode = params.mode === "url" ? "url" : "form";
  const stop = new AbortController();
  let why = "";
  const end = (reason: string) => {
    if (!stop.signal.aborted) {
      why = reason;
      stop.abort();
    }
  };
  const request: McpElicitationRequest = {
    namespace,
    mode,
    message: redact(params.message, secrets),
    // A copy: the answer is checked against the schema as the provider sent it.
    ...(mode === "form" && isObject(params.requestedSchema) ? { requestedSchema: structuredClone(params.requestedSchema) as JsonObject } : {}),
    ...(mode === "url" && typeof params.url === "string" ? { url: params.url } : {}),
    ...(mode === "url" && typeof params.elicitationId === "string" ? { elicitationId: params.elicitationId } : {}),
    signal: stop.signal,
  };
  const outcome = await decide(route.handler, request, params.requestedSchema, stop.signal, () => why, {
    watch: () => {
      const timer = setTimeout(() => end(`the elicitor did not answer within ${timeoutMs} ms`), timeoutMs);
      const removers = [
        onAbort(route.signal, () => end("the call ended before an answer")),
        ...(wire ? [onAbort(wire, () => end("the provider withdrew its request"))] : []),
      ];
      if (route.signal.aborted) end("the call ended before an answer");
      else if (wire?.aborted) end("the provider withdrew its request");
      return () => {
        clearTimeout(timer);
        for (const remove of removers) remove();
      };
    },
  });
  if (route.onAnswered !== undefined) {
    try {
      route.onAnswered(outcome);
    } catch {
      // The host's listener must not change the answer.
    }
  }
  return outcome.answer as ElicitAnswer;
}

async function decide(
  handler: McpElicitor | undefined,
  request: McpElicitationRequest,
  requestedSchema: unknown,
  stopped: AbortSignal,
  why: () => string,
  bounds: { readonly watch: () => () => void },
): Promise<McpElicitationOutcome> {
  const declined = (reason: string): McpElicitationOutcome => ({ request, answer: DECLINE, answeredBy: "bridge", reason });
  if (typeof handler !== "function") return declined("the host has no elicitor");
  const unwatch = bounds.watch();
  const interrupted = new Promise<"stopped">((resolve) => {
    if (stopped.aborted) resolve("stopped");
    else stopped.addEventListener("abort", () => resolve("stopped"), { once: true });
  });
  try {
    const asked = stopped.aborted ? interrupted : Promise.resolve().then(() => handler(request));
    const answer = await Promise.race([asked, interrupted]);
    if (answer === "stopped" || stopped.aborted) return declined(why());
    const checked = checkAnswer(answer, request.mode, requestedSchema);
    if (checked === DECLINE && (answer as { action?: unknown }).action !== "decline")
      return declined("the elicitor's answer was malformed or did not match the requested schema");
    return { request, answer: checked, answeredBy: "elicitor" };
  } catch {
    // The elicitor failed: its error may quote what the user typed, so it goes nowhere.
    return declined(stopped.aborted ? why() : "the elicitor failed");
  } finally {
    unwatch();
  }
}

/** The answer as it goes to the provider, or a decline when it is not one of the three shapes. */
export function checkAnswer(answer: unknown, mode: "form" | "url", requestedSchema: unknown): ElicitAnswer {
  if (!isObject(answer)) return DECLINE;
  if (answer.action === "decline") return DECLINE;
  if (answer.action === "cancel") return CANCEL;
  if (answer.action !== "accept") return DECLINE;
  // A URL-mode answer has no content (the user acted elsewhere): none is passed on.
  if (mode === "url") return { action: "accept" };
  const given = answer.content === undefined ? {} : flatContent(answer.content);
  if (given === undefined) return DECLINE;
  const content = withDefaults(given, requestedSchema);
  if (!matches(content, requestedSchema)) return DECLINE;
  return Object.keys(content).length === 0 && answer.content === undefined ? { action: "accept" } : { action: "accept", content };
}

/**
 * The answer with each field it leaves out that the schema gives a `default` filled in
 * (the client capability `applyDefaults`): what the user saw pre-filled and left as it was.
 */
function withDefaults(content: Record<string, WireValue>, requestedSchema: unknown): Record<string, WireValue> {
  const properties = isObject(requestedSchema) && isObject(requestedSchema.properties) ? requestedSchema.properties : {};
  const filled = { ...content };
  for (const [name, property] of Object.entries(properties)) {
    if (name in filled || !isObject(property)) continue;
    const value = flatContent({ value: property.default })?.value;
    if (value !== undefined) filled[name] = value;
  }
  return filled;
}

/** A copy of `value` when it is a flat object of strings, finite numbers, booleans and string arrays. */
function flatContent(value: unknown): Record<string, WireValue> | undefined {
  if (!isObject(value)) return undefined;
  const entries: [string, WireValue][] = [];
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === "string" || typeof item === "boolean" || (typeof item === "number" && Number.isFinite(item))) entries.push([key, item]);
    else if (Array.isArray(item) && item.every((element) => typeof element === "string")) entries.push([key, [...(item as string[])]]);
    else return undefined;
  }
  return Object.fromEntries(entries);
}

function matches(content: Record<string, WireValue>, requestedSchema: unknown): boolean {
  if (requestedSchema === undefined) return true;
  try {
    return compileInputSchema(requestedSchema as JsonSchema, "elicitation").check(content).ok;
  } catch {
    // A schema that does not compile cannot vouch for any answer.
    return false;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}
