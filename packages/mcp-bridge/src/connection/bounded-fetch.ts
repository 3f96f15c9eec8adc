import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";

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
 * events is never cut. When a response breaks the bound, `onOversized` gets the ids of the
 * requests its POST carried, so their calls can fail at once as a limit breach.
 */
export function boundedFetch(
  maxMessageBytes: number,
  onOversized: (requestIds: readonly (string | number)[], message: string) => void,
  base: FetchLike = fetch,
): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    if (response.body === null) return response;
    const eventStream = (response.headers.get("content-type") ?? "").includes("text/event-stream");
    // The requests this response answers, read only if it turns out too large.
    const breached = (message: string) => onOversized(requestIdsOf(init?.body), message);
    const body = response.body.pipeThrough(messageBound(maxMessageBytes, eventStream, breached));
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** The ids of the JSON-RPC requests in a POST body (one message or a batch); none for anything else. */
function requestIdsOf(body: unknown): (string | number)[] {
  if (typeof body !== "string") return [];
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

/** Passes bytes through until one message (the whole body, or one event) passes `max`. */
function messageBound(max: number, eventStream: boolean, breached: (message: string) => void): TransformStream<Uint8Array, Uint8Array> {
  let size = 0;
  // Bytes seen since the last line feed were only carriage returns: a line feed now ends an event.
  let lineStart = false;
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
          } else if (byte !== CR) {
            lineStart = false;
            size += 1;
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

const LF = 0x0a;
const CR = 0x0d;
