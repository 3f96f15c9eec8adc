import type { OptionSpec } from "../cli/command.js";

/** Options shared by the commands that open sessions. */
export const SESSION_OPTIONS: Readonly<Record<string, OptionSpec>> = Object.freeze({
  policy: {
    type: "string",
    value: "FILE",
    description: "approval policy JSON {name, mode, classifications, rules} (default: every tool External, ask)",
  },
  approve: {
    type: "string",
    value: "MODE",
    choices: ["ask", "yes", "no"],
    description: "answer approvals the policy leaves to a person: ask on the terminal (default), yes, or no",
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
