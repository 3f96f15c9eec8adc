import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FIXTURE_HOST, runEntry, tempDir, writeBundle } from "./helpers.js";

const temp = tempDir("media");
afterAll(() => temp.cleanup());

const SERVER = path.join(path.dirname(FIXTURE_HOST), "media-mirror-server.mjs");

describe("image bytes a server mirrors into structuredContent", () => {
  it("T4 M7 never reach the printed result, the journal file or its export: only the image's placeholder does", async () => {
    const bytes = Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), randomBytes(3000)]);
    const base64 = bytes.toString("base64");
    const servers = path.join(temp.dir, "servers.json");
    writeFileSync(servers, JSON.stringify({ servers: { media: { transport: "stdio", command: process.execPath, args: [SERVER], env: { MEDIA_HEX: bytes.toString("hex") } } } }));
    const bundle = writeBundle(path.join(temp.dir, "bundle"), JSON.stringify({ version: 3, tools: ["media.read_media"] }));
    const journal = path.join(temp.dir, "journal", "journal.db");
    const call = await runEntry(FIXTURE_HOST, ["call", "media.read_media", "--bundle", bundle, "--servers", servers, "--approve", "yes", "--json", "--journal", journal]);
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
