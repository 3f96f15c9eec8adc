import type { McpElicitationOutcome, McpElicitationRequest, McpElicitationValue } from "@openworker/mcp-bridge";
import { argumentsDigest } from "@openworker/journal";
import type { JsonObject, JsonValue } from "@openworker/tools-sdk";
import type { CallEnvironment } from "./environment.js";

/**
 * What the runtime asks the host's elicitor: a provider's request for user input during
 * one of its calls (MCP elicitation, M9).
 *
 * @example
 * ```ts
 * const elicitor: Elicitor = async (request) =>
 *   request.mode === "url" ? { action: "decline" } : { action: "accept", content: { folder: "inbox" }, who: "ada" };
 * ```
 */
export interface ElicitationRequest {
  readonly sessionId: string;
  readonly turnId: string;
  readonly callId: string;
  /** The tool whose call the request belongs to. */
  readonly qualifiedName: string;
  /** The MCP provider asking (its namespace). */
  readonly provider: string;
  /** `form`: fill in `requestedSchema`; `url`: send the user to `url` (the answer carries no content). */
  readonly mode: "form" | "url";
  /** The provider's message, redacted (E6). */
  readonly message: string;
  /** Form mode: the flat object schema an accepted answer's `content` must match. */
  readonly requestedSchema?: JsonObject;
  /** URL mode: where to send the user. */
  readonly url?: string;
  /** Aborts when the call ends or is cancelled, or the elicitation's bound passes: the provider is then sent a decline. */
  readonly signal: AbortSignal;
}

/** A value of an accepted form: what MCP's elicitation schemas can ask for. */
export type ElicitationValue = McpElicitationValue;

/** How the host answered an elicitation. `decidedBy: "host"` says no person did (a script, a command without a terminal). */
export type ElicitationAnswer =
  | {
      readonly action: "accept";
      readonly content?: Readonly<Record<string, ElicitationValue>>;
      readonly who?: string;
      readonly decidedBy?: "person" | "host";
    }
  | { readonly action: "decline" | "cancel"; readonly who?: string; readonly decidedBy?: "person" | "host"; readonly reason?: string };

/**
 * The host's elicitor. An error, a timeout, an abort, or an answer that is not one of the
 * shapes or does not match the schema sends the provider a decline (fail closed).
 */
export type Elicitor = (request: ElicitationRequest) => Promise<ElicitationAnswer> | ElicitationAnswer;

/** What one call passes the bridge, and `end`, run once the call settled. */
export interface CallElicitation {
  /** Undefined without an elicitor: the bridge then declines, and the outcome is journaled as the runtime's. */
  readonly onElicitation: ((request: McpElicitationRequest) => Promise<ElicitationAnswer>) | undefined;
  readonly onElicitationAnswered: (outcome: McpElicitationOutcome) => void;
  readonly end: () => void;
}

interface Asked {
  readonly number: number;
  /** What the elicitor said of its answer, read once when it answered. */
  given?: { readonly who: string | undefined; readonly reason: string | undefined; readonly host: boolean };
  answered: boolean;
}

/**
 * The elicitations of one started MCP call, journaled (M9): each request as it reaches the
 * call (`call_elicitation_asked`, before the host is asked), and the answer the provider
 * received with who gave it (`call_elicitation_answered`). Accepted content is kept as a
 * digest unless the host opted in. A request still unanswered when the call ends is
 * recorded as declined by the runtime.
 */
export function callElicitation(
  environment: CallEnvironment,
  call: { readonly turnId: string; readonly callId: string; readonly qualifiedName: string; readonly provider: string },
  elicitor: Elicitor | undefined,
): CallElicitation {
  const { journal, redactor, sessionId, events } = environment;
  const { callId } = call;
  const asked = new Map<McpElicitationRequest, Asked>();
  let count = 0;
  let open = true;
  const ask = (request: McpElicitationRequest): Asked => {
    const entry: Asked = { number: ++count, answered: false };
    asked.set(request, entry);
    const url = request.url === undefined ? undefined : withoutQuery(request.url);
    journal.callElicitationAsked({
      sessionId,
      callId,
      elicitation: entry.number,
      provider: call.provider,
      mode: request.mode,
      message: redactor.text(request.message),
      schemaDigest: request.requestedSchema === undefined ? undefined : argumentsDigest(request.requestedSchema),
      url: url === undefined ? undefined : redactor.text(url),
    });
    if (events.active) events.emit({ type: "elicitation_asked", sessionId, callId, provider: call.provider, elicitation: entry.number, mode: request.mode });
    return entry;
  };
  const answered = (entry: Asked, outcome: Pick<McpElicitationOutcome, "answer" | "answeredBy" | "reason">) => {
    entry.answered = true;
    const { answer } = outcome;
    const content = answer.action === "accept" ? (answer.content as JsonValue | undefined) : undefined;
    const given = outcome.answeredBy === "elicitor" ? entry.given : undefined;
    const reason = outcome.reason ?? given?.reason;
    const by = outcome.answeredBy === "bridge" ? "runtime" : given?.host ? "host" : "person";
    journal.callElicitationAnswered({
      sessionId,
      callId,
      elicitation: entry.number,
      action: answer.action,
      by,
      who: given?.who === undefined ? undefined : redactor.text(given.who),
      reason: reason === undefined || reason === "" ? undefined : redactor.text(reason),
      contentDigest: content === undefined ? undefined : argumentsDigest(content),
      content: content !== undefined && environment.journalElicitedContent ? redactor.json(content) : undefined,
    });
    if (events.active)
      events.emit({ type: "elicitation_answered", sessionId, callId, provider: call.provider, elicitation: entry.number, action: answer.action, by });
  };
  return {
    onElicitation:
      elicitor &&
      (async (request: McpElicitationRequest): Promise<ElicitationAnswer> => {
        if (!open) return { action: "decline" };
        const entry = ask(request);
        const answer = await elicitor({
          sessionId,
          turnId: call.turnId,
          callId,
          qualifiedName: call.qualifiedName,
          provider: call.provider,
          mode: request.mode,
          message: redactor.text(request.message),
          ...(request.requestedSchema === undefined ? {} : { requestedSchema: request.requestedSchema }),
          ...(request.url === undefined ? {} : { url: request.url }),
          signal: request.signal,
        });
        entry.given = describedBy(answer);
        return answer;
      }),
    onElicitationAnswered: (outcome) => {
      if (!open) return;
      const entry = asked.get(outcome.request) ?? ask(outcome.request);
      if (!entry.answered) answered(entry, outcome);
    },
    end: () => {
      if (!open) return;
      open = false;
      for (const entry of asked.values())
        if (!entry.answered) answered(entry, { answer: { action: "decline" }, answeredBy: "bridge", reason: "the call ended before an answer" });
    },
  };
}

/** The journal's view of who gave an answer: each field read once, anything but a non-empty string ignored. */
function describedBy(answer: unknown): Asked["given"] {
  try {
    const { who, reason, decidedBy } = answer as Record<string, unknown>;
    const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);
    return { who: text(who), reason: text(reason), host: decidedBy === "host" };
  } catch {
    return undefined;
  }
}

/** A URL as the journal keeps it: no query or fragment, which may carry a session's secrets. */
function withoutQuery(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return undefined;
  }
}
