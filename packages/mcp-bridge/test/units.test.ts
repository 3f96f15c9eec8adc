import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import * as bridgeIndex from "../src/index.js";
import { McpBridge, MCP_ERROR_CODES, safeBaseEnv, toolFingerprint } from "../src/index.js";
import { specTypeSchemas } from "@modelcontextprotocol/client";
import { normalizeCallResult } from "../src/call/result.js";
import { parseCallToolResult } from "../src/call/validate.js";
import { buildCatalog, catalogTool } from "../src/catalog/catalog.js";
import * as redaction from "../src/redact.js";
import { providerSecrets, redact } from "../src/redact.js";

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).toString("base64");

/** The digest the JSON keeps of an audio clip sent as `base64`. */
const sha256Of = (base64: string) => `sha256:${createHash("sha256").update(Buffer.from(base64, "base64")).digest("hex")}`;

describe("result normalization (E3, T4)", () => {
  it("T4 decodes images into bytes and leaves only a placeholder in the JSON", () => {
    const settled = normalizeCallResult({
      content: [
        { type: "text", text: "look" },
        { type: "image", mimeType: "image/png", data: PNG },
      ],
    });
    expect(settled.outcome).toBe("succeeded");
    expect(settled.output?.images[0]?.data).toEqual(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(settled.output?.json).toEqual({
      content: [
        { type: "text", text: "look" },
        { type: "image", mimeType: "image/png", image: 0 },
      ],
    });
    expect(settled.output?.text).toBe("look");
  });

  it("T4 M7 image bytes a server mirrors into structuredContent become the placeholder of the one image delivered, in the JSON and the model text", () => {
    const mirrored = { content: [{ type: "image", mimeType: "image/png", data: PNG }] };
    const settled = normalizeCallResult({ content: [{ type: "image", mimeType: "image/png", data: PNG }], structuredContent: mirrored });
    expect(settled.outcome).toBe("succeeded");
    expect(settled.output?.images).toHaveLength(1);
    expect(settled.output?.json).toEqual({ content: [{ type: "image", mimeType: "image/png", image: 0 }] });
    expect(settled.output?.text).not.toContain(PNG);
    expect(JSON.stringify(settled.output?.json)).not.toContain(PNG);
  });

  it("T4 M7 audio, binary resources and images found only in structuredContent keep no bytes in the JSON or the text; a text block serializing it is read without them", () => {
    const structuredContent = {
      frame: { type: "image", mimeType: "image/png", data: PNG },
      clips: [{ type: "audio", mimeType: "audio/wav", data: "UklGRiQAAABXQVZF" }],
      file: { type: "resource", resource: { uri: "file:///x.bin", blob: "AAAAAAAA" } },
      note: "kept",
    };
    const settled = normalizeCallResult({ content: [{ type: "text", text: JSON.stringify(structuredContent) }], structuredContent });
    expect(settled.outcome).toBe("succeeded");
    expect(settled.output?.images.map((image) => image.mimeType)).toEqual(["image/png"]);
    expect(settled.output?.audio?.map((clip) => [clip.mimeType, Buffer.from(clip.data).toString("base64")])).toEqual([["audio/wav", "UklGRiQAAABXQVZF"]]);
    expect(settled.output?.json).toEqual({
      frame: { type: "image", mimeType: "image/png", image: 0 },
      clips: [{ type: "audio", mimeType: "audio/wav", bytes: 12, audio: 0, sha256: sha256Of("UklGRiQAAABXQVZF") }],
      file: { type: "resource", resource: { uri: "file:///x.bin", bytes: 6, delivered: false } },
      note: "kept",
    });
    for (const bytes of [PNG, "UklGRiQAAABXQVZF", "AAAAAAAA"]) {
      expect(settled.output?.text).not.toContain(bytes);
      expect(JSON.stringify(settled.output?.json)).not.toContain(bytes);
    }
    expect(JSON.parse(settled.output!.text)).toEqual(settled.output?.json);
  });

  it("T4 a valid MCP image of a type the model is not given (svg) is a placeholder, not base64 in JSON, and the rest of the result stands", () => {
    const settled = normalizeCallResult({
      content: [
        { type: "text", text: "the chart:" },
        { type: "image", mimeType: "image/svg+xml", data: PNG },
      ],
    });
    expect(settled.outcome).toBe("succeeded");
    expect(settled.output?.images).toEqual([]);
    expect(settled.output?.json).toEqual({
      content: [
        { type: "text", text: "the chart:" },
        { type: "image", mimeType: "image/svg+xml", bytes: 8, delivered: false },
      ],
    });
    expect(settled.output?.text).toBe(
      "the chart:\n[image image/svg+xml, 8 bytes: not delivered; only image/png, image/jpeg, image/gif, image/webp images reach the model]",
    );
  });

  it("E3 the model text is every block in order: embedded text resources, resource links and what was not delivered are not dropped beside a text block", () => {
    const settled = normalizeCallResult({
      content: [
        { type: "text", text: "Here is the file:" },
        { type: "resource", resource: { uri: "file:///notes.txt", mimeType: "text/plain", text: "launch on friday" } },
        { type: "resource_link", uri: "file:///report.pdf", name: "report.pdf", mimeType: "application/pdf", description: "Q3 report" },
        { type: "audio", mimeType: "audio/wav", data: "AAAA" },
        { type: "resource", resource: { uri: "file:///x.bin", blob: "AAAA" } },
      ],
    });
    expect(settled.output?.text).toBe(
      [
        "Here is the file:",
        "[resource <file:///notes.txt> (text/plain)]",
        "launch on friday",
        "[resource link report.pdf <file:///report.pdf> (application/pdf): Q3 report]",
        "[audio audio/wav, 3 bytes: not given to the model]",
        "[resource <file:///x.bin>, 3 bytes: not delivered; binary resources do not reach the model]",
      ].join("\n"),
    );
  });

  it("E3 beside structuredContent (the JSON) the model gets the content's own words and the data, bounded like the result", () => {
    const differs = normalizeCallResult({ content: [{ type: "text", text: "21 C; WARNING: road closed" }], structuredContent: { temp: 21 } });
    expect(differs.output).toMatchObject({ json: { temp: 21 }, text: '21 C; WARNING: road closed\n{"temp":21}' });
    // A text block that is the serialization (what SDK servers write) is not repeated.
    const same = normalizeCallResult({ content: [{ type: "text", text: '{"temp":21,"unit":"C"}' }], structuredContent: { temp: 21, unit: "C" } });
    expect(same.output?.text).toBe('{"temp":21,"unit":"C"}');
    const huge = normalizeCallResult({ content: [{ type: "text", text: "x".repeat(300 * 1024) }], structuredContent: { temp: 21 } });
    expect(huge).toMatchObject({ outcome: "limit_exceeded", breach: { limit: "resultBytes" } });
  });

  it("E3 the model text is bounded without structuredContent too: notes for undelivered blocks are longer than their placeholders", () => {
    const svg = { type: "image", mimeType: "image/svg+xml", data: PNG } as const;
    const many = normalizeCallResult({ content: Array.from({ length: 3400 }, () => svg) });
    expect(many).toMatchObject({ outcome: "limit_exceeded", breach: { limit: "resultBytes" } });
  });

  it("M7 T4 keeps audio as attachments for a host, at most 8 per call of 5 MiB each, the same bytes once; the JSON keeps size and digest", () => {
    const clip = (data: string) => ({ type: "audio" as const, mimeType: "audio/ogg", data });
    const clips = Array.from({ length: 9 }, (_, index) => clip(Buffer.from(`clip ${index}`).toString("base64")));
    const big = clip(Buffer.alloc(5 * 1024 * 1024 + 1).toString("base64"));
    const settled = normalizeCallResult({ content: [clips[0]!, clips[0]!, big, ...clips.slice(1)] });
    expect(settled.outcome).toBe("succeeded");
    expect(settled.output?.audio?.map((kept) => Buffer.from(kept.data).toString())).toEqual(Array.from({ length: 8 }, (_, index) => `clip ${index}`));
    const json = (settled.output!.json as { content: Record<string, unknown>[] }).content;
    expect(json[0]).toEqual({ type: "audio", mimeType: "audio/ogg", bytes: 6, audio: 0, sha256: sha256Of(clips[0]!.data) });
    expect(json[1]).toEqual(json[0]);
    expect(json[2]).toEqual({ type: "audio", mimeType: "audio/ogg", bytes: 5 * 1024 * 1024 + 1, delivered: false });
    expect(json[10]).toEqual({ type: "audio", mimeType: "audio/ogg", bytes: 6, delivered: false });
    expect(settled.output?.text.split("\n")[2]).toBe(
      `[audio audio/ogg, ${5 * 1024 * 1024 + 1} bytes: not given to the model; over the bounds of audio kept per call]`,
    );
    expect(JSON.stringify(json)).not.toContain(clips[0]!.data);
  });

  it("E3 keeps audio and binary resources out of the JSON, with their size", () => {
    const settled = normalizeCallResult({
      content: [
        { type: "audio", mimeType: "audio/wav", data: "AAAA" },
        { type: "resource", resource: { uri: "file:///a.bin", mimeType: "application/octet-stream", blob: "AAAAAA==" } },
        { type: "resource", resource: { uri: "file:///a.txt", text: "inline" } },
      ],
    });
    expect(settled.output?.json).toEqual({
      content: [
        { type: "audio", mimeType: "audio/wav", bytes: 3, audio: 0, sha256: sha256Of("AAAA") },
        { type: "resource", resource: { uri: "file:///a.bin", mimeType: "application/octet-stream", bytes: 4, delivered: false } },
        { type: "resource", resource: { uri: "file:///a.txt", text: "inline" } },
      ],
    });
  });

  it("E3 structuredContent is the JSON; its serialization in a text block is the text", () => {
    const settled = normalizeCallResult({ content: [{ type: "text", text: '{"a":1}' }], structuredContent: { a: 1 } });
    expect(settled.output).toMatchObject({ json: { a: 1 }, text: '{"a":1}' });
  });

  it("T1 isError is a tool error with the text, bounded", () => {
    const settled = normalizeCallResult({ isError: true, content: [{ type: "text", text: "x".repeat(10_000) }] });
    expect(settled.outcome).toBe("failed");
    expect(settled.error?.code).toBe(MCP_ERROR_CODES.toolError);
    expect(settled.error?.message.length).toBeLessThan(4200);
  });
});

describe("result validation (E3)", () => {
  it("E3 accepts and refuses tools/call results exactly as the SDK's CallToolResult schema does", () => {
    const samples: unknown[] = [
      { content: [{ type: "text", text: "plain" }] },
      { content: [{ type: "text", text: "meta" }], isError: false, structuredContent: { a: 1 }, extra: "kept" },
      { content: [] },
      {},
      { content: [{ type: "text", text: "annotated", annotations: { priority: 0.5 } }] },
      { content: [{ type: "text", text: "stray key", stray: true }] },
      { content: [{ type: "text", text: "bad annotation", annotations: { priority: 7 } }] },
      { content: [{ type: "text", text: 42 }] },
      { content: "text" },
      { content: [{ type: "text", text: "x" }], isError: "yes" },
      { content: [{ type: "text", text: "x" }], structuredContent: [1] },
      { content: [{ type: "text", text: "x" }], _meta: { progressToken: 1 } },
      { content: [{ type: "image", mimeType: "image/png", data: PNG }] },
      { content: [{ type: "image", mimeType: "image/png", data: "%%%" }] },
      null,
      [],
      "text",
    ];
    for (const sample of samples) {
      const expected = specTypeSchemas.CallToolResult["~standard"].validate(sample) as { value?: unknown; issues?: unknown };
      const parsed = parseCallToolResult(sample);
      expect(parsed.ok, JSON.stringify(sample)).toBe(expected.issues === undefined);
      if (parsed.ok && expected.issues === undefined) expect(parsed.result, JSON.stringify(sample)).toEqual(expected.value);
    }
  });

  it("E3 names what is wrong with a malformed result", () => {
    const parsed = parseCallToolResult({ content: [{ type: "text", text: 42 }] });
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? "" : parsed.problem).toMatch(/^content\.0/);
  });
});

