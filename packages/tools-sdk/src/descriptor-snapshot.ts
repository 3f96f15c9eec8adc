import { checkDescriptor, type ToolDescriptor } from "./descriptor.js";
import { OpenWorkerError } from "./errors.js";
import type { JsonSchema } from "./json.js";
import { clip } from "./text.js";
import type { Tool } from "./tool.js";

/** The code of a descriptor whose reading threw (a getter, a Proxy trap, `descriptor()` itself). */
export const DESCRIPTOR_FAILED = "DESCRIPTOR_FAILED";

/** What {@link snapshotDescriptor} read from a descriptor: the checked, frozen copy and its placement field. */
export interface DescriptorSnapshot {
  readonly descriptor: ToolDescriptor;
  /** The descriptor's own `placement` field, read in the same pass (A4 checks it). */
  readonly placement: unknown;
}

// Deeper than the SDK's canonicalJson goes (256), a schema could never be fingerprinted.
const MAX_DEPTH = 256;
// Shared sub-objects are copied once per use, as JSON would: bound the copy so a schema
// that reuses one object at every level cannot make registration run for ever.
const MAX_VALUES = 1_000_000;

/**
 * Reads what `tool.descriptor()` returned exactly once and returns a deep-frozen plain
 * copy of its four fields that has passed `checkDescriptor` (T1, N1, N3, N4). Checking and
 * storing the same copy is the point: a getter or Proxy that answers differently on a
 * second read cannot get an unchecked value stored.
 *
 * The schema must be plain JSON data: objects (plain or null-prototype), arrays, strings,
 * finite numbers, booleans and `null`. Object members whose value is `undefined`, and
 * symbol keys (TypeBox's `Kind`), are left out, as JSON leaves them out; anything JSON
 * would silently change is refused with `DESCRIPTOR_INVALID` naming the tool and the field:
 * an object with `toJSON`, a class instance (`Date`, `Map`, …), a function, a symbol or
 * bigint value, `NaN`/`Infinity`, an `undefined` array item, a cycle. Any throw while
 * reading (a throwing getter, a Proxy trap) is `DESCRIPTOR_FAILED`, naming the tool and field.
 * The registry registers exactly this copy, and the testing kit's `runTool` checks a tool
 * with it, so a descriptor the kit accepts is one the registry accepts.
 *
 * @example
 * ```ts
 * const { descriptor, placement } = snapshotDescriptor(tool.descriptor());
 * ```
 */
export function snapshotDescriptor(raw: unknown): DescriptorSnapshot {
  if (typeof raw !== "object" || raw === null) {
    checkDescriptor(raw);
  }
  const reader = new Reader();
  const source = raw as object;
  const name = reader.read(source, "name");
  reader.tool = typeof name === "string" ? name : "(unnamed)";
  const description = reader.read(source, "description");
  const version = reader.read(source, "version");
  const schema = reader.read(source, "inputSchema");
  const placement = reader.read(source, "placement");
  // A schema that is not an object at all is left to checkDescriptor's message.
  const inputSchema = typeof schema === "object" && schema !== null ? reader.copy(schema, "inputSchema", 0) : schema;
  const copy = { name, description, inputSchema, version };
  checkDescriptor(copy);
  return Object.freeze({ descriptor: deepFreeze(copy as ToolDescriptor & { inputSchema: JsonSchema }), placement });
}

class Reader {
  tool = "(unknown)";
  #values = 0;
  readonly #ancestors = new Set<object>();

  /** One read of `source[key]`; a throw (getter, Proxy trap) becomes `DESCRIPTOR_FAILED` naming `field`. */
  read(source: object, key: string, field = key): unknown {
    try {
      return (source as Record<string, unknown>)[key];
    } catch (cause) {
      throw this.#failed(field, cause);
    }
  }

