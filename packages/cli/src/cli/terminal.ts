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
 * a terminal, never with `NO_COLOR` (any value), `TERM=dumb` or `--json`.
 */
export class Terminal {
  readonly #streams: TerminalStreams;
  readonly colour: boolean;
  readonly json: boolean;

  constructor(streams: TerminalStreams, options: { json: boolean; env: NodeJS.ProcessEnv }) {
    this.#streams = streams;
    this.json = options.json;
    this.colour =
      !options.json && streams.stdout.isTTY === true && options.env.NO_COLOR === undefined && options.env.TERM !== "dumb";
  }

  /** A result line on stdout. */
  line(text = ""): void {
    this.#streams.stdout.write(`${text}\n`);
  }

  /** A JSON document on stdout (listing commands with `--json`). */
  printJson(value: unknown): void {
    this.#streams.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** A progress or status line on stderr. */
  note(text: string): void {
    this.#streams.stderr.write(`${text}\n`);
  }

  /** Writes raw text to stderr (prompts). */
  prompt(text: string): void {
    this.#streams.stderr.write(text);
  }

  /** The one-line error and its hint, on stderr. */
  error(code: string, message: string, hint: string): void {
    this.#streams.stderr.write(`${this.paint("red", `error ${code}:`)} ${oneLine(message)}\n${this.paint("dim", `hint: ${hint}`)}\n`);
  }

  paint(style: Style, text: string): string {
    if (!this.colour) return text;
    const [open, close] = CODES[style];
    return `\u001b[${open}m${text}\u001b[${close}m`;
  }
}

/** Collapses a message onto one line (errors are one line). */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}

/** Pads cells into aligned columns. */
export function table(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, index) => (widths[index] = Math.max(widths[index] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index] ?? 0))).join("  ").trimEnd());
}

/** Shortens long text for one-line display. */
export function clip(text: string, max = 160): string {
  const flat = oneLine(text);
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
