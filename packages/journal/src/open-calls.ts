import type { CallState } from "./live-state.js";

/**
 * A session's open calls, by id: the subset of `Map` the writer uses, kept in a plain
 * array. A session has a handful of open calls, each added and removed once; deleting
 * from a `Map` that is filled and emptied like that cost about 1 µs a call here (the
 * largest single line of a journal's profile at 200,000 records/s), where a short scan
 * and a splice allocate nothing. Past {@link INDEXED_FROM} open calls (very many
 * calls in flight in one session) lookups go through a `Map` index.
 */
export class OpenCalls {
  private readonly calls: CallState[] = [];
  private index: Map<string, number> | undefined;

  get size(): number {
    return this.calls.length;
  }

  get(callId: string): CallState | undefined {
    const at = this.find(callId);
    return at < 0 ? undefined : this.calls[at];
  }

  has(callId: string): boolean {
    return this.find(callId) >= 0;
  }

  /** Adds a call; its id must not be open already. */
  add(call: CallState): void {
    this.index?.set(call.callId, this.calls.length);
    this.calls.push(call);
    if (this.index === undefined && this.calls.length > INDEXED_FROM) {
      this.index = new Map(this.calls.map((open, at) => [open.callId, at]));
    }
  }

  delete(callId: string): void {
    const at = this.find(callId);
    if (at < 0) return;
    this.calls.splice(at, 1);
    if (this.index !== undefined) {
      this.index.delete(callId);
      for (let later = at; later < this.calls.length; later += 1) this.index.set(this.calls[later]!.callId, later);
    }
  }

  /** The open calls, in the order they were requested (recovery reports them so). */
  values(): readonly CallState[] {
    return this.calls;
  }

  private find(callId: string): number {
    if (this.index !== undefined) return this.index.get(callId) ?? -1;
    for (let at = this.calls.length - 1; at >= 0; at -= 1) if (this.calls[at]!.callId === callId) return at;
    return -1;
  }
}

const INDEXED_FROM = 16;
