import { modelAlias, OpenWorkerError, readToolDescriptor, snapshotDescriptor, type Tool, type ToolDescriptor } from "@openworker/tools-sdk";
import { REGISTRY_ERROR_CODES as CODES } from "./codes.js";
import { readConfigFile } from "./config-file.js";
import {
  describeProvider,
  normalizeProviderDefinition,
  type StdioProviderInput,
  type StreamableHttpProviderInput,
  withTransport,
} from "./provider-definition.js";
import type { McpProviderDefinition } from "./provider.js";
import { parseServersFile } from "./servers-file.js";

/**
 * A native tool as the registry holds it: the descriptor read once, frozen.
 *
 * @example
 * ```ts
 * const entry: RegisteredTool | undefined = registry.get("example.shout");
 * entry?.descriptor.version; // "1.0.0"
 * ```
 */
export interface RegisteredTool {
  /** Qualified name, `namespace.tool` (N1). */
  readonly name: string;
  /** Model alias (N2): every `.` replaced by `__`. */
  readonly alias: string;
  /** Deep-frozen snapshot of what `tool.descriptor()` returned at registration. */
  readonly descriptor: ToolDescriptor;
  readonly tool: Tool;
  /** Native tools always run in the host process (A4). */
  readonly placement: "host";
  /** What the host asked for, if anything; `undefined` means the default, External (A1). Never changes placement. */
  readonly classification?: string;
}

/**
 * Options of {@link ToolRegistry.register}.
 *
 * @example
 * ```ts
 * registry.register(tool, { classification: "internal" } satisfies RegisterOptions);
 * ```
 */
export interface RegisterOptions {
  /**
   * Only `"host"`: native tools are trusted host code (A4). Typed so, and checked at run
   * time too: `"sandbox"` from JavaScript (or through a cast) fails with
   * `NATIVE_SANDBOX_PLACEMENT`.
   */
  readonly placement?: "host";
  /** Approval classification (A1); changes approval rules only, never placement. */
  readonly classification?: string;
}

/**
 * The tools a host makes available: native tools and named MCP providers, with every
 * naming rule (N1–N6) checked at registration and nothing registrable after
 * {@link ToolRegistry.freeze} (N8). An explicit instance: there is no process-global
 * registry. Registering a tool makes it available, never visible: only a bundle's
 * selection is shown to the model (B2).
 *
 * @example
 * ```ts
 * const registry = new ToolRegistry();
 * registry.register(codeTool("example.shout", "Uppercase text.", schema, handler));
 * registry.registerMcp({ namespace: "acer", program: "bin/acer-mcp-launcher" });
 * registry.freeze();
 * ```
 */
export class ToolRegistry {
  readonly #natives = new Map<string, RegisteredTool>();
  readonly #aliases = new Map<string, string>();
  /** Native namespace → its tool names (for N5 checks and "has: …" hints). */
  readonly #nativeNamespaces = new Map<string, Set<string>>();
  readonly #providers = new Map<string, McpProviderDefinition>();
  #frozen = false;
  #sortedNatives: readonly RegisteredTool[] | undefined;
  #sortedProviders: readonly McpProviderDefinition[] | undefined;

  /**
   * Registers a native tool: calls `tool.descriptor()` once, checks it (T1, N1–N4),
   * refuses sandbox placement (A4), duplicates and alias collisions (N6) and MCP
   * namespaces (N5), and stores a frozen snapshot.
   *
   * @example
   * ```ts
   * registry.register(shout, { classification: "internal" });
   * ```
   */
  register(tool: Tool, options: RegisterOptions = {}): void {
    this.#assertOpen("register a native tool");
    const entry = this.#prepareNative(tool, options);
    this.#check(entry);
    this.#commitNative(entry);
  }

