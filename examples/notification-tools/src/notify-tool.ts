import { defineTool, type Tool, ToolError } from "@openworker/tools-sdk";
import { Type } from "typebox";
import { type Notifier, NotifierFailure, showNotification } from "./platform.js";

const inputSchema = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 120, description: "Notification title." }),
    body: Type.String({ maxLength: 1000, description: "Notification text." }),
    urgency: Type.Optional(Type.Union([Type.Literal("low"), Type.Literal("normal"), Type.Literal("critical")])),
  },
  { additionalProperties: false },
);

/**
 * Creates `notification.notify`, which shows a desktop notification through the
 * platform's own command. Where the platform has none it returns the ToolError
 * `NOTIFIER_UNAVAILABLE`, so the model can tell the user instead of pretending.
 */
export function createNotifyTool(notifier: Notifier | undefined): Tool {
  return defineTool({
    name: "notification.notify",
    description: "Show a desktop notification to the user on this computer.",
    version: "1.0.0",
    inputSchema,
    modelContext: () => ({ desktopNotifications: notifier ? "available" : "unavailable" }),
    async call(args, context) {
      if (!notifier) {
        return new ToolError("NOTIFIER_UNAVAILABLE", "this computer has no desktop notification command (notify-send, osascript or powershell)");
      }
      try {
        await showNotification(notifier, { title: args.title, body: args.body, urgency: args.urgency ?? "normal" }, context.signal);
      } catch (error) {
        if (error instanceof NotifierFailure) return new ToolError("NOTIFY_FAILED", error.message);
        throw error;
      }
      return { json: { shown: true, via: notifier.command } };
    },
  });
}
