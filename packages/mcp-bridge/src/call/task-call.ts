import { ProtocolError, SdkError, SdkErrorCode, type Client } from "@modelcontextprotocol/client";
import type { ChannelRequest, ChannelSettlement } from "./call-channel.js";
import { RAW_RESULT } from "./client-calls.js";

/** Statuses of an MCP task (2025-11-25). */
type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

interface TaskState {
  readonly taskId: string;
  readonly status: TaskStatus;
  readonly statusMessage?: string;
  readonly pollInterval?: number;
}

/** How often a task is polled when the server suggests nothing, and the bounds of what it may suggest. */
const DEFAULT_POLL_MS = 1_000;
const MIN_POLL_MS = 100;
const MAX_POLL_MS = 5_000;
/** Bound of each of the task's own requests (start, poll, result, cancel). */
const STEP_TIMEOUT_MS = 30_000;

/**
 * Runs one `tools/call` as an MCP task (M10, the 2025-11-25 tasks of a server that
 * declares `tasks.requests.tools.call`): the call is started with a `task` field, its
 * status is polled (`tasks/get`) at the interval the server asks for (100 ms to 5 s),
 * each status change is reported as progress (which the runtime journals), and once it
 * completes or fails its result is fetched (`tasks/result`). Cancellation and the call's
 * bound send `tasks/cancel`. A task that asks for input is cancelled: the bridge offers
 * no elicitation. Never retried, never replayed. Resolves, never rejects.
 */
export async function callAsTask(client: Client, request: ChannelRequest): Promise<ChannelSettlement> {
  const deadline = Date.now() + request.timeoutMs;
  const signal = request.signal;
  const step = (method: string, params: Record<string, unknown>) =>
    client.request({ method, params } as never, RAW_RESULT, {
      timeout: Math.max(1, Math.min(STEP_TIMEOUT_MS, deadline - Date.now())),
      ...(signal ? { signal } : {}),
    });
  let task: TaskState | undefined;
  try {
    const started = (await step("tools/call", { name: request.name, arguments: request.args, task: { ttl: request.timeoutMs } })) as { task?: unknown };
    // A server that ran the call at once answers with its result.
    if (!isTask(started.task)) return { kind: "result", value: started };
    task = started.task;
    let reported: string | undefined;
    let reports = 0;
    for (;;) {
      const said = `task ${task.status}${task.statusMessage ? `: ${task.statusMessage}` : ""}`;
      if (said !== reported) {
        request.progress?.report({ progress: ++reports, message: said });
        reported = said;
      }
      if (task.status === "completed" || task.status === "failed") return { kind: "result", value: await step("tasks/result", { taskId: task.taskId }) };
      if (task.status === "cancelled")
        return { kind: "error", code: 0, message: `the server cancelled the task${task.statusMessage ? ` (${task.statusMessage})` : ""}`, data: undefined };
      if (task.status === "input_required") {
        await cancel(client, task.taskId);
        return {
          kind: "error",
          code: 0,
          message: "the task asked for input, which this host does not offer (no elicitation); it was cancelled",
          data: undefined,
        };
      }
      const wait = Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, task.pollInterval ?? DEFAULT_POLL_MS));
      if (Date.now() + wait >= deadline) {
        await sleep(Math.max(0, deadline - Date.now()), signal);
        await cancel(client, task.taskId);
        return { kind: "timed_out" };
      }
      await sleep(wait, signal);
      const polled = await step("tasks/get", { taskId: task.taskId });
      if (!isTask(polled)) return { kind: "error", code: 0, message: "the server answered tasks/get with something that is not a task", data: undefined };
      task = polled;
    }
  } catch (error) {
    if (signal?.aborted) {
      if (task !== undefined) await cancel(client, task.taskId);
      return { kind: "cancelled", why: "the call was cancelled" };
    }
    if (ProtocolError.isInstance(error)) return { kind: "error", code: error.code, message: error.message, data: error.data };
    if (SdkError.isInstance(error) && error.code === SdkErrorCode.RequestTimeout) {
      if (task !== undefined) await cancel(client, task.taskId);
      return { kind: "timed_out" };
    }
    if (SdkError.isInstance(error) && error.code === SdkErrorCode.ConnectionClosed) return { kind: "crashed" };
    return { kind: "send_failed", error };
  }
}

function isTask(value: unknown): value is TaskState {
  const task = value as Partial<TaskState> | null | undefined;
  return typeof task === "object" && task !== null && typeof task.taskId === "string" && typeof task.status === "string";
}

/** Tells the server to stop the task; a server that cannot be told has nothing running to stop, or is gone. */
async function cancel(client: Client, taskId: string): Promise<void> {
  await client.request({ method: "tasks/cancel", params: { taskId } } as never, RAW_RESULT, { timeout: 5_000 }).catch(() => undefined);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