  /**
   * Registers several native tools at once: all of them or, when one fails, none.
   * Handy for a partner package's `register(registry)`.
   *
   * @example
   * ```ts
   * registry.registerAll([shout, whisper]);
   * ```
   */
  registerAll(tools: Iterable<Tool>, options: RegisterOptions = {}): void {
    this.#assertOpen("register native tools");
    const entries = [...tools].map((tool) => this.#prepareNative(tool, options));
    const staged = new ToolRegistry();
    for (const provider of this.#providers.values()) staged.#providers.set(provider.namespace, provider);
    for (const existing of this.#natives.values()) staged.#commitNative(existing);
    for (const entry of entries) {
      staged.#check(entry);
      staged.#commitNative(entry);
    }
    for (const entry of entries) this.#commitNative(entry);
  }

  /**
   * Registers a stdio MCP provider (M1): the runtime starts `program` with `args`.
   *
   * @example
   * ```ts
   * registry.registerMcp({ namespace: "acer", program: "bin/acer-mcp-launcher", args: [] });
   * ```
   */
  registerMcp(definition: StdioProviderInput): void {
    this.registerProvider(withTransport(definition, "stdio") as unknown as McpProviderDefinition);
  }

  /**
   * Registers a streamable-HTTP MCP provider of a local service (M1). Non-local URLs
   * need `allowRemote: true`.
   *
   * @example
   * ```ts
   * registry.registerMcpHttp({ namespace: "local", url: "http://127.0.0.1:8123/mcp" });
   * ```
   */
  registerMcpHttp(definition: StreamableHttpProviderInput): void {
    this.registerProvider(withTransport(definition, "streamable_http") as unknown as McpProviderDefinition);
  }

  /**
   * Registers an MCP provider of either transport after checking every field, N3 and
   * N5 (no native tool and no other provider on its namespace).
   *
   * @example
   * ```ts
   * registry.registerProvider({ transport: "stdio", namespace: "acer", program: "/opt/acer/mcp", args: [] });
   * ```
   */
  registerProvider(definition: McpProviderDefinition): void {
    this.#assertOpen("register an MCP provider");
    const provider = normalizeProviderDefinition(definition);
    this.#checkProvider(provider);
    this.#commitProvider(provider);
  }

  /**
   * Registers every provider of an app-owned servers file (M1; format in the README),
   * all of them or none. Relative `command`/`cwd` resolve against the file's folder.
   *
   * @example
   * ```ts
   * await registry.loadServersFile("servers.json");
   * ```
   */
  async loadServersFile(file: string): Promise<void> {
    this.#assertOpen("load a servers file");
    const { text } = await readConfigFile(file, { codePrefix: "SERVERS_FILE" });
    this.#assertOpen("load a servers file");
    const providers = parseServersFile(text, file);
    for (const provider of providers) {
      try {
        this.#checkProvider(provider);
      } catch (error) {
        // A clash with what the host registered: name the file the entry came from.
        if (!OpenWorkerError.isInstance(error)) throw error;
        throw new OpenWorkerError(error.code, `${file}: server ${JSON.stringify(provider.namespace)}: ${error.message}`, {
          cause: error,
          details: { ...error.details, file },
        });
      }
    }
    for (const provider of providers) this.#commitProvider(provider);
  }

  /**
   * Removes a native tool; returns whether it existed. Only before {@link freeze}
   * (agentd parity; prefer registering once at startup).
   *
   * @example
   * ```ts
   * registry.unregister("example.shout"); // true
   * ```
   */
  unregister(name: string): boolean {
    this.#assertOpen("unregister a tool");
    const entry = this.#natives.get(name);
    if (!entry) return false;
    this.#natives.delete(name);
    this.#aliases.delete(entry.alias);
    const namespace = namespaceOf(name);
    const names = this.#nativeNamespaces.get(namespace);
    names?.delete(name);
    if (names?.size === 0) this.#nativeNamespaces.delete(namespace);
    this.#sortedNatives = undefined;
    return true;
  }

  /**
   * Freezes the registry (N8): every later `register*`, `loadServersFile` or
   * `unregister` fails with `REGISTRY_FROZEN`. A runtime freezes the registry it opens.
   * Idempotent.
   *
   * @example
   * ```ts
   * registry.freeze();
   * registry.frozen; // true
   * ```
   */
  freeze(): void {
    this.#frozen = true;
  }

  /** Whether {@link freeze} was called. */
  get frozen(): boolean {
    return this.#frozen;
  }

  /**
   * How many native tools are registered (agentd's `count`).
   *
   * @example
   * ```ts
   * registry.count(); // 0 in a stock binary
   * ```
   */
  count(): number {
    return this.#natives.size;
  }

  /**
   * The native tool with exactly this qualified name (case-sensitive), if any.
   *
   * @example
   * ```ts
   * registry.get("example.shout")?.alias; // "example__shout"
   * ```
   */
  get(name: string): RegisteredTool | undefined {
    return this.#natives.get(name);
  }

  /**
   * Every native tool, sorted by name.
   *
   * @example
   * ```ts
   * registry.natives().map((tool) => tool.name);
   * ```
   */
  natives(): readonly RegisteredTool[] {
    this.#sortedNatives ??= Object.freeze([...this.#natives.values()].sort((a, b) => compare(a.name, b.name)));
    return this.#sortedNatives;
  }

  /**
   * The native tool names of one namespace, sorted (for "did you mean" hints; never a fallback).
   *
   * @example
   * ```ts
   * registry.nativeNames("example"); // ["example.shout"]
   * ```
   */
  nativeNames(namespace: string): readonly string[] {
    return [...(this.#nativeNamespaces.get(namespace) ?? [])].sort(compare);
  }

  /**
   * Every MCP provider, sorted by namespace.
   *
   * @example
   * ```ts
   * registry.providers().map((provider) => provider.namespace);
   * ```
   */
  providers(): readonly McpProviderDefinition[] {
    this.#sortedProviders ??= Object.freeze([...this.#providers.values()].sort((a, b) => compare(a.namespace, b.namespace)));
    return this.#sortedProviders;
  }

  /**
   * The MCP provider of a namespace, if any.
   *
   * @example
   * ```ts
   * registry.provider("acer")?.transport; // "stdio"
   * ```
   */
  provider(namespace: string): McpProviderDefinition | undefined {
    return this.#providers.get(namespace);
  }

  /**
   * Who owns a namespace (N5): native tools, one MCP provider, or nobody.
   *
   * @example
   * ```ts
   * registry.namespaceOwner("acer"); // "mcp"
   * ```
   */
  namespaceOwner(namespace: string): "native" | "mcp" | undefined {
    if (this.#nativeNamespaces.has(namespace)) return "native";
    if (this.#providers.has(namespace)) return "mcp";
    return undefined;
  }

  #assertOpen(action: string): void {
    if (this.#frozen) {
      throw new OpenWorkerError(
        CODES.frozen,
        `cannot ${action}: the registry is frozen because a runtime opened it; register everything before opening the runtime`,
      );
    }
  }

  #prepareNative(tool: Tool, options: RegisterOptions): RegisteredTool {
    const raw = readToolDescriptor(tool, "register()");
    // Read once, then check and store that same copy: a getter cannot pass the check and store something else.
    const { descriptor, placement } = snapshotDescriptor(raw);
    checkNativePlacement(descriptor.name, options.placement, placement);
    const classification = options.classification;
    if (classification !== undefined && (typeof classification !== "string" || classification.length === 0)) {
      throw new OpenWorkerError(CODES.classificationInvalid, `tool ${JSON.stringify(descriptor.name)}: classification must be a non-empty string when given`, {
        details: { name: descriptor.name },
      });
    }
    return Object.freeze({
      name: descriptor.name,
      alias: modelAlias(descriptor.name),
      descriptor,
      tool,
      placement: "host" as const,
      ...(classification === undefined ? {} : { classification }),
    });
  }

  #check(entry: RegisteredTool): void {
    const existing = this.#natives.get(entry.name);
    if (existing) {
      throw new OpenWorkerError(
        CODES.duplicateTool,
        `native tool ${JSON.stringify(entry.name)} (version ${JSON.stringify(entry.descriptor.version)}) duplicates the ` +
          `already registered ${JSON.stringify(existing.name)} (version ${JSON.stringify(existing.descriptor.version)}); ` +
          "names are never renamed or suffixed: register each name once",
        { details: { name: entry.name, existing: existing.name } },
      );
    }
    const namespace = namespaceOf(entry.name);
    const provider = this.#providers.get(namespace);
    if (provider) {
      throw new OpenWorkerError(
        CODES.namespaceConflict,
        `native tool ${JSON.stringify(entry.name)} uses namespace ${JSON.stringify(namespace)}, which belongs to ` +
          `${describeProvider(provider)}; a namespace is native or one MCP provider's, never both: move the tool or the provider to another namespace`,
        { details: { name: entry.name, namespace, provider: provider.namespace } },
      );
    }
    const clash = this.#aliases.get(entry.alias);
    if (clash !== undefined) {
      throw new OpenWorkerError(
        CODES.aliasCollision,
        `native tool ${JSON.stringify(entry.name)} and ${JSON.stringify(clash)} both derive the model alias ` +
          `${JSON.stringify(entry.alias)}; rename one of them (aliases replace "." with "__")`,
        { details: { name: entry.name, other: clash, alias: entry.alias } },
      );
    }
  }

  #commitNative(entry: RegisteredTool): void {
    this.#natives.set(entry.name, entry);
    this.#aliases.set(entry.alias, entry.name);
    const namespace = namespaceOf(entry.name);
    let names = this.#nativeNamespaces.get(namespace);
    if (!names) this.#nativeNamespaces.set(namespace, (names = new Set()));
    names.add(entry.name);
    this.#sortedNatives = undefined;
  }

  #checkProvider(provider: McpProviderDefinition): void {
    const natives = this.#nativeNamespaces.get(provider.namespace);
    if (natives) {
      const [first] = [...natives].sort(compare);
      throw new OpenWorkerError(
        CODES.namespaceConflict,
        `${describeProvider(provider)} uses namespace ${JSON.stringify(provider.namespace)}, which belongs to native ` +
          `tools (${JSON.stringify(first)}${natives.size > 1 ? ` and ${natives.size - 1} more` : ""}); ` +
          "a namespace is native or one MCP provider's, never both: move the provider or the tools to another namespace",
        { details: { namespace: provider.namespace, native: first } },
      );
    }
    const existing = this.#providers.get(provider.namespace);
    if (existing) {
      throw new OpenWorkerError(
        CODES.duplicateProvider,
        `${describeProvider(provider)} and the already registered ${describeProvider(existing)} share namespace ` +
          `${JSON.stringify(provider.namespace)}; two MCP providers cannot share a namespace: register one of them under another namespace`,
        { details: { namespace: provider.namespace } },
      );
    }
  }

  #commitProvider(provider: McpProviderDefinition): void {
    this.#providers.set(provider.namespace, provider);
    this.#sortedProviders = undefined;
  }
}

function checkNativePlacement(name: string, asked: unknown, declared: unknown): void {
  for (const [placement, source] of [
    [asked, "the registration options"],
    [declared, "its descriptor"],
  ] as const) {
    if (placement === undefined || placement === "host") continue;
    if (placement === "sandbox") {
      throw new OpenWorkerError(
        CODES.nativeSandboxPlacement,
        `native tool ${JSON.stringify(name)}: ${source} ask for sandbox placement, but native tools are trusted ` +
          "host code and always run in the host process; ship code that needs isolation as a sandboxed MCP provider",
        { details: { name, placement } },
      );
    }
    throw new OpenWorkerError(
      CODES.placementInvalid,
      `native tool ${JSON.stringify(name)}: ${source} give placement ${JSON.stringify(placement)}; native tools run on "host"`,
      { details: { name, placement } },
    );
  }
}

function namespaceOf(name: string): string {
  return name.slice(0, name.indexOf("."));
}

// Code-unit order, not locale order: names are ASCII and case-sensitive (N1).
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
