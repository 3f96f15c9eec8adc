import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client";
import { liveTree, startTimeOf, TREE_MARK_VARIABLE, type ProcessIdentity, type TreeMark } from "./probe.js";
import { guardGroup, terminateTree, type TerminationReport } from "./terminate.js";

/** What to start and how. */
export interface ChildLaunch {
  readonly program: string;
  readonly args: readonly string[];
  /** The complete environment of the child (already the safe base plus the provider's own, E6). */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly maxMessageBytes: number;
  /** Bytes that may wait to be written to the child's stdin before it is taken for broken (see `send`). */
  readonly maxStdinBacklogBytes: number;
  readonly closeGraceMs: number;
  readonly onStderr?: (text: string) => void;
  /** Called once, when the tree's termination starts for any reason (close, crash, failed connect). */
  readonly onTermination: (termination: Promise<TerminationReport>) => void;
}

/** How the child ended, for diagnostics. */
export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

// After the child exits, give its stdout a moment to deliver what it wrote last.
const STDOUT_DRAIN_MS = 100;
/**
 * After an error writing to the child's stdin (EPIPE), how long the child may still run
 * before it is taken to have closed its stdin: a child that died is reported by its exit,
 * which comes within this wait.
 */
const STDIN_CLOSED_GRACE_MS = 100;
/** How long a child with a backlog over the bound may take nothing from its stdin before it is given up on. */
const STDIN_STALL_MS = 1_000;
/** A backlog this many times the bound is given up on even while the child still reads: the host outpaces it without end. */
const STDIN_HARD_FACTOR = 16;
const DROPPED_EDGE_BYTES = 256;
const DROPPED_ID = /"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*$/;
/** The JSON-RPC error code of a response dropped for its size (in the implementation-defined server-error range). */
export const OVERSIZED_RESPONSE_CODE = -32099;
const NEWLINE = 0x0a;
/** The end of a child's stderr kept for the message of a failed start: a fixed buffer, whatever the child writes. */
const STDERR_TAIL_BYTES = 2_048;
/** Lines of that tail a message shows at most (never a part of one: a cut could leave part of a secret that redaction no longer finds). */
const STDERR_TAIL_LINES = 5;
/**
 * How long a failed start waits for the child's stderr to close before reading its tail:
 * a child that wrote megabytes may still be draining them when it exits. Paid only by a
 * start that failed.
 */
const STDERR_CLOSE_WAIT_MS = 1_000;
/** A stack frame (`    at f (file:1:2)`) or a line with nothing to read (blank, `{`, `^`): a message skips them. */
const STDERR_NOISE = /^(?:\s+at\s.*|[\s{}()[\],^~]*)$/;

/**
 * An MCP stdio client transport (newline-delimited JSON-RPC) over a child process
 * started in its own process group, so that closing it ends the whole tree (M4).
 * The SDK's `StdioClientTransport` cannot start the child detached, hence this one.
 *
 * Lines that are not JSON-RPC (a server's stray logging on stdout) are skipped and
 * counted, never fatal. Writes issued in the same tick go out as one pipe write.
 */
