/**
 * Whether `pnpm start`'s extra arguments ask for an OpenAI-compatible model instead of the
 * demo's script: `--base-url` or `--provider openai`, in either of the CLI's spellings
 * (`--flag value` and `--flag=value`).
 * @param {readonly string[]} args
 * @returns {boolean}
 */
export function drivesRealModel(args) {
  return args.some(
    (arg, index) =>
      arg === "--base-url" || arg.startsWith("--base-url=") || arg === "--provider=openai" || (arg === "--provider" && args[index + 1] === "openai"),
  );
}
