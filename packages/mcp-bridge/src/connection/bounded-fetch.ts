import { extractWWWAuthenticateParams, type FetchLike } from "@modelcontextprotocol/client";
import { requestSignal } from "./request-signal.js";

/** What the connection is told about its HTTP exchanges, beside what the SDK sees. */
export interface FetchObserver {
  /**
   * A response (a JSON body, or one event) broke `maxMessageBytes` and was cut off; the
   * ids are the requests its POST carried.
   */
  readonly oversized: (requestIds: readonly (string | number)[], message: string) => void;
  /**
   * A POST carrying `Mcp-Session-Id` was answered 404: the server no longer knows the
   * session (it restarted, or expired it). The ids are the requests the POST carried,
   * which the server never processed.
   */
  readonly sessionNotFound: (requestIds: readonly (string | number)[]) => void;
  /**
   * The event stream answering a POST ended or broke off with no event id to resume
   * from (so the SDK will not resume it). The ids are the requests the POST carried; the
   * ones still waiting will get no answer. Called after the SDK has read every event the
   * stream delivered.
   */
  readonly streamEnded: (requestIds: readonly (string | number)[], message: string) => void;
  /**
   * How the last GET (the standalone event stream, or the resumption of a call's stream)
   * went: `true` when its connection was refused (the service is down).
   */
  readonly getRefused: (refused: boolean) => void;
  /**
   * A POST carrying requests was answered, but not with their answers: a JSON body with no
   * response for some of them (one for another id), or 202 Accepted while no event stream
   * is open or opening. No answer can come for the ones still waiting. Called after the SDK
   * has read the body; the ids are every request the POST carried (answered ones included).
   */
  readonly unanswered: (requestIds: readonly (string | number)[], message: string) => void;
  /**
   * A POST carrying requests was answered 403 with a `WWW-Authenticate` challenge of
   * error `insufficient_scope`: the token lacks `scope` (space-separated, when the
   * challenge names it), and the server did not run them. Called before the SDK acts on
   * it (its step-up, M8).
   */
  readonly insufficientScope?: (scope: string | undefined) => void;
}

/**
 * `fetch` for a streamable-HTTP provider, with the stdio transport's bound on one message
 * (`maxMessageBytes`): a JSON response body, or one server-sent event of an
 * `text/event-stream` response, larger than the bound ends that response with an error
 * instead of being buffered whole. Without it a server that streams one event for ever
 * (or a JSON body that never ends) grows the host's memory until the process dies, and
 * keeps doing so after the call it answers has timed out.
 *
 * The bound counts bytes, chunk by chunk, as they arrive: an event stream's count starts
 * again at every blank line (the end of an event), so a long-lived stream of ordinary
 * events is never cut. When a response breaks the bound, `observer.oversized` gets the
 * ids of the requests its POST carried, so their calls can fail at once as a limit breach.
 *
 * It also tells `observer` what the SDK transport does not act on: a 404 to a request of
 * a session (`sessionNotFound`), and a POST's event stream that ended with no event id
 * (`streamEnded`), after which the SDK neither resumes nor answers its requests.
 *
 * Each request is made with a signal of its own that follows the caller's (the SDK
 * transport's, one for every request) until the request settles, so the caller's signal
 * does not gather one `fetch` listener per request (see `requestSignal`). Aborting the
 * caller's signal still aborts every request in flight and every body still streaming.
 */
