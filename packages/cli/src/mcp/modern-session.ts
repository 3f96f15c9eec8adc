import type { Session } from "@openworker/runtime";
import { IdleExpiry } from "./idle-expiry.js";

/**
 * The OpenWorker session that `serve --mcp --http` serves 2026-07-28 ("modern") clients
 * from. That protocol revision has no MCP sessions: every request stands alone, so there
 * is no client session to map to an OpenWorker session, as 2025 clients get. All modern
 * requests share this one, opened at the first tool call (listing needs none) and closed
 * once nothing of it has been in progress for the idle timeout, as an idle 2025 session
 * is; the next tool call opens a new one. It holds no `--max-sessions` slot: no client
 * can keep it, so none can lock another out.
 *
 * Work is `begin()`/`end()`: a request being answered (an open event stream included) or
 * a tool call running, which may outlive the request that asked for it.
 */
export class ModernSession {
  #active = 0;
  #current: OpenSession | undefined;
  readonly #open: () => Promise<Session>;
  readonly #timeoutMs: number;
  readonly #expired: () => void;

  /** `expired` is told each time an idle session is closed. */
  constructor(open: () => Promise<Session>, timeoutMs: number, expired: () => void) {
    this.#open = open;
    this.#timeoutMs = timeoutMs;
    this.#expired = expired;
  }

  /** The open session, opening one when there is none; a failed open is not kept. */
  session(): Promise<Session> {
    if (this.#current) return this.#current.session;
    const idle = new IdleExpiry(this.#timeoutMs, () => {
      if (this.#current?.idle === idle) this.#current = undefined;
      this.#expired();
      void session.then((opened) => opened.close()).catch(() => undefined);
    });
    // The timer sees all work in progress as one piece: it is armed only when none is.
    if (this.#active > 0) idle.begin();
    const session = this.#open();
    const current: OpenSession = { session, idle };
    this.#current = current;
    session.then(
      (opened) => {
        current.opened = opened;
        idle.open();
      },
      () => {
        idle.stop();
        if (this.#current?.idle === idle) this.#current = undefined;
      },
    );
    return session;
  }

  /** The open session once it opened; undefined while none is open (or it is still opening). */
  get current(): Session | undefined {
    return this.#current?.opened;
  }

  begin(): void {
    this.#active += 1;
    if (this.#active === 1) this.#current?.idle.begin();
  }

  end(): void {
    this.#active -= 1;
    if (this.#active === 0) this.#current?.idle.end();
  }

  /** Closes the open session, if any (the server stops). */
  async close(): Promise<void> {
    const current = this.#current;
    this.#current = undefined;
    if (!current) return;
    current.idle.stop();
    await current.session.then((opened) => opened.close()).catch(() => undefined);
  }
}

/** The session of 2026-07-28 clients while it opens and is open. */
interface OpenSession {
  readonly session: Promise<Session>;
  readonly idle: IdleExpiry;
  opened?: Session;
}
