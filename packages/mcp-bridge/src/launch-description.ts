import type { McpProviderDefinition } from "@openworker/registry";
import { redact, redactArgs, redactUrl } from "./redact.js";

/**
 * How a provider is named in messages and the inventory: the program's file name for
 * stdio (never its arguments or environment), the URL's origin and path for HTTP
 * (never its credentials or query).
 */
export function describeLaunch(definition: McpProviderDefinition): string {
  if (definition.transport === "stdio") {
    const program = definition.program.split(/[\\/]/).pop() ?? definition.program;
    return `stdio: ${program}`;
  }
  try {
    const url = new URL(definition.url);
    return `streamable_http: ${url.origin}${url.pathname}`;
  } catch {
    return "streamable_http: (invalid URL)";
  }
}

/**
 * How a provider's start is shown while it runs (`npx -y @modelcontextprotocol/server-everything`,
 * `http://127.0.0.1:8080/mcp`): the program's file name and its arguments with their
 * credentials masked ({@link redactArgs}), or the redacted URL, at most 120 characters.
 */
export function describeStart(definition: McpProviderDefinition, secrets: readonly string[]): string {
  const text =
    definition.transport === "stdio"
      ? [definition.program.split(/[\\/]/).pop() ?? definition.program, ...redactArgs(definition.args)].join(" ")
      : redactUrl(definition.url);
  // Control characters would act on the terminal the line is shown in.
  const shown = [...redact(text, secrets)].map((char) => (char.charCodeAt(0) < 0x20 || char === "\u007f" ? " " : char)).join("");
  return shown.length > 120 ? `${shown.slice(0, 119)}…` : shown;
}
