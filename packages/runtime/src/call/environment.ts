import type { ResolvedTool } from "@openworker/bundle-resolver";
import type { SessionJournal } from "@openworker/journal";
import type { McpSession } from "@openworker/mcp-bridge";
import type { EventHub } from "../events.js";
import type { ApprovalVerdict } from "./approval.js";
import type { Elicitor } from "./elicitation.js";
import type { ApprovalPolicy, Approver } from "../policy.js";
import type { Redactor } from "../secrets.js";

/** What the call pipeline needs from its session: fixed when the session opens. */
export interface CallEnvironment {
  readonly sessionId: string;
  readonly workspace: string;
  readonly executionIdentity: string;
  readonly policy: ApprovalPolicy;
  readonly approver: Approver | undefined;
  readonly approvalTimeoutMs: number;
  /** Answers MCP providers' requests for user input during their calls (M9), unless a host call brings its own. */
  readonly elicitor: Elicitor | undefined;
  /** Keep accepted elicitation values in the journal (redacted), not only their digest. */
  readonly journalElicitedContent: boolean;
  /** Lowers the 75 s bound for this session's calls (never raises it). */
  readonly callTimeoutMs: number | undefined;
  readonly journal: SessionJournal;
  readonly mcp: McpSession;
  readonly redactor: Redactor;
  readonly events: EventHub;
  /** Each selected tool's verdict under the session's fixed policy, once made (`null`: a person decides). See `standingVerdict`. */
  readonly verdicts: WeakMap<ResolvedTool, ApprovalVerdict | null>;
}
