import path from "node:path";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { REGISTRY_ERROR_CODES as CODES } from "./codes.js";
import { findDuplicateJsonKey } from "./duplicate-keys.js";
import { jsonSyntaxProblem } from "./json-syntax.js";
import { normalizeProviderDefinition, typeOf } from "./provider-definition.js";
import type { McpProviderDefinition } from "./provider.js";
import { locateSandboxPolicy } from "./sandbox-policy.js";

const STDIO_FIELDS = ["transport", "command", "args", "env", "cwd", "placement", "sandbox", "connectTimeoutMs", "callTimeoutMs"];
const HTTP_FIELDS = ["transport", "url", "headers", "allowRemote", "placement", "connectTimeoutMs", "callTimeoutMs", "oauth"];
const HTTP_TYPES = new Set(["streamable_http", "streamable-http", "streamableHttp", "http"]);
/** `registerMcp` takes `program`; here it is `command`. */
const PROGRAM_HINT = 'use "command" (registerMcp\'s "program" is "command" in servers.json)';

/**
 * Parses an app-owned servers file (M1) into provider definitions, sorted by namespace.
 * Two shapes are accepted (README, "servers.json"): this project's
 * `{"servers": {"<namespace>": {"transport": "stdio" | "streamable_http", …}}}` and the
 * `{"mcpServers": {…}}` shape other MCP clients keep. Relative `command` paths (with a
 * slash) and relative `cwd` resolve against the file's folder; a bare command such as
 * `npx` stays as is for PATH lookup. `args` and `env` are never rewritten (they may not be
 * paths): a relative path among them is relative to the child's working folder, the
 * entry's `cwd` or else the host's (README, "How each stdio field resolves"). Every error
 * names the file, the entry and the field.
 *
 * @example
 * ```ts
 * parseServersFile('{"servers":{"acer":{"transport":"stdio","command":"bin/acer"}}}', "/app/servers.json");
 * // [{ transport: "stdio", namespace: "acer", program: "/app/bin/acer", args: [] }]
 * ```
 */
export function parseServersFile(text: string, file: string): McpProviderDefinition[] {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let document: unknown;
  try {
    document = JSON.parse(source);
  } catch (cause) {
    throw new OpenWorkerError(CODES.serversFileJson, `${file}: not valid JSON, ${jsonSyntaxProblem(source, cause)}`, {
      cause,
      details: { file },
    });
  }
  const duplicate = findDuplicateJsonKey(source);
  if (duplicate) {
    const servers = duplicate.path === "servers" || duplicate.path === "mcpServers";
    throw new OpenWorkerError(
      servers ? CODES.duplicateProvider : CODES.serversFileInvalid,
      servers
        ? `${file}: server ${JSON.stringify(duplicate.key)} appears twice in "${duplicate.path}"; two MCP providers cannot share a namespace: keep one entry for it`
        : `${file}: key ${JSON.stringify(duplicate.key)} appears twice${duplicate.path ? ` in "${duplicate.path}"` : ""}`,
      { details: { file, ...duplicate } },
    );
  }
  if (typeof document !== "object" || document === null || Array.isArray(document)) {
    throw invalid(file, `must be a JSON object with a "servers" or "mcpServers" object, got ${typeOf(document)}`);
  }
  const top = document as Record<string, unknown>;
  const own = "servers" in top;
  const foreign = "mcpServers" in top;
  if (own === foreign) {
    throw invalid(
      file,
      own ? 'has both "servers" and "mcpServers"; keep one of them' : 'must have a "servers" object (or the "mcpServers" object other MCP clients use)',
    );
  }
  if (own) {
    // Our own shape is strict so a typo fails; foreign files carry other clients' settings.
    const unknown = Object.keys(top).find((key) => key !== "servers" && key !== "$schema");
    if (unknown !== undefined) throw invalid(file, `unknown top-level field ${JSON.stringify(unknown)}`);
  }
  const key = own ? "servers" : "mcpServers";
  const entries = top[key];
  if (typeof entries !== "object" || entries === null || Array.isArray(entries)) {
    throw invalid(file, `field "${key}" must be an object keyed by namespace, got ${typeOf(entries)}`);
  }
  const folder = path.dirname(file);
  const providers: McpProviderDefinition[] = [];
  for (const [namespace, entry] of Object.entries(entries)) {
    const label = `${file}: server ${JSON.stringify(namespace)}`;
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
      throw invalid(file, `server ${JSON.stringify(namespace)}: must be an object, got ${typeOf(entry)}`);
    }
    const fields = entry as Record<string, unknown>;
    const definition = own ? fromServersEntry(fields, label) : fromMcpServersEntry(fields, label);
    if (definition === undefined) continue;
    const located = locate({ ...definition, namespace }, folder);
    providers.push(
      normalizeProviderDefinition(located, {
        label,
        fieldNames: own ? { program: "command" } : { program: "command", transport: "type" },
      }),
    );
  }
  return providers.sort((a, b) => (a.namespace < b.namespace ? -1 : a.namespace > b.namespace ? 1 : 0));
}

