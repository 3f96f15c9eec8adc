import type { CommandSpec } from "../cli/command.js";
import { authLogin, authLogout, authStatus } from "./auth.js";
import { callCommand } from "./call.js";
import { journalApprovals, journalExport, journalRevokeApprovals, journalSessions, journalShow, journalVerify } from "./journal.js";
import { runCommand } from "./run.js";
import { serveCommand } from "./serve.js";
import { toolsCheck, toolsList } from "./tools.js";

/** Every command of the stock CLI, in help order. */
export const COMMANDS: readonly CommandSpec[] = Object.freeze([
  toolsList,
  toolsCheck,
  callCommand,
  runCommand,
  serveCommand,
  journalSessions,
  journalShow,
  journalVerify,
  journalExport,
  journalApprovals,
  journalRevokeApprovals,
  authLogin,
  authStatus,
  authLogout,
]);
