import { OpenWorkerError } from "@openworker/tools-sdk";
import { BUNDLE_ERROR_CODES as CODES } from "./codes.js";
import { checkTextSize, stripBom } from "./text.js";

/**
 * A named, optional piece of instructions a coworker can use (B1).
 *
 * @example
 * ```ts
 * const report: Skill | undefined = manifest.skills.find((skill) => skill.name === "battery-report");
 * ```
 */
export interface Skill {
  /** ASCII letters, digits, `_`, `-` and `.`; unique within the manifest. */
  readonly name: string;
  /** The skill's Markdown body. */
  readonly instructions: string;
}

/**
 * The coworker described by `manifest.md` (B1): identity, system instructions, skills.
 *
 * @example
 * ```ts
 * const manifest: Manifest = parseManifest(text, "coworker/manifest.md");
 * ```
 */
export interface Manifest {
  /** The coworker's name, from the front matter. */
  readonly name: string;
  readonly description?: string;
  /** The system instructions: the body before the first skill heading. */
  readonly instructions: string;
  readonly skills: readonly Skill[];
}

const FRONT_MATTER_FIELDS = ["name", "description"];
const FIELD_LINE = /^([A-Za-z][A-Za-z0-9_-]*)[ \t]*:[ \t]*(.*)$/;
const SKILL_HEADING = /^##[ \t]+Skill:[ \t]*(.*?)[ \t]*#*[ \t]*$/;
const SKILL_NAME = /^[A-Za-z0-9_.-]{1,80}$/;
/** A skill heading with a typo (case, indentation, no space), which would otherwise become instructions text. */
const NEAR_SKILL_HEADING = /^[ \t]*##[ \t]*skill[ \t]*:/i;
const FENCE = /^[ \t]{0,3}(`{3,}|~{3,})/;
/** The longest coworker name accepted: a name is a label, not instructions. */
const MAX_NAME_LENGTH = 200;
// C0 (tab included: a label has no tab stops), DEL and C1; the Unicode line and paragraph
// separators (a line break in browsers, JSON-in-JS and many UIs); and the bidirectional
// controls (embeddings, overrides, isolates and marks), which can show text in another
// order than it is stored ("Battery \u202Ehcaoc" is shown "Battery coach").
// oxlint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;

/**
 * Parses `manifest.md` (format in the README): a front matter block between `---`
 * lines with `name:` (required) and `description:` (optional), then the system
 * instructions, then optional skills, each starting at a `## Skill: <name>` heading
 * (headings inside code fences do not count). A leading BOM and CRLF line ends are fine.
 *
 * @example
 * ```ts
 * parseManifest("---\nname: Battery coach\n---\nHelp with the battery.\n", "manifest.md").name; // "Battery coach"
 * ```
 */
export function parseManifest(text: string, file: string): Manifest {
  checkTextSize(text, file);
  const lines = stripBom(text).split(/\r?\n/);
  const fail = (problem: string, line?: number): OpenWorkerError =>
    new OpenWorkerError(CODES.manifestInvalid, `${file}: ${line === undefined ? "" : `line ${line}: `}${problem}`, {
      details: { file, ...(line === undefined ? {} : { line }) },
    });
  if (lines[0]?.trimEnd() !== "---") {
    throw fail('must start with a front matter block: a line "---", then "name: <coworker name>", then "---"', 1);
  }
  const close = lines.findIndex((line, index) => index > 0 && line.trimEnd() === "---");
  if (close < 0) throw fail('front matter is not closed: add a line "---" after the last field');
  const fields = parseFrontMatter(lines.slice(1, close), fail);
  const name = fields.get("name");
  if (name === undefined || name.trim().length === 0) throw fail('front matter needs "name: <coworker name>"');
  if (name.trim().length > MAX_NAME_LENGTH) {
    throw fail(`front matter field "name" is ${name.trim().length} characters; a coworker name may have at most ${MAX_NAME_LENGTH}`);
  }
  const { instructions, skills } = parseBody(lines.slice(close + 1), close + 2, file, fail);
  if (instructions.length === 0) throw fail("has no system instructions after the front matter");
  const description = fields.get("description");
  return Object.freeze({
    name: name.trim(),
    ...(description === undefined ? {} : { description: description.trim() }),
    instructions,
    skills: Object.freeze(skills),
  });
}

function parseFrontMatter(lines: readonly string[], fail: (problem: string, line?: number) => OpenWorkerError): Map<string, string> {
  const fields = new Map<string, string>();
  lines.forEach((line, index) => {
    const number = index + 2;
    if (line.trim().length === 0 || line.trimStart().startsWith("#")) return;
    const match = FIELD_LINE.exec(line);
    if (!match) throw fail(`front matter lines look like "field: value", got ${JSON.stringify(line)}`, number);
    const [, key = "", raw = ""] = match;
    if (!FRONT_MATTER_FIELDS.includes(key)) {
      throw fail(`front matter field ${JSON.stringify(key)} is not known (known: ${FRONT_MATTER_FIELDS.join(", ")})`, number);
    }
    if (fields.has(key)) throw fail(`front matter field ${JSON.stringify(key)} appears twice`, number);
    fields.set(key, frontMatterValue(raw.trim(), key, number, fail));
  });
  return fields;
}

/** A value is plain text to the line's end, or a JSON string when it starts with `"`. */
function frontMatterValue(raw: string, key: string, line: number, fail: (problem: string, line?: number) => OpenWorkerError): string {
  let value: string | undefined = raw;
  if (raw.startsWith('"')) {
    try {
      const parsed: unknown = JSON.parse(raw);
      value = typeof parsed === "string" ? parsed : undefined;
    } catch {
      value = undefined;
    }
    if (value === undefined) throw fail(`front matter field ${JSON.stringify(key)}: a quoted value must be one JSON string`, line);
  }
  // Names and descriptions are shown in terminals and UIs: an escape sequence or a line
  // break (possible through a quoted "\u001b" or "\n") could fake or hide what is shown.
  const control = CONTROL_CHARACTER.exec(value);
  if (control) {
    const code = `U+${control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`;
    throw fail(
      `front matter field ${JSON.stringify(key)} contains the control character ${code}; it must be one line of plain text, shown in the order it is written`,
      line,
    );
  }
  return value;
}

function parseBody(
  lines: readonly string[],
  firstLine: number,
  file: string,
  fail: (problem: string, line?: number) => OpenWorkerError,
): { instructions: string; skills: Skill[] } {
  const sections: { name: string | undefined; line: number; lines: string[] }[] = [{ name: undefined, line: firstLine, lines: [] }];
  let fence: string | undefined;
  lines.forEach((line, index) => {
    const opening = FENCE.exec(line);
    const marker = opening?.[1];
    if (marker !== undefined) {
      if (fence === undefined) fence = marker;
      // As in CommonMark, a closing fence carries no info string: "```js" inside a fence opens nothing and closes nothing.
      else if (marker[0] === fence[0] && marker.length >= fence.length && line.slice(opening![0].length).trim() === "") fence = undefined;
    }
    const heading = fence === undefined && marker === undefined ? SKILL_HEADING.exec(line) : null;
    if (!heading && fence === undefined && marker === undefined && NEAR_SKILL_HEADING.test(line)) {
      throw fail(
        `${JSON.stringify(line.trim())} looks like a skill heading but is not one; write it as "## Skill: <name>" at the start of the line`,
        firstLine + index,
      );
    }
    if (heading) sections.push({ name: heading[1] ?? "", line: firstLine + index, lines: [] });
    else sections.at(-1)!.lines.push(line);
  });
  const [head, ...rest] = sections;
  const seen = new Map<string, number>();
  const skills = rest.map((section) => {
    const name = section.name ?? "";
    if (!SKILL_NAME.test(name)) {
      throw fail(`skill name ${JSON.stringify(name)} must be 1-80 ASCII letters, digits, "_", "-" or "." (as in "## Skill: battery-report")`, section.line);
    }
    const earlier = seen.get(name);
    if (earlier !== undefined) {
      throw new OpenWorkerError(CODES.skillDuplicate, `${file}: line ${section.line}: skill ${JSON.stringify(name)} is already defined at line ${earlier}`, {
        details: { file, skill: name, line: section.line, earlier },
      });
    }
    seen.set(name, section.line);
    const instructions = section.lines.join("\n").trim();
    if (instructions.length === 0) throw fail(`skill ${JSON.stringify(name)} has no instructions`, section.line);
    return Object.freeze({ name, instructions });
  });
  return { instructions: (head?.lines ?? []).join("\n").trim(), skills };
}