function fromServersEntry(fields: Record<string, unknown>, label: string): Record<string, unknown> {
  const transport = fields.transport;
  if (transport === undefined) {
    throw invalidEntry(label, 'field "transport" is missing; use "stdio" or "streamable_http"');
  }
  const known = transport === "stdio" ? STDIO_FIELDS : transport === "streamable_http" ? HTTP_FIELDS : undefined;
  const unknown = known && Object.keys(fields).find((field) => !known.includes(field));
  if (unknown !== undefined) {
    throw invalidEntry(
      label,
      `field ${JSON.stringify(unknown)} is not known for transport ${JSON.stringify(transport)} (known: ${known!.join(", ")})` +
        (unknown === "program" && transport === "stdio" ? `; ${PROGRAM_HINT}` : ""),
    );
  }
  const { command, ...rest } = fields;
  return transport === "stdio" ? { ...rest, program: command } : rest;
}

/** The `mcpServers` shape: `command` means stdio; `url` or an HTTP `type` means streamable HTTP. */
function fromMcpServersEntry(fields: Record<string, unknown>, label: string): Record<string, unknown> | undefined {
  if (fields.disabled === true) return undefined;
  const type = fields.type ?? fields.transport;
  const isHttp = type === undefined ? "url" in fields && !("command" in fields) : HTTP_TYPES.has(type as string);
  if (isHttp) {
    const { url, headers, allowRemote, placement, connectTimeoutMs, callTimeoutMs, oauth } = fields;
    return { transport: "streamable_http", url, headers, allowRemote, placement, connectTimeoutMs, callTimeoutMs, oauth };
  }
  if (type !== undefined && type !== "stdio") {
    const hint = type === "sse" ? "; the legacy SSE transport is not supported, use streamable HTTP" : "";
    throw new OpenWorkerError(
      CODES.transportUnknown,
      `${label}: field "type" ${JSON.stringify(type)} is not supported (use "stdio", "streamable-http" or "http")${hint}`,
      { details: { field: "type", type } },
    );
  }
  const { command, args, env, cwd, placement, sandbox, connectTimeoutMs, callTimeoutMs } = fields;
  // Unknown fields are ignored in this shape, so "program" alone would read as a missing "command".
  if (command === undefined && fields.program !== undefined) {
    throw new OpenWorkerError(CODES.providerInvalid, `${label}: field "command" is missing and "program" is given; ${PROGRAM_HINT}`, {
      details: { field: "command" },
    });
  }
  return { transport: "stdio", program: command, args, env, cwd, placement, sandbox, connectTimeoutMs, callTimeoutMs };
}

function locate(definition: Record<string, unknown>, folder: string): Record<string, unknown> {
  const located = Object.fromEntries(Object.entries(definition).filter(([, value]) => value !== undefined));
  const { program, cwd } = located;
  // A bare command ("npx", "node") is looked up on PATH; anything with a slash is a path.
  if (typeof program === "string" && /[\\/]/.test(program) && !path.isAbsolute(program)) {
    located.program = path.resolve(folder, program);
  }
  if (typeof cwd === "string" && cwd.length > 0 && !path.isAbsolute(cwd)) located.cwd = path.resolve(folder, cwd);
  if (located.sandbox !== undefined) located.sandbox = locateSandboxPolicy(located.sandbox, folder);
  return located;
}

function invalid(file: string, problem: string): OpenWorkerError {
  return new OpenWorkerError(CODES.serversFileInvalid, `${file}: ${problem}`, { details: { file } });
}

function invalidEntry(label: string, problem: string): OpenWorkerError {
  return new OpenWorkerError(CODES.serversFileInvalid, `${label}: ${problem}`);
}
