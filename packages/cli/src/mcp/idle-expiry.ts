/**
 * When one `serve --mcp --http` client session has been idle long enough to end it. A
 * client that goes away without DELETE (killed, crashed, a laptop closed) would otherwise
 * keep its OpenWorker session, that session's MCP processes and a `--max-sessions` slot
 * until the server stops.
 *
 * Idle means nothing of the session is in progress: no HTTP request being answered (an
 * open event stream, the client's GET or a POST's SSE answer, is a request being
 * answered), and no tool call running, approval included, which a client may have
 * stopped listening to. Each piece of work is `begin()`/`end()`. One timer per session,
 * re-armed in place (`refresh()`, no allocation) when the last piece of work ends;
 * unref'd, so it never keeps the process alive.
 */
export class IdleExpiry {
  #active = 0;
  #timer: NodeJS.Timeout | undefined;
  #state: "opening" | "open" | "ended" = "opening";
  readonly #timeoutMs: number;
  readonly #expire: () => void;

  /** `expire` ends the session as a DELETE would; it is called at most once. */
  constructor(timeoutMs: number, expire: () => void) {
    this.#timeoutMs = timeoutMs;
    this.#expire = expire;
  }

  /**
   * The client has its session id. Until then nothing is armed: an `initialize` the
   * transport refused (406, 415) leaves no session to end, and no timer behind.
   */
  open(): void {
    if (this.#state !== "opening") return;
    this.#state = "open";
    if (this.#active === 0) this.#arm();
  }

  /** Whether a request or a tool call of this session is in progress. */
  get busy(): boolean {
    return this.#active > 0;
  }

  /** A request or a tool call of this session started. */
  begin(): void {
    this.#active += 1;
  }

  /** One ended; the last one to end starts the idle timeout over. */
  end(): void {
    this.#active -= 1;
    if (this.#active === 0 && this.#state === "open") this.#arm();
  }

  /** The session ended (DELETE, expiry, a refused open, the server stopping). */
  stop(): void {
    this.#state = "ended";
    clearTimeout(this.#timer);
  }

  #arm(): void {
    if (this.#timer !== undefined) {
      this.#timer.refresh();
      return;
    }
    // A timer that fires while work is in progress does nothing: that work's end re-arms it.
    this.#timer = setTimeout(() => {
      if (this.#active > 0 || this.#state !== "open") return;
      this.stop();
      this.#expire();
    }, this.#timeoutMs).unref();
  }
}
