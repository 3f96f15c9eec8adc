import type { CallState } from "./live-state.js";

/**
 * A session's open calls, by id, in the order they were requested: the subset of `Map`
 * the writer uses. A session has a handful of open calls, each added and removed once;
 * deleting from a `Map` that is filled and emptied like that cost about 1 µs a call here
 * (the largest single line of a journal's profile at 200,000 records/s), where a short
 * scan and a splice allocate nothing. So up to {@link INDEXED_FROM} open calls live in a
 * plain array; past that (very many calls in flight in one session) in a `Map`, which
 * keeps their order and deletes in constant time, until the session has none open again.
 * (An index beside the array, renumbered after each splice, made every finished call
 * cost a walk over the calls after it: 25,600 host calls in flight on one session took
 * about 470–520 µs each in the runtime, 60 % of it there; the journal alone, 363 µs.)
 */
export class OpenCalls {
  private calls: CallState[] = [];
  private byId: Map<string, CallState> | undefined;

  get size(): number {
    return this.byId === undefined ? this.calls.length : this.byId.size;
  }

  get(callId: string): CallState | undefined {
    if (this.byId !== undefined) return this.byId.get(callId);
    const at = this.find(callId);
    return at < 0 ? undefined : this.calls[at];
  }

  has(callId: string): boolean {
    return this.byId === undefined ? this.find(callId) >= 0 : this.byId.has(callId);
  }

  /** Adds a call; its id must not be open already. */
  add(call: CallState): void {
    if (this.byId !== undefined) {
      this.byId.set(call.callId, call);
      return;
    }
    this.calls.push(call);
    if (this.calls.length > INDEXED_FROM) {
      this.byId = new Map(this.calls.map((open) => [open.callId, open]));
      this.calls = [];
    }
  }

  delete(callId: string): void {
    if (this.byId !== undefined) {
      this.byId.delete(callId);
      if (this.byId.size === 0) this.byId = undefined;
      return;
    }
    const at = this.find(callId);
    if (at >= 0) this.calls.splice(at, 1);
  }

  /** The open calls, in the order they were requested (recovery reports them so). */
  values(): Iterable<CallState> {
    return this.byId === undefined ? this.calls : this.byId.values();
  }

  private find(callId: string): number {
    for (let at = this.calls.length - 1; at >= 0; at -= 1) if (this.calls[at]!.callId === callId) return at;
    return -1;
  }
}

const INDEXED_FROM = 16;
