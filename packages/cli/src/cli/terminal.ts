import { randomBytes } from "node:crypto";

/** Where a command writes: stdout for results, stderr for progress and errors. */
export interface TerminalStreams {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

type Style = "bold" | "dim" | "red" | "green" | "yellow" | "cyan";
const CODES: Record<Style, readonly [number, number]> = {
  bold: [1, 22],
  dim: [2, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
};

/**
 * The command's voice. Results go to stdout (plain, or JSON with `--json`); progress,
 * prompts and errors go to stderr, so piping stdout gives only results. Colour only on
 * a terminal, never with `NO_COLOR` (any value), `TERM=dumb` or `--json`; decided for
 * each stream, so `2>log` gets no escape codes while stdout is a terminal.
 *
 * A stream whose reader went away (`cli | head -1`: EPIPE) is not written to again, and
 * its write error does not crash the process: a closed stdout calls `onOutputClosed`
 * (the command stops, see `StopRequests`), a closed stderr only silences notes.
 */
export class Terminal {
  readonly #streams: TerminalStreams;
  readonly colour: boolean;
  readonly #errorColour: boolean;
  readonly json: boolean;
  #stdoutOpen = true;
  #stderrOpen = true;
  readonly #unwatch: readonly (() => void)[];
  /** What {@link paint} writes before an SGR code: a NUL and a nonce no other text can know. */
  readonly #mark = `\u0000${randomBytes(12).toString("base64url")}`;
  /** This terminal's marks with their code (`<mark>31m`), and every other control character. */
  readonly #control = new RegExp(`${this.#mark}\\d+m|${CONTROL_CLASS}`, "g");

  constructor(streams: TerminalStreams, options: { json: boolean; env: NodeJS.ProcessEnv; onOutputClosed?: () => void }) {
    this.#streams = streams;
    this.json = options.json;
    const colourAllowed = !options.json && options.env.NO_COLOR === undefined && options.env.TERM !== "dumb";
    this.colour = colourAllowed && streams.stdout.isTTY === true;
    this.#errorColour = colourAllowed && streams.stderr.isTTY === true;
    this.#unwatch = [
      watchForClose(streams.stdout, () => {
        this.#stdoutOpen = false;
        options.onOutputClosed?.();
      }),
      watchForClose(streams.stderr, () => {
        this.#stderrOpen = false;
      }),
    ];
  }

  /** Stops watching the streams (the command returned). */
  dispose(): void {
    for (const unwatch of this.#unwatch) unwatch();
  }

  /**
   * A result line on stdout. Control characters in it are shown escaped (`\u001b`): the
   * text may come from a tool, a server, a model or a bundle, and a raw escape sequence
   * could move the cursor, rewrite earlier lines or set the clipboard. Only the
   * terminal's own colours pass.
   */
  line(text = ""): void {
    if (this.#stdoutOpen) this.#streams.stdout.write(`${this.#printable(text, this.colour)}\n`);
  }

  /**
   * Many lines on stdout, written as fast as its reader takes them: in chunks of about
   * 64 KB, waiting for `drain` when the stream's buffer is full, and giving the event loop
   * a turn between chunks, so that Ctrl-C, SIGTERM and a reader that went away (`| head`:
   * EPIPE) stop the command (`signal`'s reason is thrown) instead of the whole output
   * being built in memory first. `exact` writes the lines byte for byte (`journal
   * export`: re-hashing needs every byte); otherwise as {@link line} does.
   */
  async stream(lines: Iterable<string>, options: { signal: AbortSignal; exact?: boolean }): Promise<void> {
    const { signal } = options;
    const stdout = this.#streams.stdout;
    let chunk = "";
    const flush = async (): Promise<void> => {
      if (signal.aborted) throw signal.reason;
      if (this.#stdoutOpen && chunk !== "") {
        const room = stdout.write(chunk);
        chunk = "";
        if (!room) await drained(stdout, signal);
      }
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (signal.aborted) throw signal.reason;
    };
    for (const line of lines) {
      chunk += `${options.exact === true ? line : this.#printable(line, this.colour)}\n`;
      if (chunk.length >= STREAM_CHUNK) await flush();
    }
    await flush();
  }

  /**
   * A JSON document on stdout (listing commands with `--json`). C1 and bidirectional
   * controls, which JSON may carry raw, are written as `\uXXXX` escapes: the same JSON
   * value, and nothing a terminal acts on when the document is shown rather than parsed.
   */
  printJson(value: unknown): void {
    if (this.#stdoutOpen) this.#streams.stdout.write(`${JSON.stringify(value, null, 2).replace(RAW_IN_JSON, escaped)}\n`);
  }

  /** A progress or status line on stderr. */
  note(text: string): void {
    this.#toStderr(`${text}\n`);
  }

  /** Writes raw text to stderr (prompts). */
  prompt(text: string): void {
    this.#toStderr(text);
  }

  /**
   * The error and its hint, on stderr: two lines, `error CODE: message` and `hint: …`; with
   * `--json`, one line `{"error":{"code","message","hint"}}` (C1 and bidirectional controls
   * escaped as in {@link printJson}).
   */
  error(code: string, message: string, hint: string): void {
    if (this.json) {
      this.#toStderr(`${JSON.stringify({ error: { code, message: oneLine(message), hint } }).replace(RAW_IN_JSON, escaped)}\n`);
      return;
    }
    this.#toStderr(`${this.paint("red", `error ${code}:`)} ${oneLine(message)}\n${this.paint("dim", `hint: ${hint}`)}\n`);
  }

  /** Usage text on stderr: help shown because the command line did not say what to do. */
  usage(text: string): void {
    this.#toStderr(`${text}\n`);
  }

  #toStderr(text: string): void {
    if (!this.#stderrOpen) return;
    // Text is painted for stdout (callers paint before choosing the stream): without colour on stderr its marks go.
    this.#streams.stderr.write(this.#printable(text, this.#errorColour));
  }

  /**
   * `text` in a style, where stdout has colour. The style is written as a mark only this
   * terminal knows (a NUL, a random nonce, the SGR code); writing turns this terminal's
   * marks into escape sequences and shows every other control character escaped. So text
   * from elsewhere cannot pass for the CLI's own colours: a tool's `\u001b[31m` is shown
   * as `\u001b[31m`, whether or not the stream has colour.
   */
  paint(style: Style, text: string): string {
    if (!this.colour) return text;
    const [open, close] = CODES[style];
    return `${this.#mark}${open}m${text}${this.#mark}${close}m`;
  }

  /** A readline prompt (written to stderr by the line reader, not through this terminal): as {@link note} would write it. */
  promptText(text: string): string {
    return this.#printable(text, this.#errorColour);
  }

  /** Text as a terminal may show it: this terminal's marks as colours (or nothing), other control characters escaped. */
  #printable(text: string, colour: boolean): string {
    return text.replace(this.#control, (match) => (match.length > 1 ? (colour ? `\u001b[${match.slice(this.#mark.length)}` : "") : escaped(match)));
  }
}

/** How much {@link Terminal.stream} gathers before a write. */
const STREAM_CHUNK = 64 * 1024;

/** Resolves when `stream` drains or closes, or `signal` aborts (the caller checks which). */
function drained(stream: NodeJS.WritableStream, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.removeListener("drain", done);
      stream.removeListener("close", done);
      stream.removeListener("error", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    stream.once("drain", done);
    stream.once("close", done);
    stream.once("error", done);
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * Every control character but tab and line feed (C0, DEL, C1), and the bidirectional
 * controls (marks, embeddings, overrides, isolates: U+061C, U+200E–U+200F,
 * U+202A–U+202E, U+2066–U+2069), which make a terminal show text in another order than
 * it is stored (`"\u202Etxt.exe"` shows as `exe.txt`), as a regular-expression class.
 */
const CONTROL_CLASS = "[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069]";

/** What {@link CONTROL_CLASS} matches that `JSON.stringify` leaves raw (it escapes C0 itself). */
// oxlint-disable-next-line no-control-regex
const RAW_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** A control character as text: `\u001b`, `\u000d`, … */
function escaped(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/** The callbacks of the terminals writing to a stream now (see {@link watchForClose}). */
const WATCHERS = new WeakMap<object, Set<() => void>>();

/**
 * Calls `closed` once when a write to `stream` fails (EPIPE: its reader went away), until
 * the returned function is called. The stream gets one permanent `error` listener, so a
 * write still in flight when the command returns cannot crash the process either, and
 * hosts running many commands in one process add no listener per command.
 */
function watchForClose(stream: NodeJS.WritableStream, closed: () => void): () => void {
  if (typeof (stream as { on?: unknown }).on !== "function") return () => undefined;
  let watchers = WATCHERS.get(stream);
  if (!watchers) {
    const current = new Set<() => void>();
    watchers = current;
    WATCHERS.set(stream, current);
    stream.on("error", () => {
      for (const watcher of current) watcher();
    });
  }
  const set = watchers;
  const once = () => {
    set.delete(once);
    closed();
  };
  set.add(once);
  return () => set.delete(once);
}

/** Collapses a message onto one line (errors are one line). */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}

/** Pads cells into aligned columns. */
export function table(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, index) => (widths[index] = Math.max(widths[index] ?? 0, cell.length)));
  return rows.map((row) =>
    row
      .map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index] ?? 0)))
      .join("  ")
      .trimEnd(),
  );
}

/** Shortens long text for one-line display. */
export function clip(text: string, max = 160): string {
  const flat = oneLine(text);
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
