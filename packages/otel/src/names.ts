/**
 * The names this package writes: the OpenTelemetry GenAI semantic conventions where they
 * have one (Development status: spans `invoke_agent`, `chat`, `execute_tool`, the
 * `gen_ai.*` attributes and duration metrics), and `openworker.*` for what is the
 * runtime's own (journal ids, approvals, limits, providers).
 */
export const ATTRIBUTES = Object.freeze({
  operationName: "gen_ai.operation.name",
  providerName: "gen_ai.provider.name",
  requestModel: "gen_ai.request.model",
  conversationId: "gen_ai.conversation.id",
  agentName: "gen_ai.agent.name",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolCallArguments: "gen_ai.tool.call.arguments",
  toolCallResult: "gen_ai.tool.call.result",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  tokenType: "gen_ai.token.type",
  errorType: "error.type",
  sessionId: "openworker.session.id",
  turnId: "openworker.turn.id",
  turnReason: "openworker.turn.reason",
  attempt: "openworker.attempt",
  attemptToolCalls: "openworker.attempt.tool_calls",
  toolKind: "openworker.tool.kind",
  callOutcome: "openworker.call.outcome",
  callWaitMs: "openworker.call.wait_ms",
  approvalDecision: "openworker.approval.decision",
  approvalBy: "openworker.approval.by",
  approvalScope: "openworker.approval.scope",
  elicitationMode: "openworker.elicitation.mode",
  elicitationAction: "openworker.elicitation.action",
  elicitationBy: "openworker.elicitation.by",
  validationResult: "openworker.validation.result",
  limitName: "openworker.limit.name",
  diagnosticCode: "openworker.diagnostic.code",
  mcpProvider: "openworker.mcp.provider",
});

/** `gen_ai.operation.name` values. */
export const OPERATIONS = Object.freeze({ turn: "invoke_agent", attempt: "chat", call: "execute_tool" });

/** Span events. */
export const SPAN_EVENTS = Object.freeze({
  approvalRequested: "openworker.approval.requested",
  approvalDecided: "openworker.approval.decided",
  elicitationAsked: "openworker.elicitation.asked",
  elicitationAnswered: "openworker.elicitation.answered",
  validation: "openworker.validation",
  callStarted: "openworker.call.started",
  limitBreach: "openworker.limit.breach",
  diagnostic: "openworker.diagnostic",
});

/** Metric instruments. */
export const METRICS = Object.freeze({
  modelDuration: "gen_ai.client.operation.duration",
  tokenUsage: "gen_ai.client.token.usage",
  turnDuration: "gen_ai.invoke_agent.duration",
  toolDuration: "gen_ai.execute_tool.duration",
  toolCalls: "openworker.tool.calls",
  approvalDenials: "openworker.approval.denials",
  limitBreaches: "openworker.limit.breaches",
  providersUnavailable: "openworker.provider.unavailable",
});

/**
 * `openworker.limit.name` values beside the per-call ones the runtime reports
 * (`resultBytes`, `progressEvents`, … of `LimitName`): the call bound (E1), the calls run
 * per model answer, the calls an answer may hold at all, and the attempts per turn.
 */
export const LIMITS = Object.freeze({
  callTimeout: "callTimeout",
  callsPerAttempt: "callsPerAttempt",
  callsPerAnswer: "callsPerAnswer",
  attemptsPerTurn: "attemptsPerTurn",
});