  /** A plain JSON copy of `value`, read once, with JSON's handling of objects (`__proto__` kept as an own key). */
  copy(value: unknown, field: string, depth: number): unknown {
    if (++this.#values > MAX_VALUES) {
      throw this.#invalid(field, `has more than ${MAX_VALUES} values; a schema is not that large unless it reuses objects without end`);
    }
    switch (typeof value) {
      case "string":
      case "boolean":
        return value;
      case "number":
        if (!Number.isFinite(value)) throw this.#invalid(field, `is ${String(value)}, which JSON cannot hold`);
        return value === 0 ? 0 : value;
      case "object":
        break;
      default:
        throw this.#invalid(field, `is ${typeOfValue(value)}, which JSON cannot hold`);
    }
    if (value === null) return null;
    if (depth >= MAX_DEPTH) throw this.#invalid(field, `nests deeper than ${MAX_DEPTH} levels`);
    if (this.#ancestors.has(value)) throw this.#invalid(field, "is circular: it contains itself");
    this.#ancestors.add(value);
    try {
      return this.#copyObject(value, field, depth);
    } finally {
      this.#ancestors.delete(value);
    }
  }

  #copyObject(value: object, field: string, depth: number): unknown {
    let isArray: boolean;
    let prototype: object | null;
    let plain: boolean;
    let keys: string[];
    let toJSON: unknown;
    try {
      isArray = Array.isArray(value);
      prototype = Object.getPrototypeOf(value) as object | null;
      plain = isArray || isPlainPrototype(prototype);
      toJSON = (value as { toJSON?: unknown }).toJSON;
      keys = plain && !isArray ? Object.keys(value) : [];
    } catch (cause) {
      throw this.#failed(field, cause);
    }
    if (typeof toJSON === "function") {
      throw this.#invalid(field, "has a toJSON method, so JSON would show something else; give plain JSON data");
    }
    if (isArray) {
      const length = this.read(value, "length", field);
      // A Proxy's `length` can be anything: an object whose `valueOf` throws would escape
      // the guard in the loop's comparison, one that counts up would run it to MAX_VALUES.
      if (typeof length !== "number" || !Number.isInteger(length) || length < 0) {
        throw new OpenWorkerError(
          DESCRIPTOR_FAILED,
          `tool ${JSON.stringify(this.tool)}: field ${JSON.stringify(field)} of its descriptor is an array whose length is ${typeOfValue(length)}, not a count; ` +
            "descriptor() must return plain data",
          { details: { name: this.tool, field } },
        );
      }
      const items: unknown[] = [];
      for (let index = 0; index < length; index++) {
        const at = `${field}[${index}]`;
        const item = this.read(value, String(index), at);
        if (item === undefined) throw this.#invalid(at, "is undefined, which JSON would turn into null; give a JSON value");
        items.push(this.copy(item, at, depth + 1));
      }
      return items;
    }
    if (!plain) {
      throw this.#invalid(field, `is ${describePrototype(prototype)}, not a plain JSON object; give plain JSON data`);
    }
    const copy: Record<string, unknown> = {};
    for (const key of keys) {
      const at = `${field}.${key}`;
      const item = this.read(value, key, at);
      if (item === undefined) continue;
      // defineProperty, as JSON.parse does: a "__proto__" key stays an own member.
      Object.defineProperty(copy, key, { value: this.copy(item, at, depth + 1), enumerable: true, writable: true, configurable: true });
    }
    return copy;
  }

  #failed(field: string, cause: unknown): OpenWorkerError {
    return new OpenWorkerError(
      DESCRIPTOR_FAILED,
      `tool ${JSON.stringify(this.tool)}: reading field ${JSON.stringify(field)} of its descriptor threw: ${messageOf(cause)}; ` +
        "descriptor() must return plain data",
      { cause, details: { name: this.tool, field } },
    );
  }

  #invalid(field: string, problem: string): OpenWorkerError {
    return new OpenWorkerError("DESCRIPTOR_INVALID", `tool ${JSON.stringify(this.tool)}: field ${JSON.stringify(field)} ${problem}`, {
      details: { name: this.tool, field },
    });
  }
}

// An object whose prototype is null or an Object.prototype (of any realm): what JSON.parse makes.
function isPlainPrototype(prototype: object | null): boolean {
  return prototype === null || prototype === Object.prototype || Object.getPrototypeOf(prototype) === null;
}

function describePrototype(prototype: object | null): string {
  try {
    const name = (prototype as { constructor?: { name?: unknown } } | null)?.constructor?.name;
    if (typeof name === "string" && name.length > 0) return `a ${name}`;
  } catch {
    // A hostile prototype: the generic words below still say what is wrong.
  }
  return "an object with a custom prototype";
}

function typeOfValue(value: unknown): string {
  if (typeof value === "function") return "a function";
  if (typeof value === "undefined") return "undefined";
  if (value === null) return "null";
  if (typeof value === "object") return "an object";
  if (typeof value === "number") return String(value);
  return `a ${typeof value}`;
}

