import type { ElicitationAnswer, ElicitationRequest, ElicitationValue, Elicitor } from "@openworker/runtime";
import { clip, type Terminal } from "../cli/terminal.js";
import type { Prompter } from "./approver.js";

/** Who the journal names for answers given at the terminal. */
const PERSON = "terminal user";

/**
 * The elicitor of a terminal command (M9): what an MCP provider asks during a call is
 * asked on the terminal, a form field by field. Without a terminal to ask (piped input to
 * a one-shot command, `--json`), or when the input ends, it declines for the host: nobody
 * answered.
 */
export function terminalElicitor(terminal: Terminal, prompter: (() => Prompter) | undefined): Elicitor {
  if (!prompter) return () => ({ action: "decline", decidedBy: "host", who: "cli", reason: "no terminal to ask" });
  return async (request) => {
    const ask = (text: string) => prompter().question(terminal.promptText(text), request.signal);
    const head = `${terminal.paint("yellow", "asks")} ${terminal.paint("bold", request.provider)} (during ${request.qualifiedName}): ${clip(request.message, 500)}`;
    if (request.mode === "url") {
      const answer = await ask(`${head}\n  open ${clip(request.url ?? "(no URL)", 500)}\n  [y] done  [N] decline: `);
      return answer === undefined ? ended(request) : /^y(es)?$/i.test(answer.trim()) ? accepted() : declined();
    }
    const go = await ask(`${head}\n  [y] answer  [N] decline: `);
    if (go === undefined) return ended(request);
    if (!/^y(es)?$/i.test(go.trim())) return declined();
    const content: Record<string, ElicitationValue> = {};
    for (const field of formFields(request)) {
      for (;;) {
        const typed = await ask(`  ${field.name}${field.required ? "" : " (optional)"}${field.hint}: `);
        if (typed === undefined) return ended(request);
        const value = field.read(typed.trim());
        if (value === SKIP && !field.required) break;
        if (value !== SKIP && value !== INVALID) {
          content[field.name] = value;
          break;
        }
        terminal.note(terminal.paint("dim", `  ${field.name}: ${value === SKIP ? "required" : `expected ${field.hint.trim() || "a value"}`}`));
      }
    }
    return accepted(content);
  };
}

const SKIP = Symbol("skip");
const INVALID = Symbol("invalid");

interface FormField {
  readonly name: string;
  readonly required: boolean;
  /** What the prompt says about the value: its type, choices or default. */
  readonly hint: string;
  read(text: string): ElicitationValue | typeof SKIP | typeof INVALID;
}

/** The fields of a form as the terminal asks them: MCP's flat schemas of strings, numbers, booleans, enums and string lists. */
function formFields(request: ElicitationRequest): FormField[] {
  const schema = request.requestedSchema ?? {};
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((name) => typeof name === "string") : []);
  return Object.entries(properties).map(([name, property]) => {
    const spec = isRecord(property) ? property : {};
    const title = typeof spec.title === "string" && spec.title !== name ? ` "${clip(spec.title, 80)}"` : "";
    const choices = enumOf(spec) ?? (isRecord(spec.items) ? enumOf(spec.items) : undefined);
    const many = spec.type === "array";
    // Left empty, a field with a default is sent with it (the bridge applies schema defaults).
    const fallback = spec.default === undefined ? "" : `, default ${clip(JSON.stringify(spec.default), 80)}`;
    const hint = `${title} (${many ? "comma-separated " : ""}${choices ? choices.join("|") : String(spec.type ?? "text")}${fallback})`;
    return { name, required: required.has(name) && spec.default === undefined, hint, read: (text) => readValue(text, spec, choices, many) };
  });
}

function readValue(
  text: string,
  spec: Record<string, unknown>,
  choices: readonly string[] | undefined,
  many: boolean,
): ElicitationValue | typeof SKIP | typeof INVALID {
  if (text === "") return SKIP;
  if (many) {
    const items = text
      .split(",")
      .map((item) => item.trim())
      .filter((item) => item !== "");
    return choices && !items.every((item) => choices.includes(item)) ? INVALID : items;
  }
  if (choices) return choices.includes(text) ? text : INVALID;
  if (spec.type === "number" || spec.type === "integer") {
    const value = Number(text);
    return Number.isFinite(value) && (spec.type === "number" || Number.isInteger(value)) ? value : INVALID;
  }
  if (spec.type === "boolean") return /^(y|yes|true)$/i.test(text) ? true : /^(n|no|false)$/i.test(text) ? false : INVALID;
  return text;
}

/** The choices of an enum field (`enum`, or `oneOf`/`anyOf` of `const`s). */
function enumOf(spec: Record<string, unknown>): string[] | undefined {
  if (Array.isArray(spec.enum)) return spec.enum.filter((item): item is string => typeof item === "string");
  const options = Array.isArray(spec.oneOf) ? spec.oneOf : Array.isArray(spec.anyOf) ? spec.anyOf : undefined;
  if (!options) return undefined;
  const values = options.map((option) => (isRecord(option) && typeof option.const === "string" ? option.const : undefined));
  return values.every((value) => value !== undefined) ? (values as string[]) : undefined;
}

function accepted(content?: Record<string, ElicitationValue>): ElicitationAnswer {
  return content === undefined ? { action: "accept", who: PERSON } : { action: "accept", content, who: PERSON };
}
function declined(): ElicitationAnswer {
  return { action: "decline", who: PERSON, reason: "declined at the terminal" };
}
/** The input ended (Ctrl-D, EOF) or the request was withdrawn: nobody answered. */
function ended(request: ElicitationRequest): ElicitationAnswer {
  const reason = request.signal.aborted ? "the request ended before an answer" : "stdin ended before an answer";
  return { action: "decline", decidedBy: "host", who: "cli", reason };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
