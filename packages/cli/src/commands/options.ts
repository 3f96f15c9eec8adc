import type { OptionSpec } from "../cli/command.js";

const POLICY_OPTION: OptionSpec = {
  type: "string",
  value: "FILE",
  description: "approval policy JSON {name, mode, classifications, rules} (default: every tool External, ask)",
};

/** Options shared by the terminal commands that open sessions (`call`, `run`). */
export const SESSION_OPTIONS: Readonly<Record<string, OptionSpec>> = Object.freeze({
  policy: POLICY_OPTION,
  approve: {
    type: "string",
    value: "MODE",
    choices: ["ask", "yes", "no"],
    description: "answer approvals the policy leaves to a person: ask on the terminal (default), yes, or no",
  },
});

/**
 * `serve`'s session options: its `--approve` defaults to `no` (an MCP client is not a person
 * at this terminal), and `ask` needs `--http`, since on stdio stdin is the MCP transport
 * (see `serveMcp`).
 */
export const SERVE_SESSION_OPTIONS: Readonly<Record<string, OptionSpec>> = Object.freeze({
  policy: { ...POLICY_OPTION, description: `with --mcp: ${POLICY_OPTION.description}` },
  approve: {
    type: "string",
    value: "MODE",
    choices: ["ask", "yes", "no"],
    description: "with --mcp: answer approvals the policy leaves to a person: no (default), yes, or ask (needs --http and a terminal)",
  },
});

/** The `--script` option of commands that drive a model. */
export const SCRIPT_OPTION: Readonly<Record<string, OptionSpec>> = Object.freeze({
  script: {
    type: "string",
    value: "FILE",
    description: "scripted model: JSON array of steps {text?, toolCalls?: [{name: alias, arguments}]}",
  },
});
