import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import path from "node:path";

/** A desktop notification to show. */
export interface Notification {
  readonly title: string;
  readonly body: string;
  readonly urgency: "low" | "normal" | "critical";
}

/** The platform's own notification command, as found on this machine. */
export interface Notifier {
  /** `notify-send` (Linux), `osascript` (macOS) or `powershell` (Windows). */
  readonly command: string;
  /** Absolute path of the command. */
  readonly path: string;
  /** The argument list that shows `notification` (no shell is involved). */
  argsFor(notification: Notification): string[];
}

function findOnPath(command: string, searchPath: string): string | undefined {
  const extensions = process.platform === "win32" ? [".exe", ".cmd", ""] : [""];
  for (const folder of searchPath.split(path.delimiter).filter(Boolean)) {
    for (const extension of extensions) {
      const candidate = path.join(folder, command + extension);
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // not here; keep looking
      }
    }
  }
  return undefined;
}

const appleScriptString = (text: string) => `"${text.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
const powerShellString = (text: string) => `'${text.replaceAll("'", "''")}'`;

/**
 * Finds the platform's notification command, or `undefined` where there is none.
 * Looked up once (at registration), so the tool's hot path and its `modelContext`
 * hook do no I/O.
 */
export function detectNotifier(platform: NodeJS.Platform = process.platform, searchPath = process.env.PATH ?? ""): Notifier | undefined {
  if (platform === "darwin") {
    const found = findOnPath("osascript", searchPath);
    return found === undefined
      ? undefined
      : {
          command: "osascript",
          path: found,
          argsFor: (n) => ["-e", `display notification ${appleScriptString(n.body)} with title ${appleScriptString(n.title)}`],
        };
  }
  if (platform === "win32") {
    const found = findOnPath("powershell", searchPath);
    return found === undefined
      ? undefined
      : {
          command: "powershell",
          path: found,
          argsFor: (n) => [
            "-NoProfile",
            "-Command",
            `[reflection.assembly]::loadwithpartialname('System.Windows.Forms') | Out-Null; ` +
              `$n = New-Object System.Windows.Forms.NotifyIcon; $n.Icon = [System.Drawing.SystemIcons]::Information; ` +
              `$n.Visible = $true; $n.ShowBalloonTip(5000, ${powerShellString(n.title)}, ${powerShellString(n.body)}, 'None')`,
          ],
        };
  }
  const found = findOnPath("notify-send", searchPath);
  return found === undefined
    ? undefined
    : {
        command: "notify-send",
        path: found,
        argsFor: (n) => ["--urgency", n.urgency, "--app-name", "OpenWorker", "--", n.title, n.body],
      };
}

/** Why showing a notification failed: a message safe to hand to the model. */
export class NotifierFailure extends Error {}

/**
 * Runs the notifier as a child process the call owns, in its own process group:
 * aborting `signal` kills the whole group (a wrapper script's children too), so a
 * cancelled call leaves nothing behind. Resolves when the command exits 0.
 */
export function showNotification(notifier: Notifier, notification: Notification, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const posix = process.platform !== "win32";
    const child = spawn(notifier.path, notifier.argsFor(notification), { stdio: ["ignore", "ignore", "pipe"], detached: posix });
    const kill = () => {
      try {
        if (posix && child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
        else child.kill("SIGKILL");
      } catch {
        // already gone
      }
      reject(signal.reason instanceof Error ? signal.reason : new Error("cancelled"));
    };
    if (signal.aborted) return kill();
    signal.addEventListener("abort", kill, { once: true });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      if (stderr.length < 1000) stderr += chunk;
    });
    child.on("error", () => {
      signal.removeEventListener("abort", kill);
      reject(new NotifierFailure(`${notifier.command} could not start`));
    });
    child.on("close", (code) => {
      signal.removeEventListener("abort", kill);
      if (code === 0) resolve();
      else reject(new NotifierFailure(`${notifier.command} exited with code ${code}${stderr ? `: ${stderr.trim().slice(0, 300)}` : ""}`));
    });
  });
}
