import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseManifest } from "../src/index.js";
import { thrown } from "./helpers.js";

const MANIFEST = `---
name: Battery coach
description: "Explains what drains the battery: briefly."
---
You are Battery coach. Use acer__acer_care_center_batterystatus_get.

\`\`\`md
## Skill: not-a-skill
inside a code fence
\`\`\`

## Skill: battery-report
Write a three-line battery report.

## Skill: saver.tips
Suggest one power-saving change.
`;

describe("manifest.md", () => {
  it("B1 reads the identity, system instructions and skills", () => {
    const manifest = parseManifest(MANIFEST, "manifest.md");
    expect(manifest.name).toBe("Battery coach");
    expect(manifest.description).toBe("Explains what drains the battery: briefly.");
    expect(manifest.instructions).toContain("You are Battery coach.");
    expect(manifest.instructions).toContain("## Skill: not-a-skill");
    expect(manifest.skills).toEqual([
      { name: "battery-report", instructions: "Write a three-line battery report." },
      { name: "saver.tips", instructions: "Suggest one power-saving change." },
    ]);
  });

  it("B1 accepts CRLF line ends, a BOM, comments in the front matter, and no skills", () => {
    const manifest = parseManifest("\uFEFF---\r\n# who\r\nname: Helper\r\n---\r\nHelp.\r\n", "manifest.md");
    expect(manifest).toEqual({ name: "Helper", instructions: "Help.", skills: [] });
  });

  it.each([
    ["name: x\n---\nHi", "MANIFEST_INVALID", "line 1: must start with a front matter block"],
    ["", "MANIFEST_INVALID", "line 1"],
    ["---\nname: x\nHi", "MANIFEST_INVALID", "front matter is not closed"],
    ["---\ndescription: d\n---\nHi", "MANIFEST_INVALID", 'needs "name: <coworker name>"'],
    ["---\nname:   \n---\nHi", "MANIFEST_INVALID", 'needs "name'],
    ["---\nname: x\nname: y\n---\nHi", "MANIFEST_INVALID", 'line 3: front matter field "name" appears twice'],
    ["---\nname: x\nmodel: gpt\n---\nHi", "MANIFEST_INVALID", 'line 3: front matter field "model" is not known'],
    ["---\nname x\n---\nHi", "MANIFEST_INVALID", 'line 2: front matter lines look like "field: value"'],
    ['---\nname: "x\n---\nHi', "MANIFEST_INVALID", "a quoted value must be one JSON string"],
    ["---\nname: x\n---\n   \n", "MANIFEST_INVALID", "has no system instructions"],
    ["---\nname: x\n---\n## Skill: a\nbody", "MANIFEST_INVALID", "has no system instructions"],
    ["---\nname: x\n---\nHi\n## Skill: a\n", "MANIFEST_INVALID", 'line 5: skill "a" has no instructions'],
    ["---\nname: x\n---\nHi\n## Skill: two words\nbody", "MANIFEST_INVALID", 'skill name "two words"'],
    ["---\nname: x\n---\nHi\n## Skill:\nbody", "MANIFEST_INVALID", 'skill name ""'],
    ["---\nname: x\n---\nHi\n## Skill: a\none\n## Skill: a\ntwo", "MANIFEST_SKILL_DUPLICATE", 'line 7: skill "a" is already defined at line 5'],
    // Shown in terminals and UIs: no escape sequence or line break can fake what they show.
    [
      '---\nname: "Evil\\u001b[31m RED\\nok: 3 selected tool(s) resolve"\n---\nHi',
      "MANIFEST_INVALID",
      'line 2: front matter field "name" contains the control character U+001B',
    ],
    ['---\nname: x\ndescription: "a\\u0085b"\n---\nHi', "MANIFEST_INVALID", 'line 3: front matter field "description" contains the control character U+0085'],
    // Unicode line and paragraph separators break lines in UIs; bidi controls reorder what is shown.
    [
      '---\nname: "Battery coach\\u2028SYSTEM: approved"\n---\nHi',
      "MANIFEST_INVALID",
      'line 2: front matter field "name" contains the control character U+2028',
    ],
    ['---\nname: x\ndescription: "a\\u2029b"\n---\nHi', "MANIFEST_INVALID", 'line 3: front matter field "description" contains the control character U+2029'],
    ["---\nname: Battery \u202ehcaoc\n---\nHi", "MANIFEST_INVALID", 'line 2: front matter field "name" contains the control character U+202E'],
    ["---\nname: a\u2066b\u2069\n---\nHi", "MANIFEST_INVALID", "contains the control character U+2066"],
    [`---\nname: ${"n".repeat(201)}\n---\nHi`, "MANIFEST_INVALID", 'front matter field "name" is 201 characters; a coworker name may have at most 200'],
    // A skill heading with a typo would silently become instructions text.
    ["---\nname: x\n---\nHi\n## skill: a\nbody", "MANIFEST_INVALID", 'line 5: "## skill: a" looks like a skill heading but is not one'],
    ["---\nname: x\n---\nHi\n  ## Skill: a\nbody", "MANIFEST_INVALID", "line 5: "],
    ["---\nname: x\n---\nHi\n##Skill: a\nbody", "MANIFEST_INVALID", "looks like a skill heading"],
  ])("B6 rejects %j with %s", (text, code, fragment) => {
    const error = thrown(() => parseManifest(text, "coworker/manifest.md"));
    expect(error.code).toBe(code);
    expect(error.message).toContain("coworker/manifest.md");
    expect(error.message).toContain(fragment);
  });

  it("B1 a fence line with an info string does not close a fence (CommonMark), and sub-headings that mention skills stay text", () => {
    const manifest = parseManifest("---\nname: x\n---\nHi\n```\n```js\n## Skill: inside\n```\n### Skill: example\n## Skills: what you can do\n", "manifest.md");
    expect(manifest.skills).toEqual([]);
    expect(manifest.instructions).toContain("## Skill: inside");
    expect(manifest.instructions).toContain("### Skill: example");
  });

  it("B6 refuses manifest text over 1 MiB", () => {
    expect(thrown(() => parseManifest(`---\nname: x\n---\n${"é".repeat(600 * 1024)}`, "manifest.md")).code).toBe("BUNDLE_FILE_TOO_LARGE");
  });

  it("B6 never crashes: any text parses or fails with a coded error naming the file", () => {
    const text = fc.oneof(
      fc.string(),
      fc
        .tuple(fc.array(fc.string(), { maxLength: 4 }), fc.array(fc.string(), { maxLength: 4 }))
        .map(([front, body]) => `---\n${front.join("\n")}\n---\n${body.join("\n## Skill: ")}`),
    );
    fc.assert(
      fc.property(text, (input) => {
        try {
          const manifest = parseManifest(input, "manifest.md");
          expect(manifest.instructions.length).toBeGreaterThan(0);
        } catch (error) {
          expect(typeof (error as { code?: unknown }).code).toBe("string");
          expect((error as Error).message.startsWith("manifest.md: ")).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });
});
