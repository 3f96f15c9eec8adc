import type { Options } from "ajv";
import { RE2JS } from "re2js";

type RegExpEngine = NonNullable<NonNullable<Options["code"]>["regExp"]>;
type RegExpLike = ReturnType<RegExpEngine>;

/**
 * A schema pattern the host cannot check in linear time (a lookaround, a backreference)
 * or that RE2 does not read (a property name it does not know, a repeat count over 1000).
 * Thrown out of ajv's compilation; `compileInputSchema` turns it into `SCHEMA_INVALID`
 * naming the tool and the pattern.
 */
export class UnsupportedPatternError extends Error {
  readonly pattern: string;
  readonly reason: string;

  constructor(pattern: string, reason: string) {
    super(`pattern ${JSON.stringify(pattern)} cannot be checked in linear time (${reason})`);
    this.name = "UnsupportedPatternError";
    this.pattern = pattern;
    this.reason = reason;
  }
}

/**
 * ajv's regular-expression engine for every `pattern`, `patternProperties` and
 * `propertyNames` pattern (E5): RE2 (the `re2js` port), which matches in time linear in
 * the input, instead of JavaScript's backtracking `RegExp`, with which a published
 * `"^(a+)+$"` and a 30-character argument from the model block the host's event loop for
 * seconds. A pattern must first be valid ECMA-262 (ajv passes the `u` flag, as JSON Schema
 * reads patterns as Unicode), then it is rewritten where RE2 reads the same text otherwise
 * (see {@link toRe2Syntax}) and compiled by RE2; what RE2 cannot compile is refused
 * ({@link UnsupportedPatternError}), never run by the backtracking engine instead.
 *
 * `code` is what ajv's standalone code generation would print for the engine; the SDK
 * never generates standalone code, so it only has to differ from `"new RegExp"`.
 */
export const linearRegExp: RegExpEngine = Object.assign((pattern: string, flags: string): RegExpLike => compileLinear(pattern, flags), {
  code: "openWorkerLinearRegExp",
});

function compileLinear(pattern: string, flags: string): RegExpLike {
  // JSON Schema patterns are ECMA-262: one JavaScript refuses is not valid JSON Schema
  // (ajv's usual error). Constructing a RegExp parses it; nothing is matched. Its result
  // is read: the bundler takes a bare `new RegExp(…)` for pure and drops it, and the
  // built SDK then accepted RE2-only syntax (`(?i)`, `\z`, `\Q…\E`) with RE2's meaning.
  if (new RegExp(pattern, flags).flags !== flags) throw new SyntaxError(`pattern ${JSON.stringify(pattern)}: flags ${JSON.stringify(flags)} were not taken`);
  const rewritten = toRe2Syntax(pattern);
  try {
    // RE2JS's own `toString` is the pattern, which ajv uses to share one compiled
    // pattern between the keywords that use it.
    return RE2JS.compile(RE2JS.translateRegExp(rewritten));
  } catch (cause) {
    throw new UnsupportedPatternError(pattern, re2Reason(cause));
  }
}

/** ECMA-262's `\s` (WhiteSpace and LineTerminator); RE2's is ASCII `[\t\n\f\r ]`. */
const ECMA_SPACE = "\\t\\n\\v\\f\\r \\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}";
/** ECMA-262's `.` without the `s` flag: anything but a line terminator; RE2's `.` only excludes `\n`. */
const ECMA_DOT = "[^\\n\\r\\x{2028}\\x{2029}]";

/**
 * The ECMA-262 pattern (already parsed by JavaScript with `u`) in RE2 syntax where the two
 * read the same text differently; `RE2JS.translateRegExp` then does the rest (`\uXXXX`,
 * `\u{…}`, named groups, `[^]`). A backreference (`\1`, `\k<name>`) is refused here:
 * RE2 has none, and the translation would make `\k<a>` the literal text `k<a>`.
 * One pass over the pattern, at schema compilation only.
 */
function toRe2Syntax(pattern: string): string {
  let out = "";
  let inClass = false;
  for (let index = 0; index < pattern.length; index++) {
    const character = pattern[index]!;
    if (character === "\\") {
      const next = pattern[index + 1] ?? "";
      if ((next >= "1" && next <= "9") || next === "k") {
        throw new UnsupportedPatternError(pattern, `it uses the backreference \\${next}, which needs backtracking`);
      }
      index++;
      if (next === "s") out += inClass ? ECMA_SPACE : `[${ECMA_SPACE}]`;
      // Outside a class; inside one, RE2's ASCII \S is all there is (README).
      else if (next === "S" && !inClass) out += `[^${ECMA_SPACE}]`;
      else if (next === "b" && inClass) out += "\\x08";
      else if (next === "u" && isSurrogatePair(pattern, index + 1)) {
        // `\uD83D\uDE00` is one code point under `u`; RE2 would read two lone surrogates.
        const high = Number.parseInt(pattern.slice(index + 1, index + 5), 16);
        const low = Number.parseInt(pattern.slice(index + 7, index + 11), 16);
        out += `\\x{${(((high - 0xd800) << 10) + (low - 0xdc00) + 0x10000).toString(16)}}`;
        index += 10;
      } else if ((next === "p" || next === "P") && /^\{(?:Script|sc)=/.test(pattern.slice(index + 1, index + 9))) {
        // ECMA names a script `\p{Script=Greek}`, RE2 `\p{Greek}`.
        const close = pattern.indexOf("}", index);
        out += `\\${next}{${pattern.slice(pattern.indexOf("=", index) + 1, close)}}`;
        index = close;
      } else out += `\\${next}`;
      continue;
    }
    if (inClass) {
      if (character === "]") inClass = false;
      // A "[" inside a class is literal in ECMA-262; RE2 would start a POSIX class at "[:".
      else if (character === "[") {
        out += "\\[";
        continue;
      }
    } else if (character === "[") inClass = true;
    else if (character === ".") {
      out += ECMA_DOT;
      continue;
    }
    out += character;
  }
  return out;
}

function isSurrogatePair(pattern: string, at: number): boolean {
  return /^[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}$/.test(pattern.slice(at, at + 10));
}

function re2Reason(cause: unknown): string {
  const message = cause instanceof Error ? cause.message : String(cause);
  if (/unsupported Perl syntax: `\(\?[=!]|invalid named capture: `\(\?<[=!]/.test(message)) return "it uses a lookaround, which needs backtracking";
  return `RE2: ${message}`;
}
