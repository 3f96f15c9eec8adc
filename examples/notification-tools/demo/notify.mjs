#!/usr/bin/env node
// Direct demo of the platform adapter ALONE: it shows one desktop notification through
// notify-send / osascript / powershell, bypassing any harness. It is not evidence of
// approvals, journaling or limits: none of those run here. Run it only with the local
// user's consent:   node examples/notification-tools/demo/notify.mjs "Title" "Body"
import { detectNotifier, showNotification } from "../dist/index.js";

const [title = "OpenWorker", body = "Hello from the notification-tools demo"] = process.argv.slice(2);
const notifier = detectNotifier();
if (!notifier) {
  console.error("no desktop notification command on this machine (notify-send, osascript or powershell)");
  process.exit(1);
}
await showNotification(notifier, { title, body, urgency: "normal" }, new AbortController().signal);
console.log(`shown through ${notifier.command} (${notifier.path})`);