/** The code of a value that is not a tool: no `descriptor()` and `call()` methods, or methods that cannot be read. */
export const TOOL_INVALID = "TOOL_INVALID";

/**
 * What `tool.descriptor()` returns, read as the registry reads it, for `caller`
 * (`"register()"`, `"runTool"`, named in the messages): a value that is not a tool is
 * `TOOL_INVALID`, a `descriptor()` that throws `DESCRIPTOR_FAILED` (a coded error of its
 * own passes on as it is), never the raw error. A descriptor with a key other than
 * {@link DESCRIPTOR_KEYS} (`outputSchema`, `annotations`, …) is `TOOL_INVALID` too, naming
 * the key and the tool: the snapshot would drop it, and a declared output schema would
 * never be enforced. Check the result with {@link snapshotDescriptor}.
 *
 * @example
 * ```ts
 * const { descriptor } = snapshotDescriptor(readToolDescriptor(tool, "register()"));
 * ```
 */
export function readToolDescriptor(tool: Tool, caller: string): unknown {
  let describe: unknown;
  let call: unknown;
  try {
    describe = typeof tool === "object" && tool !== null ? tool.descriptor : undefined;
    call = typeof tool === "object" && tool !== null ? tool.call : undefined;
  } catch (cause) {
    throw new OpenWorkerError(TOOL_INVALID, `${caller} could not read the tool's methods: ${messageOf(cause)}`, { cause });
  }
  if (typeof describe !== "function" || typeof call !== "function") {
    throw new OpenWorkerError(TOOL_INVALID, `${caller} needs a Tool: an object with descriptor() and call() methods`);
  }
  let descriptor: unknown;
  try {
    descriptor = Reflect.apply(describe, tool, []);
  } catch (cause) {
    // A coded error of the SDK's own (a check inside descriptor()) passes on.
    if (isCoded(cause)) throw cause;
    throw new OpenWorkerError(DESCRIPTOR_FAILED, `tool.descriptor() threw when ${caller} read it: ${messageOf(cause)}; the registry refuses such a tool`, {
      cause,
    });
  }
  refuseUnknownKeys(descriptor, caller);
  return descriptor;
}

/** The fields a native descriptor may have: T1's four, and `placement` (A4 checks it). */
export const DESCRIPTOR_KEYS: readonly string[] = Object.freeze(["name", "description", "inputSchema", "version", "placement"]);

/**
 * A key the snapshot would not keep is refused rather than dropped: an MCP-shaped
 * `outputSchema` or `annotations` would otherwise look declared and never be enforced.
 * Only the keys are read here; the name is read again only to word the refusal.
 */
function refuseUnknownKeys(descriptor: unknown, caller: string): void {
  if (typeof descriptor !== "object" || descriptor === null) return;
  let unknown: string | undefined;
  try {
    unknown = Object.keys(descriptor).find((key) => !DESCRIPTOR_KEYS.includes(key));
  } catch (cause) {
    throw new OpenWorkerError(
      DESCRIPTOR_FAILED,
      `${caller} could not read the keys of the tool's descriptor: ${messageOf(cause)}; descriptor() must return plain data`,
      { cause },
    );
  }
  if (unknown === undefined) return;
  let name: unknown;
  try {
    name = (descriptor as { name?: unknown }).name;
  } catch {
    // The refusal below stands without the name.
  }
  const tool = typeof name === "string" ? name : "(unnamed)";
  throw new OpenWorkerError(
    TOOL_INVALID,
    `tool ${JSON.stringify(tool)}: its descriptor has the key ${JSON.stringify(clip(unknown, 100))}, which a native tool cannot declare ` +
      `(known keys: ${DESCRIPTOR_KEYS.join(", ")}); ${caller} refuses it rather than drop it. Native tools do not declare output schemas or MCP annotations: ` +
      "their JSON and text result is checked by the runtime's limits instead (plain JSON, at most 256 KB)",
    { details: { name: tool, key: unknown, knownKeys: DESCRIPTOR_KEYS } },
  );
}

function isCoded(value: unknown): boolean {
  try {
    return OpenWorkerError.isInstance(value);
  } catch {
    // A thrown Proxy whose traps throw: not one of ours.
    return false;
  }
}

/** The message of whatever was thrown, without letting a hostile value throw again. */
export function messageOf(cause: unknown): string {
  try {
    return cause instanceof Error ? cause.message : String(cause);
  } catch {
    return "(a value that cannot be printed)";
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}