export function boundedFetch(maxMessageBytes: number, observer: FetchObserver, base: FetchLike = fetch): FetchLike {
  // GETs being made and standalone event streams open: while there are none, an answer
  // can come on nothing but a POST's own response.
  let streams = 0;
  return async (url, init) => {
    const get = init?.method === "GET";
    // Let go of the caller's signal once the request settles: when its body has been read
    // to the end, cancelled or broken off (not when its headers arrive: an event stream is
    // read, and must stay cancellable, long after that), or when it failed.
    const own = requestSignal(init?.signal);
    const release = own?.release ?? (() => {});
    let response: Response;
    if (get) streams++;
    try {
      response = await base(url, own ? { ...init, signal: own.signal } : init);
    } catch (error) {
      release();
      if (get) {
        streams--;
        observer.getRefused(isConnectionRefused(error));
      }
      throw error;
    }
    const post = init?.method === "POST";
    if (get) {
      observer.getRefused(false);
      if (!response.ok || response.body === null) streams--;
    } else if (post && response.status === 202 && streams === 0) {
      // The MCP transport spec asks a POST carrying requests to be answered with JSON or an
      // event stream; 202 is for notifications and responses. With no event stream either,
      // the requests it carried wait out their whole time bound for an answer that cannot come.
      const ids = requestIdsOf(init.body);
      if (ids.length > 0)
        setImmediate(() =>
          observer.unanswered(ids, "the provider answered the request with 202 Accepted and no body, and has no event stream open to answer it on"),
        );
    }
    if (post && response.status === 403 && observer.insufficientScope !== undefined && requestIdsOf(init.body).length > 0) {
      const challenge = extractWWWAuthenticateParams(response);
      if (challenge.error === "insufficient_scope") observer.insufficientScope(challenge.scope);
    }
    if (response.status === 404) {
      const headers = new Headers(init?.headers);
      if (post && headers.has("mcp-session-id")) observer.sessionNotFound(requestIdsOf(init.body));
      // A resumption of a call's stream (a GET with Last-Event-ID) answered 404: the server
      // forgot the session under calls in flight, which can no longer be answered.
      else if (headers.has("mcp-session-id") && headers.has("last-event-id")) observer.sessionNotFound([]);
    }
    if (response.body === null) {
      release();
      return response;
    }
    const eventStream = (response.headers.get("content-type") ?? "").includes("text/event-stream");
    const seen: StreamState = { resumable: false, breached: false };
    // The requests this response answers, read only if it turns out too large.
    const breached = (message: string) => {
      seen.breached = true;
      observer.oversized(requestIdsOf(init?.body), message);
    };
    const bound = messageBound(maxMessageBytes, eventStream, seen, breached);
    const piped = response.body.pipeTo(bound.writable);
    // Settles when the body ends, breaks off, breaks the bound, or its reader cancels it.
    piped.then(release, release);
    if (eventStream && post && response.ok) {
      const ended = (why: string) => {
        // A resumable stream is the SDK's to resume; a breach and a close were answered already.
        if (seen.resumable || seen.breached || init.signal?.aborted) return;
        const ids = requestIdsOf(init.body);
        if (ids.length === 0) return;
        // The SDK reads the events this stream delivered through promise callbacks only: by
        // the next turn of the event loop it has seen every one of them, the last answer
        // included, so an answer that came is never overtaken (and the late error is dropped).
        setImmediate(() => observer.streamEnded(ids, `the provider's event stream ${why} without an answer and with no event id to resume from`));
      };
      piped.then(
        () => ended("ended"),
        (error: unknown) => ended(`broke off (${error instanceof Error ? error.message : String(error)})`),
      );
    } else if (post && response.ok && !eventStream) {
      // A JSON body is the answer to the requests its POST carried (the server sends a
      // response on another stream only when resuming one): once the SDK has read it, a
      // request it did not answer (a response for another id) never will be.
      piped.then(
        () => {
          if (seen.breached || init.signal?.aborted) return;
          const ids = requestIdsOf(init.body);
          if (ids.length > 0)
            setImmediate(() =>
              observer.unanswered(ids, "the provider's JSON response to the request held no answer to it (a response for another id, or none)"),
            );
        },
        () => {},
      );
    } else {
      // The reader (the SDK) sees the error; nothing is waiting for this promise.
      piped.catch(() => {});
    }
    if (get && response.ok) {
      // A standalone stream (or a resumed one) counts until it ends.
      void piped.then(
        () => streams--,
        () => streams--,
      );
    }
    return new Response(bound.readable, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** What the bound saw of one response. */
interface StreamState {
  /** An event carried a non-empty `id`: the SDK resumes the stream from it when it ends. */
  resumable: boolean;
  /** The response broke the bound and was cut off. */
  breached: boolean;
}

// The SDK's `tools/call` requests from the call channel, serialized by `JSON.stringify`
// with `jsonrpc` first and the numeric `id` second: read without parsing the arguments.
const CALL_ID = /^\{"jsonrpc":"2\.0","id":(\d{1,16}),"method":"/;

/** The ids of the JSON-RPC requests in a POST body (one message or a batch); none for anything else. */
function requestIdsOf(body: unknown): (string | number)[] {
  if (typeof body !== "string") return [];
  const call = CALL_ID.exec(body);
  if (call) return [Number(call[1])];
  try {
    const parsed: unknown = JSON.parse(body);
    const messages = Array.isArray(parsed) ? parsed : [parsed];
    return messages.flatMap((message: { id?: unknown; method?: unknown }) =>
      typeof message?.method === "string" && (typeof message.id === "string" || typeof message.id === "number") ? [message.id] : [],
    );
  } catch {
    return [];
  }
}

// Where the bound is in the current line of an event stream, to see `id` fields.
const LINE_START = 0;
const SAW_I = 1;
const SAW_ID = 2;
const ID_VALUE = 3;
const ID_VALUE_AFTER_SPACE = 4;
const OTHER_FIELD = 5;

/** Passes bytes through until one message (the whole body, or one event) passes `max`. */
function messageBound(max: number, eventStream: boolean, seen: StreamState, breached: (message: string) => void): TransformStream<Uint8Array, Uint8Array> {
  let size = 0;
  // Bytes seen since the last line feed were only carriage returns: a line feed now ends an event.
  let lineStart = false;
  let field = LINE_START;
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      if (!eventStream) {
        size += chunk.byteLength;
      } else {
        for (let index = 0; index < chunk.length; index += 1) {
          const byte = chunk[index]!;
          if (byte === LF) {
            if (lineStart) size = 0;
            lineStart = true;
            field = LINE_START;
          } else if (byte === CR) {
            field = LINE_START;
          } else {
            lineStart = false;
            size += 1;
            // An `id:` field with a value (one leading space is not part of it, as the SSE
            // parser reads it) makes the stream resumable.
            if (field !== OTHER_FIELD) field = nextField(field, byte, seen);
          }
          if (size > max) break;
        }
      }
      if (size > max) {
        const message = `the provider sent ${eventStream ? "an event" : "a response"} over the ${max}-byte message bound (maxMessageBytes); it was dropped`;
        controller.error(new Error(message));
        // Answer the requests it carried now (as the stdio transport does for a dropped line), not at their time bound.
        breached(message);
        return;
      }
      controller.enqueue(chunk);
    },
  });
}

function nextField(field: number, byte: number, seen: StreamState): number {
  switch (field) {
    case LINE_START:
      return byte === I ? SAW_I : OTHER_FIELD;
    case SAW_I:
      return byte === D ? SAW_ID : OTHER_FIELD;
    case SAW_ID:
      return byte === COLON ? ID_VALUE : OTHER_FIELD;
    case ID_VALUE:
      if (byte === SPACE) return ID_VALUE_AFTER_SPACE;
      seen.resumable = true;
      return OTHER_FIELD;
    default:
      seen.resumable = true;
      return OTHER_FIELD;
  }
}

const LF = 0x0a;
const CR = 0x0d;
const I = 0x69;
const D = 0x64;
const COLON = 0x3a;
const SPACE = 0x20;

/** Whether `error` (or a cause of it) is a refused connection: the request never reached the server. */
export function isConnectionRefused(error: unknown): boolean {
  for (let cause = error; typeof cause === "object" && cause !== null; cause = (cause as { cause?: unknown }).cause) {
    if ((cause as { code?: unknown }).code === "ECONNREFUSED") return true;
  }
  return false;
}