describe("fingerprints (M3)", () => {
  const base = { name: "t", description: "d", inputSchema: { type: "object", properties: { a: { type: "string" } } } };

  it("M3 a tool's fingerprint changes with its description, schemas or annotations, not with key order or title", () => {
    const reference = toolFingerprint(base);
    expect(toolFingerprint({ ...base, inputSchema: { properties: { a: { type: "string" } }, type: "object" } })).toBe(reference);
    expect(catalogTool({ ...base, title: "Shown title" } as never).fingerprint).toBe(reference);
    expect(toolFingerprint({ ...base, description: "other" })).not.toBe(reference);
    expect(toolFingerprint({ ...base, inputSchema: { type: "object" } })).not.toBe(reference);
    expect(toolFingerprint({ ...base, outputSchema: { type: "object" } })).not.toBe(reference);
    expect(toolFingerprint({ ...base, annotations: { destructiveHint: true } })).not.toBe(reference);
  });

  it("M3 changedTools names added and changed tools; removedTools the vanished ones", () => {
    const one = catalogTool({ name: "one", inputSchema: { type: "object" } } as never);
    const two = catalogTool({ name: "two", inputSchema: { type: "object" } } as never);
    const twoChanged = catalogTool({ name: "two", description: "now different", inputSchema: { type: "object" } } as never);
    const three = catalogTool({ name: "three", inputSchema: { type: "object" } } as never);
    const first = buildCatalog("ns", [one, two], undefined, false);
    expect(first.changedTools).toEqual(["one", "two"]);
    const second = buildCatalog("ns", [twoChanged, three], first, false);
    expect(second.changedTools).toEqual(["two", "three"]);
    expect(second.removedTools).toEqual(["one"]);
  });
});

