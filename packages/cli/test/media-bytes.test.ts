import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FIXTURE_HOST, REPO, runEntry, tempDir, writeBundle } from "./helpers.js";

const temp = tempDir("media");
afterAll(() => temp.cleanup());

const SERVER = path.join(path.dirname(FIXTURE_HOST), "media-mirror-server.mjs");

describe("image bytes a server mirrors into structuredContent", () => {
  it("T4 M7 never reach the printed result, the journal file or its export: only the image's placeholder does", async () => {
    const bytes = Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), randomBytes(3000)]);
    const base64 = bytes.toString("base64");
    const servers = path.join(temp.dir, "servers.json");
    writeFileSync(
      servers,
      JSON.stringify({ servers: { media: { transport: "stdio", command: process.execPath, args: [SERVER], env: { MEDIA_HEX: bytes.toString("hex") } } } }),
    );
    const bundle = writeBundle(path.join(temp.dir, "bundle"), JSON.stringify({ version: 3, tools: ["media.read_media"] }));
    const journal = path.join(temp.dir, "journal", "journal.db");
    const call = await runEntry(FIXTURE_HOST, [
      "call",
      "media.read_media",
      "--bundle",
      bundle,
      "--servers",
      servers,
      "--approve",
      "yes",
      "--json",
      "--journal",
      journal,
    ]);
    expect(call.code, call.stderr).toBe(0);
    const report = JSON.parse(call.stdout) as { outcome: string; json: unknown; images: number };
    expect(report).toMatchObject({ outcome: "succeeded", json: { content: [{ type: "image", mimeType: "image/png", image: 0 }] } });
    const sessions = JSON.parse((await runEntry(FIXTURE_HOST, ["journal", "sessions", "--json", "--journal", journal])).stdout) as { sessionId: string }[];
    expect(sessions).toHaveLength(1);
    const exported = await runEntry(FIXTURE_HOST, ["journal", "export", sessions[0]!.sessionId, "--journal", journal]);
    expect(exported.code, exported.stderr).toBe(0);
    // A piece from the middle of the base64, as any copy of the bytes in text would hold it.
    const piece = base64.slice(1000, 1100);
    expect(call.stdout).not.toContain(piece);
    expect(exported.stdout).not.toContain(piece);
    for (const file of readdirSync(path.dirname(journal))) {
      expect(readFileSync(path.join(path.dirname(journal), file), "latin1"), file).not.toContain(piece);
    }
    expect((await runEntry(FIXTURE_HOST, ["journal", "verify", "--journal", journal])).code).toBe(0);
  });
});

const published = createRequire(path.join(REPO, "packages/mcp-bridge/package.json"));
const entryOf = (name: string) => path.join(path.dirname(published.resolve(`${name}/package.json`)), "dist", "index.js");
const png = Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), randomBytes(2000)]);

describe("images of servers of every generation", () => {
  const cases = [
    {
      label: "a 2026-07-28 server's image block",
      server: () => ({ transport: "stdio", command: process.execPath, args: [path.join(REPO, "packages/mcp-bridge/test/fixtures/modern-only.mjs")] }),
      tool: "picture",
      args: {},
      base64: () => readFileSync(path.join(REPO, "packages/mcp-bridge/test/fixtures/modern-tools.mjs"), "utf8").match(/PIXEL = "([^"]+)"/)![1]!,
    },
    {
      label: "server-everything's get-tiny-image",
      server: () => ({ transport: "stdio", command: process.execPath, args: [entryOf("@modelcontextprotocol/server-everything"), "stdio"] }),
      tool: "get-tiny-image",
      args: {},
      base64: () =>
        readFileSync(path.join(path.dirname(entryOf("@modelcontextprotocol/server-everything")), "tools", "get-tiny-image.js"), "utf8").match(
          /"(iVBOR[A-Za-z0-9+/=]{200,})"/,
        )![1]!,
    },
    {
      label: "server-filesystem's read_media_file",
      server: () => {
        const dir = path.join(temp.dir, "media-files");
        mkdirSync(dir, { recursive: true });
        writeFileSync(path.join(dir, "picture.png"), png);
        return { transport: "stdio", command: process.execPath, args: [entryOf("@modelcontextprotocol/server-filesystem"), dir] };
      },
      tool: "read_media_file",
      args: { path: path.join(temp.dir, "media-files", "picture.png") },
      base64: () => png.toString("base64"),
    },
  ];
  cases.forEach((entry, index) => {
    it(`T4 M6 M7 ${entry.label} never reaches the printed result, the journal file or its export`, async () => {
      const dir = path.join(temp.dir, `images-${index}`);
      mkdirSync(dir, { recursive: true });
      const servers = path.join(dir, "servers.json");
      writeFileSync(servers, JSON.stringify({ servers: { srv: entry.server() } }));
      const journal = path.join(dir, "journal", "journal.db");
      const call = await runEntry(FIXTURE_HOST, [
        "call",
        `srv.${entry.tool}`,
        "--args",
        JSON.stringify(entry.args),
        "--servers",
        servers,
        "--approve",
        "yes",
        "--json",
        "--journal",
        journal,
      ]);
      expect(call.code, call.stderr).toBe(0);
      expect(JSON.parse(call.stdout)).toMatchObject({ outcome: "succeeded" });
      // The image is in the result as its placeholder, pointing at the attachment.
      expect(call.stdout).toMatch(/"type": "image",\s*"mimeType": "image\/png",\s*"image": 0/);
      const base64 = entry.base64();
      const piece = base64.slice(20, 80);
      const sessions = JSON.parse((await runEntry(FIXTURE_HOST, ["journal", "sessions", "--json", "--journal", journal])).stdout) as { sessionId: string }[];
      const exported = await runEntry(FIXTURE_HOST, ["journal", "export", sessions[0]!.sessionId, "--journal", journal]);
      expect(exported.code, exported.stderr).toBe(0);
      expect(call.stdout).not.toContain(piece);
      expect(exported.stdout).not.toContain(piece);
      for (const file of readdirSync(path.dirname(journal))) {
        expect(readFileSync(path.join(path.dirname(journal), file), "latin1"), file).not.toContain(piece);
      }
      expect((await runEntry(FIXTURE_HOST, ["journal", "verify", "--journal", journal])).code).toBe(0);
    });
  });
});
