import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { LIMITS, utf8Bytes } from "@openworker/tools-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpBridge, type McpSession } from "../src/index.js";
import { fixture } from "./helpers.js";

const require = createRequire(import.meta.url);
const filesystemEntry = path.join(path.dirname(require.resolve("@modelcontextprotocol/server-filesystem/package.json")), "dist", "index.js");

const scratch = mkdtempSync(path.join(tmpdir(), "mcp-bridge-content-"));
// About 136 KB of text with quotes, backslashes and non-ASCII, so that its JSON string is longer than the text.
const fileText = Array.from({ length: 2_270 }, (_, line) => `${String(line).padStart(4, "0")} "quoted" C:\\path\\file — ünïcode line of the report`).join("\n");
const marker = '0777 "quoted" C:\\path\\file';
writeFileSync(path.join(scratch, "report.txt"), fileText);

let bridge: McpBridge;
let session: McpSession;

beforeAll(async () => {
  bridge = new McpBridge(
    [
      { transport: "stdio", namespace: "fidelity", program: process.execPath, args: [fixture("content-fidelity.mjs")] },
      { transport: "stdio", namespace: "files", program: process.execPath, args: [filesystemEntry, scratch] },
    ],
    { closeGraceMs: 300 },
  );
  session = bridge.openSession("content-once");
  const { unavailable } = await session.discover(["fidelity", "files"]);
  expect(unavailable).toEqual([]);
});

afterAll(async () => {
  await bridge.dispose();
  await bridge.joinCleanup();
  rmSync(scratch, { recursive: true, force: true });
});

const occurrences = (text: string, part: string): number => text.split(part).length - 1;

describe("structured data reaches the model once (M7, E3)", () => {
  it("M7 E3 a pretty-printed serialization of structuredContent gives way to its JSON: the data is in the model text once", async () => {
    const result = await session.callTool("fidelity", "pretty", {}, {});
    expect(result.outcome).toBe("succeeded");
    const json = result.output!.json as { city: string; days: unknown[] };
    expect(json.days).toHaveLength(40);
    expect(result.output!.text).toBe(JSON.stringify(json));
    expect(occurrences(result.output!.text, '"city"')).toBe(1);
  });

  it("M7 E3 a raw text that is a string value of structuredContent is not repeated beside the JSON", async () => {
    const result = await session.callTool("fidelity", "raw", {}, {});
    expect(result.outcome).toBe("succeeded");
    expect(result.output!.json).toEqual({ content: 'Line one of the note, with "quotes".\nLine two of the note.' });
    expect(JSON.parse(result.output!.text)).toEqual(result.output!.json);
    expect(occurrences(result.output!.text, "Line two")).toBe(1);
  });

  it("M7 the server's own words beside structuredContent stay, followed by the JSON once", async () => {
    const result = await session.callTool("fidelity", "words", {}, {});
    expect(result.output!.text).toBe('Lyon: clear on day 0; storm warning on day 3\n{"city":"Lyon","high":20}');
  });

  for (const tool of ["read_text_file", "read_file"]) {
    it(`M7 E3 server-filesystem's ${tool} of a 136 KB file stays under the result limit and holds the file once`, async () => {
      expect(utf8Bytes(fileText)).toBeGreaterThan(135_000);
      const result = await session.callTool("files", tool, { path: path.join(scratch, "report.txt") }, {});
      expect(result.error).toBeUndefined();
      expect(result.outcome).toBe("succeeded");
      expect(result.output!.json).toEqual({ content: fileText });
      const text = result.output!.text;
      expect(utf8Bytes(text)).toBeLessThan(LIMITS.resultBytes);
      // The file once, as the JSON's string: its text is not repeated raw beside it.
      expect(JSON.parse(text)).toEqual({ content: fileText });
      expect(occurrences(text, marker.replaceAll("\\", "\\\\").replaceAll('"', '\\"'))).toBe(1);
      expect(text).not.toContain(marker);
    });
  }
});

describe("content annotations (M7)", () => {
  it("M7 annotations of text, image, embedded resource and resource link blocks survive in the result's JSON", async () => {
    const result = await session.callTool("fidelity", "annotated", {}, {});
    expect(result.outcome).toBe("succeeded");
    expect(result.output!.images).toHaveLength(1);
    expect(result.output!.json).toEqual({
      content: [
        { type: "text", text: "for the user", annotations: { audience: ["user"], priority: 0.9 } },
        { type: "image", mimeType: "image/png", image: 0, annotations: { audience: ["assistant"], lastModified: "2026-01-02T03:04:05Z" } },
        { type: "resource", resource: { uri: "file:///notes.txt", mimeType: "text/plain", text: "notes" }, annotations: { priority: 0.2 } },
        { type: "resource_link", uri: "file:///report.pdf", name: "report.pdf", annotations: { audience: ["user", "assistant"] } },
      ],
    });
    // The model text is the server's words; annotations are for the host.
    expect(result.output!.text).toBe("for the user\n[resource <file:///notes.txt> (text/plain)]\nnotes\n[resource link report.pdf <file:///report.pdf>]");
  });
});
