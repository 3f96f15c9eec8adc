/**
 * What is wrong with a JSON text `JSON.parse` refused, and where, without quoting the
 * text: `"line 3, column 18: expected ',' or '}' after property value"`.
 *
 * V8's own message for an unexpected character copies the text around it into the
 * message (`Unexpected token ''', ...":{"TOKEN":'sk-live-S"...`), and a configuration
 * file may hold a credential there (E6). This keeps V8's description when it carries
 * none of the text, and finds the position itself (a small scan of the JSON grammar)
 * when V8 gives none.
 *
 * @example
 * ```ts
 * try { JSON.parse(text); } catch (error) { console.log(jsonSyntaxProblem(text, error)); }
 * // "line 1, column 18: unexpected character"
 * ```
 */
export function jsonSyntaxProblem(text: string, error: unknown): string {
  const message = error instanceof Error ? error.message : "";
  const positioned = /^(.*) in JSON at position (\d+)/s.exec(message);
  if (positioned && !positioned[1]!.includes('"')) {
    return `${where(text, Number(positioned[2]))}: ${lowerFirst(positioned[1]!)}`;
  }
  const offset = firstSyntaxError(text);
  if (offset >= text.length || /^\s*$/.test(text.slice(offset))) {
    return text.trim() === "" ? "the file is empty; it must hold one JSON value" : `${where(text, text.length)}: the text ends before the JSON value does`;
  }
  return `${where(text, offset)}: unexpected character`;
}

function where(text: string, offset: number): string {
  let line = 1;
  let lineStart = 0;
  for (let index = text.indexOf("\n"); index !== -1 && index < offset; index = text.indexOf("\n", index + 1)) {
    line += 1;
    lineStart = index + 1;
  }
  return `line ${line}, column ${offset - lineStart + 1}`;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const LITERALS: Readonly<Record<string, string>> = { t: "true", f: "false", n: "null" };
const ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);
const HEX4 = /[0-9a-fA-F]{4}/y;

/**
 * The offset of the first character that breaks the JSON grammar, `text.length` when the
 * text ends too early, or `-1` when it is valid. Iterative (an explicit stack), so deep
 * nesting cannot overflow the call stack.
 */
export function firstSyntaxError(text: string): number {
  let at = 0;
  const stack: ("{" | "[")[] = [];
  const skipSpace = (): void => {
    while (at < text.length && (text[at] === " " || text[at] === "\t" || text[at] === "\n" || text[at] === "\r")) at += 1;
  };
  /** Scans a string starting at its quote; returns false at a bad character (left at `at`). */
  const string = (): boolean => {
    at += 1;
    while (at < text.length) {
      const char = text.charCodeAt(at);
      if (char === 0x22) {
        at += 1;
        return true;
      }
      if (char < 0x20) return false;
      if (char === 0x5c) {
        const escape = text[at + 1];
        if (escape === "u") {
          HEX4.lastIndex = at + 2;
          if (!HEX4.test(text)) {
            at += 2;
            return false;
          }
          at += 6;
        } else if (escape !== undefined && ESCAPES.has(escape)) {
          at += 2;
        } else {
          at += 1;
          return false;
        }
      } else {
        at += 1;
      }
    }
    return false;
  };
  /** Scans a scalar, or opens a container; false at a bad character (left at `at`). */
  const value = (): "open" | "scalar" | false => {
    skipSpace();
    const char = text[at];
    if (char === "{" || char === "[") {
      stack.push(char);
      at += 1;
      return "open";
    }
    if (char === '"') return string() && "scalar";
    if (char === "-" || (char !== undefined && char >= "0" && char <= "9")) {
      NUMBER.lastIndex = at;
      if (!NUMBER.test(text)) return false;
      at = NUMBER.lastIndex;
      return "scalar";
    }
    const literal = char === undefined ? undefined : LITERALS[char];
    if (literal === undefined) return false;
    for (const expected of literal) {
      if (text[at] !== expected) return false;
      at += 1;
    }
    return "scalar";
  };
  /** A key and its colon, inside an object. */
  const key = (): boolean => {
    skipSpace();
    if (text[at] !== '"' || !string()) return false;
    skipSpace();
    if (text[at] !== ":") return false;
    at += 1;
    return true;
  };

  let scanned = value();
  for (;;) {
    if (scanned === false) return at;
    skipSpace();
    const top = stack.at(-1);
    if (top === undefined) return at < text.length ? at : -1;
    if (text[at] === (top === "{" ? "}" : "]")) {
      stack.pop();
      at += 1;
      scanned = "scalar";
      continue;
    }
    // After a value a comma must come; right after the opening bracket, the first item.
    if (scanned === "scalar") {
      if (text[at] !== ",") return at;
      at += 1;
    }
    scanned = top === "{" && !key() ? false : value();
  }
}