describe("configuration", () => {
  it("E6 the redact entry exports the redaction helpers the index exports, and nothing else", () => {
    const names = Object.keys(redaction).sort();
    expect(names).toEqual(["MIN_SECRET_LENGTH", "isSecretName", "providerSecrets", "redact", "redactArgs", "redactUrl", "redactUrlCredentials"]);
    for (const name of names) expect(bridgeIndex[name as keyof typeof bridgeIndex]).toBe(redaction[name as keyof typeof redaction]);
  });

  it("E6 the safe base environment keeps PATH, HOME and locale, drops everything else", () => {
    expect(
      safeBaseEnv({ PATH: "/bin", HOME: "/root", LC_ALL: "C", AWS_SECRET_ACCESS_KEY: "k", NODE_OPTIONS: "--require x", BASH_FUNC_x: "() { :; }" }),
    ).toEqual({
      PATH: "/bin",
      HOME: "/root",
      LC_ALL: "C",
    });
  });

  it("E6 redacts configured env values and header tokens from messages", () => {
    const secrets = providerSecrets({
      transport: "streamable_http",
      namespace: "n",
      url: "http://user:pw-secret@127.0.0.1/mcp?key=qs-secret",
      headers: { Authorization: "Bearer tok-123456" },
    });
    expect(redact("got Bearer tok-123456 and tok-123456, pw-secret, qs-secret", secrets)).toBe("got [redacted] and [redacted], [redacted], [redacted]");
  });

  it("E6 the secrets of a URL with credentials are its user name and password, as written and percent-decoded", () => {
    const secrets = providerSecrets({ transport: "streamable_http", namespace: "n", url: "http://svc-token-ABCDEF:p%40ss-SECRET@127.0.0.1/mcp" });
    expect(secrets).toEqual(expect.arrayContaining(["svc-token-ABCDEF", "p%40ss-SECRET", "p@ss-SECRET"]));
    expect(redact("http://svc-token-ABCDEF:p%40ss-SECRET@127.0.0.1/mcp said p@ss-SECRET", secrets)).toBe(
      "http://[redacted]:[redacted]@127.0.0.1/mcp said [redacted]",
    );
  });

  it("E6 a user name or password shorter than the secret bound is not redacted as a substring of every message", () => {
    const secrets = providerSecrets({ transport: "streamable_http", namespace: "n", url: "http://me:e@127.0.0.1/mcp" });
    expect(secrets).toEqual([]);
    expect(redact('MCP provider "docs": url must not carry credentials', secrets)).toBe('MCP provider "docs": url must not carry credentials');
  });

  it("N5 two providers cannot share a namespace, and the error names both", () => {
    expect(
      () =>
        new McpBridge([
          { transport: "stdio", namespace: "acer", program: "/opt/a/launcher", args: [] },
          { transport: "streamable_http", namespace: "acer", url: "http://127.0.0.1:1/mcp" },
        ]),
    ).toThrow(
      expect.objectContaining({
        code: MCP_ERROR_CODES.providerDuplicate,
        message: expect.stringContaining("stdio: launcher and streamable_http: http://127.0.0.1:1/mcp"),
      }),
    );
  });

  it("N3 the reserved namespace cannot be a provider", () => {
    expect(() => new McpBridge([{ transport: "stdio", namespace: "openworker", program: "x", args: [] }])).toThrow(
      expect.objectContaining({ code: "NAMESPACE_RESERVED" }),
    );
  });
});
