import { parseArgs } from "node:util";
import { GLOBAL_OPTIONS, JSON_OPTION, type CommandSpec, type OptionSpec } from "./command.js";
import { usageError } from "./errors.js";

/** What the command line asked for. */
export type ParsedCommandLine =
  | { readonly kind: "help"; readonly command: CommandSpec | undefined; readonly group: string | undefined }
  | { readonly kind: "version" }
  | {
      readonly kind: "run";
      readonly command: CommandSpec;
      readonly values: Readonly<Record<string, string | boolean | undefined>>;
      readonly positionals: readonly string[];
    };

/** Every option a command accepts: globals, its own, and `--json` for listings. */
export function optionsOf(command: CommandSpec): Record<string, OptionSpec> {
  return { ...GLOBAL_OPTIONS, ...(command.listing ? JSON_OPTION : {}), ...command.options };
}

/**
 * Finds the command (its words may be spread among global options: `--journal j.db
 * journal sessions`), then parses strictly with that command's options: an unknown
 * option or a missing value is a usage error (exit 2).
 */
export function parseCommandLine(argv: readonly string[], commands: readonly CommandSpec[]): ParsedCommandLine {
  const words = leadingWords(argv, commands);
  const command = matchCommand(words, commands);
  const asksHelp = argv.includes("--help") || argv.includes("-h") || words[0] === "help";
  if (!command) {
    // `--version` belongs to the program, not to a command: `run --version` is an unknown option.
    if (argv.includes("--version") && words.length === 0) return { kind: "version" };
    if (asksHelp || argv.length === 0) {
      const group = words[0] === "help" ? words[1] : words[0];
      const exact = words[0] === "help" ? matchCommand(words.slice(1), commands) : undefined;
      return { kind: "help", command: exact, group };
    }
    const group = commands.filter((candidate) => candidate.words[0] === words[0]);
    if (group.length > 0) {
      throw usageError(
        `\`${words.join(" ")}\` is not a command; ${words[0]} takes one of: ${group.map((candidate) => candidate.words.slice(1).join(" ")).join(", ")}`,
      );
    }
    throw usageError(
      `unknown command ${JSON.stringify(words[0] ?? argv[0])}; commands: ${[...new Set(commands.map((candidate) => candidate.words[0]))].join(", ")}`,
    );
  }
  if (asksHelp) return { kind: "help", command, group: command.words[0] };

  const options = optionsOf(command);
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: Object.fromEntries(Object.entries(options).map(([name, spec]) => [name, { type: spec.type }])),
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    throw usageError(`${command.words.join(" ")}: ${(error as Error).message.replace(/\. To specify a positional argument.*$/s, "")}`);
  }
  const positionals = withoutWords(parsed.positionals, command.words);
  const { min, max } = command.positionals;
  if (positionals.length < min) throw usageError(`${command.words.join(" ")} needs ${command.usage.split(" ").slice(0, min).join(" ")}`);
  if (positionals.length > max) throw usageError(`${command.words.join(" ")}: unexpected argument ${JSON.stringify(positionals[max])}`);
  for (const [name, value] of Object.entries(parsed.values)) {
    const spec = options[name];
    if (spec?.type === "string" && value === "") throw usageError(`--${name} needs a value`);
  }
  return { kind: "run", command, values: parsed.values as Record<string, string | boolean | undefined>, positionals };
}

/** The command the line names, if any, even when its options do not parse (for the error's hint). */
export function commandNamed(argv: readonly string[], commands: readonly CommandSpec[]): CommandSpec | undefined {
  return matchCommand(leadingWords(argv, commands), commands);
}

/** The positionals before any command-specific argument, skipping global option values. */
function leadingWords(argv: readonly string[], commands: readonly CommandSpec[]): string[] {
  const takesValue = new Set<string>();
  for (const command of commands) for (const [name, spec] of Object.entries(optionsOf(command))) if (spec.type === "string") takesValue.add(name);
  const words: string[] = [];
  for (let index = 0; index < argv.length && words.length < 3; index++) {
    const arg = argv[index]!;
    if (arg === "--") break;
    if (arg.startsWith("-")) {
      const name = arg.replace(/^-+/, "");
      if (!name.includes("=") && takesValue.has(name)) index++;
      continue;
    }
    words.push(arg);
  }
  return words;
}

function matchCommand(words: readonly string[], commands: readonly CommandSpec[]): CommandSpec | undefined {
  let best: CommandSpec | undefined;
  for (const command of commands) {
    if (command.words.every((word, index) => words[index] === word) && (!best || command.words.length > best.words.length)) best = command;
  }
  return best;
}

function withoutWords(positionals: readonly string[], words: readonly string[]): string[] {
  const rest = [...positionals];
  for (const word of words) {
    const index = rest.indexOf(word);
    if (index !== -1) rest.splice(index, 1);
  }
  return rest;
}
