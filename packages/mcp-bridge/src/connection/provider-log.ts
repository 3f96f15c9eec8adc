import type { McpProviderLog } from "../options.js";
import { redact } from "../redact.js";

/** Longest message passed on, in UTF-16 code units (about 2 KiB of text). */
const MAX_MESSAGE = 2048;
/** Messages passed on per connection per second. */
const PER_SECOND = 20;

/**
 * Passes a connection's log notifications on to the host's listener, bounded (E2's
 * spirit for logs): a rate per second, a length per message, secrets removed (E6).
 */
export class ProviderLog {
  private windowStart = 0;
  private inWindow = 0;
  private dropped = 0;

  constructor(
    private readonly namespace: string,
    private readonly sessionId: string,
    private readonly secrets: readonly string[],
    private readonly listener: (event: McpProviderLog) => void,
  ) {}

  receive(params: { level?: unknown; logger?: unknown; data?: unknown } | undefined): void {
    const now = Date.now();
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.inWindow = 0;
    }
    if (this.inWindow >= PER_SECOND) {
      this.dropped++;
      return;
    }
    this.inWindow++;
    const data = params?.data;
    let text: string;
    try {
      text = typeof data === "string" ? data : (JSON.stringify(data) ?? "");
    } catch {
      text = "(a message that is not JSON)";
    }
    // Cut before redacting costs a secret split at the cut: redact both ways.
    const cut = text.length > MAX_MESSAGE ? `${redact(text, this.secrets).slice(0, MAX_MESSAGE)}… (${text.length} characters)` : redact(text, this.secrets);
    const event: McpProviderLog = {
      namespace: this.namespace,
      sessionId: this.sessionId,
      level: typeof params?.level === "string" ? params.level : "info",
      ...(typeof params?.logger === "string" ? { logger: redact(params.logger.slice(0, 200), this.secrets) } : {}),
      message: cut,
      ...(this.dropped > 0 ? { dropped: this.dropped } : {}),
    };
    this.dropped = 0;
    try {
      this.listener(event);
    } catch {
      // A listener that throws changes nothing for the connection.
    }
  }
}
