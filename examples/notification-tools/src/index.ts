// The reference partner package: a native notification tool and its platform adapter.
import type { ToolRegistrar } from "@openworker/tools-sdk";
import { createNotifyTool } from "./notify-tool.js";
import { detectNotifier } from "./platform.js";

export { createNotifyTool } from "./notify-tool.js";
export { detectNotifier, showNotification, type Notification, type Notifier } from "./platform.js";

/** Registers `notification.notify`, with the notifier of this machine detected once, now. */
export function register(registry: ToolRegistrar): void {
  registry.register(createNotifyTool(detectNotifier()));
}
