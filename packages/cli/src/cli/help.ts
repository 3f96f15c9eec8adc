import { GLOBAL_OPTIONS, type CommandSpec, type OptionSpec } from "./command.js";
import { optionsOf } from "./parse.js";
import { table } from "./terminal.js";

const EXIT_LINE =
  "exit codes: 0 ok, 1 failed (a problem found, a call that did not succeed), 2 usage, 3 an MCP provider unavailable for run's turn,\n" +
  "  130 Ctrl-C, 143 SIGTERM, 129 SIGHUP, 141 output closed";

/** The program's help: every command and the global options. */
export function programHelp(program: string, commands: readonly CommandSpec[], group?: string): string {
  const shown = group && commands.some((command) => command.words[0] === group) ? commands.filter((command) => command.words[0] === group) : commands;
  return [
    `usage: ${program} <command> [options]`,
    "",
    "commands:",
    ...table(shown.map((command) => [`  ${command.words.join(" ")}`, command.summary])),
    "",
    "global options:",
    ...optionLines(GLOBAL_OPTIONS),
    "",
    `Run \`${program} <command> --help\` for a command's options; \`${program} --version\` prints the CLI's version.`,
    'With --json, results are JSON on stdout and an error is one JSON line on stderr: {"error":{"code","message","hint"}}.',
    EXIT_LINE,
  ].join("\n");
}

/** One command's help. */
export function commandHelp(program: string, command: CommandSpec): string {
  const own = Object.fromEntries(Object.entries(optionsOf(command)).filter(([name]) => !(name in GLOBAL_OPTIONS)));
  return [
    `usage: ${program} ${command.words.join(" ")} ${command.usage}`.trimEnd(),
    "",
    command.summary,
    ...(command.details ? ["", command.details.trim()] : []),
    ...(Object.keys(own).length > 0 ? ["", "options:", ...optionLines(own)] : []),
    "",
    "global options:",
    ...optionLines(GLOBAL_OPTIONS),
    "",
    EXIT_LINE,
  ].join("\n");
}

function optionLines(options: Readonly<Record<string, OptionSpec>>): string[] {
  return table(
    Object.entries(options).map(([name, spec]) => [
      `  --${name}${spec.type === "string" ? ` ${spec.choices ? spec.choices.join("|") : (spec.value ?? "VALUE")}` : ""}`,
      spec.description,
    ]),
  );
}