export class ChildProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  /** Non-JSON-RPC lines skipped on stdout. */
  skippedLines = 0;
  /** Set once the child has exited. */
  exit: ChildExit | undefined;
  /**
   * Why the transport gave up on a child that is still running (it stopped reading its
   * stdin); the connection reports it to the calls in flight.
   */
  broken: string | undefined;

  private child: ChildProcess | undefined;
  private pending: Buffer[] = [];
  private readonly inbox: JSONRPCMessage[] = [];
  private draining = false;
  private pendingBytes = 0;
  private discardingLine = false;
  // The start and end of the line being dropped for its size: enough to tell a response
  // and find its id, so that its request fails at once instead of waiting for its timeout.
  private droppedHead = "";
  private droppedTail = "";
  private droppedBytes = 0;
  private outgoing: string[] = [];
  private flushQueued = false;
  /** Characters handed to the child's stdin so far, and what the child had taken when the backlog was last seen to shrink (see `stalled`). */
  private queued = 0;
  private watch: { taken: number; since: number } | undefined;
  private stallCheck: NodeJS.Timeout | undefined;
  private closed = false;
  private termination: Promise<TerminationReport> | undefined;
  /** Descendants noted while the provider ran (see {@link noteDescendants}). */
  private seen: readonly ProcessIdentity[] = [];
  /** The environment entry every process of this tree inherits (see {@link TreeMark}). */
  private readonly markValue = randomUUID();
  private mark: TreeMark | undefined;
  /** The last {@link STDERR_TAIL_BYTES} bytes the child wrote to stderr (allocated by its first write), and how many of them are filled. */
  private stderrTail: Buffer | undefined;
  private stderrTailBytes = 0;
  private stderrTotalBytes = 0;
  /** Resolves when the child's stderr has closed. */
  private stderrClosed: Promise<void> = Promise.resolve();

  constructor(private readonly launch: ChildLaunch) {}

  /** The child's pid (also its process group id), once started. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /**
   * The child's stderr, once started. With `pid`, it is how the SDK's client knows a
   * stdio transport (M6): there a server that does not answer the era probe, or ends
   * on it, is a 2025-era server, where on HTTP that silence is an outage.
   */
  get stderr(): NodeJS.ReadableStream | null {
    return this.child?.stderr ?? null;
  }

  start(): Promise<void> {
    if (this.child) return Promise.reject(new Error("ChildProcessTransport already started"));
    return new Promise((resolve, reject) => {
      const child = spawn(this.launch.program, [...this.launch.args], {
        env: { ...this.launch.env, [TREE_MARK_VARIABLE]: this.markValue },
        cwd: this.launch.cwd,
        detached: true,
        // stderr is always read: its end explains a provider that fails to start (see lastStderrLines).
        stdio: ["pipe", "pipe", "pipe"],
        windowsHide: true,
        shell: false,
      });
      this.child = child;
      let started = false;
      child.once("spawn", () => {
        started = true;
        if (child.pid !== undefined) {
          // Without the provider's start time (it already ended), every process is read.
          this.mark = { name: TREE_MARK_VARIABLE, value: this.markValue, since: startTimeOf(child.pid) ?? 0 };
          guardGroup(child.pid, this.mark);
        }
        resolve();
      });
      child.once("error", (error) => {
        if (!started) {
          this.closed = true;
          reject(error);
          return;
        }
        this.onerror?.(error);
      });
      // The connection ends when the child exited and its stdout ended; a grandchild may
      // hold stdout open forever, and the exit status may trail the end of stdout, so
      // either one alone ends it after a short drain.
      let stdoutEnded = false;
      child.once("exit", (code, signal) => {
        this.exit = { code, signal };
        if (stdoutEnded) this.finish();
        else setTimeout(() => this.finish(), STDOUT_DRAIN_MS).unref();
      });
      child.stdout?.on("data", (chunk: Buffer) => this.receive(chunk));
      child.stdout?.once("end", () => {
        stdoutEnded = true;
        if (this.exit) this.finish();
        else setTimeout(() => this.finish(), STDOUT_DRAIN_MS).unref();
      });
      child.stdout?.on("error", (error) => this.onerror?.(error));
      child.stdin?.on("error", () => {
        // EPIPE after the child died: the exit handler reports the loss. A child that still
        // runs a moment later closed its stdin: no request can reach it, and one written
        // meanwhile would wait out its whole time bound for an answer.
        setTimeout(() => {
          if (this.exit === undefined) this.giveUp("the provider closed its stdin while still running, so no request can reach it; the bridge ended it");
        }, STDIN_CLOSED_GRACE_MS).unref();
      });
      const onStderr = this.launch.onStderr;
      const stderr = child.stderr;
      if (stderr) {
        this.stderrClosed = new Promise((resolve) => stderr.once("close", () => resolve()));
        stderr.on("data", (chunk: Buffer) => {
          this.keepStderr(chunk);
          onStderr?.(chunk.toString("utf8"));
        });
        stderr.on("error", () => {});
      }
    });
  }

  /**
   * Where the child was to start, for the message of a start that failed (ENOENT,
   * EACCES): the program as the system looked for it (a path with a slash resolves
   * against the child's working folder; a bare name is looked up on the PATH the child
   * was given) and that folder, saying so when it does not exist (spawn reports ENOENT
   * for a missing folder too).
   */
  describeStart(): string {
    const folder = path.resolve(this.launch.cwd ?? process.cwd());
    const program = this.launch.program;
    const where = /[\\/]/.test(program) ? JSON.stringify(path.resolve(folder, program)) : `${JSON.stringify(program)} (looked up on its PATH)`;
    return `${where} in folder ${JSON.stringify(folder)}${existsSync(folder) ? "" : " (that folder does not exist)"}`;
  }

  /**
   * The last whole lines the child wrote to stderr, at most {@link STDERR_TAIL_LINES}
   * of them from its last {@link STDERR_TAIL_BYTES} bytes, without stack frames and
   * blank lines, joined by line breaks; `undefined` when it wrote none. Not redacted: the
   * caller redacts. Waits for stderr to close first (its last chunk may trail the exit),
   * never longer than {@link STDERR_CLOSE_WAIT_MS}.
   */
  async lastStderrLines(): Promise<string | undefined> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.stderrClosed, new Promise<void>((resolve) => (timer = setTimeout(resolve, STDERR_CLOSE_WAIT_MS).unref()))]);
    clearTimeout(timer);
    if (this.stderrTail === undefined || this.stderrTailBytes === 0) return undefined;
    let lines = this.stderrTail.toString("utf8", 0, this.stderrTailBytes).split(/\r?\n/);
    // A tail that lost its start begins mid-line (maybe mid-character, or mid-secret).
    if (this.stderrTotalBytes > this.stderrTailBytes) lines = lines.slice(1);
    const shown = lines
      .filter((line) => !STDERR_NOISE.test(line))
      .slice(-STDERR_TAIL_LINES)
      .map((line) => line.trim())
      .join("\n");
    return shown === "" ? undefined : shown;
  }

  /** Keeps the last {@link STDERR_TAIL_BYTES} bytes of stderr in one fixed buffer: memory stays bounded whatever the child writes. */
  private keepStderr(chunk: Buffer): void {
    const tail = (this.stderrTail ??= Buffer.allocUnsafe(STDERR_TAIL_BYTES));
    this.stderrTotalBytes += chunk.length;
    if (chunk.length >= STDERR_TAIL_BYTES) {
      chunk.copy(tail, 0, chunk.length - STDERR_TAIL_BYTES);
      this.stderrTailBytes = STDERR_TAIL_BYTES;
      return;
    }
    const kept = Math.min(this.stderrTailBytes, STDERR_TAIL_BYTES - chunk.length);
    tail.copy(tail, 0, this.stderrTailBytes - kept, this.stderrTailBytes);
    chunk.copy(tail, kept);
    this.stderrTailBytes = kept + chunk.length;
  }

  // The first message of an event-loop turn is written at once (no added latency); the
  // ones that follow in the same turn go out together in one write at setImmediate.
  //
  // A child that stops reading its stdin leaves what is written to it in the host's memory
  // (`stdin.writableLength`): a server flooding requests the SDK answers (pings) grew the
  // host to its heap limit. Before each write the backlog is checked (see `stalled`).
  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (this.closed || !stdin || stdin.destroyed || !stdin.writable) return Promise.reject(new Error("Not connected"));
    if (stdin.writableLength > this.launch.maxStdinBacklogBytes && this.stalled(stdin.writableLength)) {
      return Promise.reject(new Error(this.broken ?? "Not connected"));
    }
    const line = `${JSON.stringify(message)}\n`;
    this.queued += line.length;
    if (this.flushQueued) {
      this.outgoing.push(line);
      return Promise.resolve();
    }
    this.flushQueued = true;
    setImmediate(() => this.flush());
    stdin.write(line);
    return Promise.resolve();
  }

  private flush(): void {
    this.flushQueued = false;
    const stdin = this.child?.stdin;
    const batch = this.outgoing;
    if (batch.length === 0) return;
    this.outgoing = [];
    if (this.closed || !stdin || stdin.destroyed || !stdin.writable) return;
    if (stdin.writableLength > this.launch.maxStdinBacklogBytes && this.stalled(stdin.writableLength)) return;
    for (const line of batch) this.queued += line.length;
    stdin.write(batch.length === 1 ? (batch[0] as string) : batch.join(""));
  }

  /**
   * Whether a child with `waiting` characters queued for its stdin (over
   * `maxStdinBacklogBytes`) has stopped reading it, in which case it is given up on (see
   * {@link giveUp}). Queued is not stopped: a child slower than the host, or one large
   * message, leaves a backlog that shrinks. So past the bound the transport watches what
   * the child takes (written so far minus what still waits): a child that took nothing
   * for {@link STDIN_STALL_MS}, or a backlog {@link STDIN_HARD_FACTOR} times the bound,
   * is broken. Counted in the characters of the lines written, as `writableLength` counts
   * strings.
   */
  private stalled(waiting: number): boolean {
    const taken = this.queued - waiting;
    const now = Date.now();
    if (this.watch === undefined || taken > this.watch.taken) this.watch = { taken, since: now };
    const bound = this.launch.maxStdinBacklogBytes;
    if (waiting <= bound * STDIN_HARD_FACTOR && now - this.watch.since < STDIN_STALL_MS) {
      // Looked at again once the wait is over, even if nothing more is sent meanwhile.
      this.stallCheck ??= setTimeout(
        () => {
          this.stallCheck = undefined;
          const left = this.child?.stdin?.writableLength ?? 0;
          if (!this.closed && left > bound) this.stalled(left);
        },
        STDIN_STALL_MS - (now - this.watch.since) + 10,
      ).unref();
      return false;
    }
    this.giveUp(
      `the provider stopped reading its stdin (${waiting} characters were waiting to be written to it, over the ${bound}-byte bound, ` +
        `${waiting > bound * STDIN_HARD_FACTOR ? `past ${STDIN_HARD_FACTOR} times it` : `and it took none of them for ${STDIN_STALL_MS} ms`}); the bridge ended it`,
    );
    return true;
  }

  /**
   * A child that still runs but can take no more requests (it stopped reading its stdin,
   * or closed it): what waits for it is dropped, the connection ends at once (its calls
   * fail as crashed, saying `why`) and the tree is ended as for a crash.
   */
  private giveUp(why: string): void {
    // A tree being ended (a close, a crash) is not given up on: its own reason stands.
    if (this.broken !== undefined || this.closed || this.termination !== undefined) return;
    this.broken = why;
    this.outgoing = [];
    // Frees the backlog now; the child reads end-of-file if it ever reads again.
    this.child?.stdin?.destroy();
    this.finish();
    void this.terminate();
  }

  /** Ends the process tree (verified); resolves once it is done, whatever the outcome. */
  async close(): Promise<void> {
    await this.terminate();
  }

  /**
   * Remembers the provider's descendants as they are now (pid and start time, from
   * `/proc`), so that ending the tree later also finds one that has since lost every link
   * to it: a daemon started with `setsid` whose parents then exited on their own. The
   * connection calls it once the provider has answered (after `initialize`, after a
   * listing): a walk of `/proc`, never per call.
   */
  noteDescendants(): void {
    const pid = this.child?.pid;
    if (pid === undefined || this.termination) return;
    this.seen = liveTree(pid, pid, this.seen);
  }

  /** Ends the process tree and reports whether it is confirmed gone. Idempotent. */
  terminate(): Promise<TerminationReport> {
    if (!this.termination) {
      const child = this.child;
      this.termination = child
        ? terminateTree(child, this.launch.closeGraceMs, this.seen, this.mark)
        : Promise.resolve({ confirmed: true, step: "stdin", survivors: [] });
      this.launch.onTermination(this.termination);
      void this.termination.then(() => this.finish());
    }
    return this.termination;
  }

  private receive(chunk: Buffer): void {
    this.split(chunk);
    if (!this.draining && this.inbox.length > 0) this.drain();
  }

  private split(chunk: Buffer): void {
    let start = 0;
    for (let index = chunk.indexOf(NEWLINE); index !== -1; index = chunk.indexOf(NEWLINE, start)) {
      const piece = chunk.subarray(start, index);
      start = index + 1;
      if (this.discardingLine) {
        this.discardingLine = false;
        this.noteDropped(piece);
        this.droppedLineEnded();
        continue;
      }
      if (this.pendingBytes + piece.length > this.launch.maxMessageBytes) {
        this.dropOversized();
        this.noteDropped(piece);
        this.droppedLineEnded();
        continue;
      }
      if (this.pending.length === 0) this.enqueue(piece);
      else {
        this.pending.push(piece);
        const line = Buffer.concat(this.pending, this.pendingBytes + piece.length);
        this.pending = [];
        this.pendingBytes = 0;
        this.enqueue(line);
      }
    }
    if (start >= chunk.length) return;
    const rest = chunk.subarray(start);
    if (this.discardingLine) {
      this.noteDropped(rest);
      return;
    }
    if (this.pendingBytes + rest.length > this.launch.maxMessageBytes) {
      this.dropOversized();
      this.noteDropped(rest);
      this.discardingLine = true;
      return;
    }
    this.pending.push(rest);
    this.pendingBytes += rest.length;
  }

  private dropOversized(): void {
    // What was pending is the start of the dropped line.
    for (const part of this.pending) this.noteDropped(part);
    this.pending = [];
    this.pendingBytes = 0;
    this.skippedLines++;
    this.onerror?.(new Error(`skipped a stdout line over ${this.launch.maxMessageBytes} bytes`));
  }

  private noteDropped(part: Buffer): void {
    if (this.droppedHead.length < DROPPED_EDGE_BYTES) this.droppedHead += part.subarray(0, DROPPED_EDGE_BYTES - this.droppedHead.length).toString("latin1");
    this.droppedTail = (this.droppedTail + part.subarray(Math.max(0, part.length - DROPPED_EDGE_BYTES)).toString("latin1")).slice(-DROPPED_EDGE_BYTES);
    this.droppedBytes += part.length;
  }

  /**
   * A dropped line that was a response (a `result` or `error` and no `method`, with the
   * `id` last, as JSON-RPC peers serialize it) is answered here with an error for its id,
   * so the waiting call fails at once (as a size breach) instead of at its timeout.
   */
  private droppedLineEnded(): void {
    const head = this.droppedHead;
    const tail = this.droppedTail;
    const bytes = this.droppedBytes;
    this.droppedHead = "";
    this.droppedTail = "";
    this.droppedBytes = 0;
    if (head.includes('"method"') || !/"(result|error)"/.test(head)) return;
    const id = DROPPED_ID.exec(tail)?.[1];
    if (id === undefined) return;
    this.inbox.push({
      jsonrpc: "2.0",
      id: JSON.parse(id) as string | number,
      error: {
        code: OVERSIZED_RESPONSE_CODE,
        message: `the response was ${bytes} bytes, over the ${this.launch.maxMessageBytes}-byte message bound; it was dropped`,
      },
    } as JSONRPCMessage);
  }

  private enqueue(line: Buffer): void {
    let message: unknown;
    try {
      message = JSON.parse(line.toString("utf8"));
    } catch {
      if (line.toString("utf8").trim() !== "") this.skippedLines++;
      return;
    }
    // The SDK's Protocol classifies each message against its schemas; here only the
    // envelope is checked so that arbitrary JSON printed by a server is skipped too.
    if (typeof message !== "object" || message === null || (message as { jsonrpc?: unknown }).jsonrpc !== "2.0") {
      this.skippedLines++;
      return;
    }
    this.inbox.push(message as JSONRPCMessage);
  }

  // The SDK runs notification handlers (progress) one microtask later but handles a
  // response at once, dropping the request's progress handler: a progress notification
  // followed by the response in the same chunk would lose the last progress event.
  // After each notification, the rest waits a microtask.
  private drain(): void {
    this.draining = true;
    for (let message = this.inbox.shift(); message !== undefined; message = this.inbox.shift()) {
      try {
        this.onmessage?.(message);
      } catch (error) {
        this.onerror?.(error as Error);
      }
      if (this.inbox.length > 0 && "method" in message && !("id" in message)) {
        queueMicrotask(() => this.drain());
        return;
      }
    }
    this.draining = false;
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}
