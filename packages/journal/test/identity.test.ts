import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import type { ToolDescriptor } from "@openworker/tools-sdk";
import { afterEach, describe, expect, it } from "vitest";
import {
  argumentsDigest,
  computeExecutionIdentity,
  type ExecutionIdentityInputs,
  hostExecutableDigest,
  JOURNAL_ERRORS,
  type SelectedTool,
} from "../src/index.js";
import { codeOf, temporaryFolder } from "./helpers.js";

const encoder = new TextEncoder();
const host = { executableBytesDigest: `sha256:${"1".repeat(64)}`, nodeVersion: "v20.20.2" };
const policies = { classification: { "acer.battery": "external" }, bypass: false };
const manifest = encoder.encode("# Battery helper\n\nYou check the battery.\n");

const acer: SelectedTool = {
  qualifiedName: "acer.acer_care_center_batterystatus_get",
  alias: "acer__acer_care_center_batterystatus_get",
  kind: "mcp",
  schemaFingerprint: `sha256:${"a".repeat(64)}`,
  provider: "acer",
  remoteName: "acer_care_center_batterystatus_get",
};
const search: ToolDescriptor = {
  name: "example.web_search",
  description: "Search the web.",
  inputSchema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
  version: "1.2.0",
};
const searchSelected: SelectedTool = {
  qualifiedName: "example.web_search",
  alias: "example__web_search",
  kind: "native",
  schemaFingerprint: `sha256:${"b".repeat(64)}`,
  version: "1.2.0",
};

function v1(extra: Partial<ExecutionIdentityInputs> = {}): ExecutionIdentityInputs {
  return {
    bundle: { manifestBytes: manifest, toolsJsonBytes: encoder.encode('{"version":1,"mcpServers":["acer"]}'), version: 1 },
    policies,
    selection: [acer],
    nativeDescriptors: [],
    host,
    ...extra,
  };
}

function v2(extra: Partial<ExecutionIdentityInputs> = {}): ExecutionIdentityInputs {
  return {
    ...v1(),
    bundle: {
      manifestBytes: manifest,
      toolsJsonBytes: encoder.encode('{"version":2,"mcpServers":{"acer":["acer_care_center_batterystatus_get"]}}'),
      version: 2,
    },
    ...extra,
  };
}

function v3(extra: Partial<ExecutionIdentityInputs> = {}): ExecutionIdentityInputs {
  return {
    bundle: {
      manifestBytes: manifest,
      toolsJsonBytes: encoder.encode('{"version":3,"tools":["example.web_search","acer.acer_care_center_batterystatus_get"]}'),
      version: 3,
    },
    policies,
    selection: [searchSelected, acer],
    nativeDescriptors: [search],
    host,
    ...extra,
  };
}

describe("execution identity (A2, B3)", () => {
  // Frozen vectors: computed once when the schemes were released. Never regenerate them;
  // a failure here means sessions and approvals of existing users would change identity.
  it("A2 B3 frozen test vectors for v1, v2 and v3 bundles never change", () => {
    expect(computeExecutionIdentity(v1()).identity).toBe("owid-legacy1:c0dc0fa0e990f352f1a7dfe8b3691db7143a400c9af2f1abe10978cf8c0f2952");
    expect(computeExecutionIdentity(v2()).identity).toBe("owid-legacy1:d0fa08d2cfccba2647a0f220018b913b953aa673bc2cc50daaf1e635aec9db4e");
    expect(computeExecutionIdentity(v3()).identity).toBe("owid3:bca9ca77efb5aa3278eeced4189729fb9a8e59fbf64a06e8e973c59ca53c9acf");
    expect(argumentsDigest({ query: "battery", limit: 3 })).toBe("sha256:a31ca6aa8dd6810003fbd5fd5f304b68128c17d3b71056cfb99188f29430a537");
  });

  it("B3 registering native tools never changes a v1 or v2 session's identity", () => {
    const before = computeExecutionIdentity(v1()).identity;
    const nativeInSelection = v1({ selection: [acer, searchSelected], nativeDescriptors: [search] });
    expect(computeExecutionIdentity(nativeInSelection).identity).toBe(before);
    expect(computeExecutionIdentity(v2({ nativeDescriptors: [search], selection: [searchSelected, acer] })).identity).toBe(
      computeExecutionIdentity(v2()).identity,
    );
    expect(computeExecutionIdentity(v1()).scheme).toBe("owid-legacy1");
  });

  it("A2 every pinned input of a v3 identity changes it", () => {
    const base = computeExecutionIdentity(v3()).identity;
    const variants: ExecutionIdentityInputs[] = [
      v3({ bundle: { ...v3().bundle, manifestBytes: encoder.encode("# other") } }),
      v3({ policies: { ...policies, bypass: true } }),
      v3({ host: { ...host, nodeVersion: "v20.20.3" } }),
      v3({ host: { ...host, executableBytesDigest: `sha256:${"2".repeat(64)}` } }),
      v3({ nativeDescriptors: [{ ...search, version: "1.2.1" }] }),
      v3({ nativeDescriptors: [{ ...search, description: "Search the web, faster." }] }),
      v3({ nativeDescriptors: [{ ...search, inputSchema: { type: "object" } }] }),
      v3({ selection: [searchSelected, { ...acer, schemaFingerprint: `sha256:${"c".repeat(64)}` }] }),
      v3({ selection: [{ ...searchSelected, alias: "example__web_search2" }, acer] }),
    ];
    const identities = variants.map((inputs) => computeExecutionIdentity(inputs).identity);
    expect(identities).not.toContain(base);
    expect(new Set(identities).size).toBe(variants.length);
  });

  it("A2 the order of the selection and of schema keys does not change the identity", () => {
    const reordered = v3({
      selection: [acer, searchSelected],
      nativeDescriptors: [{ ...search, inputSchema: { required: ["query"], properties: { query: { type: "string" } }, type: "object" } }],
    });
    expect(computeExecutionIdentity(reordered)).toEqual(computeExecutionIdentity(v3()));
    expect(computeExecutionIdentity(v3()).components).toHaveProperty("nativeDescriptors");
  });

  it("A2 refuses native descriptors that disagree with the selection", async () => {
    expect(await codeOf(() => computeExecutionIdentity(v3({ nativeDescriptors: [] })))).toBe(JOURNAL_ERRORS.IDENTITY_INPUT_INVALID);
    expect(await codeOf(() => computeExecutionIdentity(v3({ nativeDescriptors: [search, search] })))).toBe(JOURNAL_ERRORS.IDENTITY_INPUT_INVALID);
    const unselected = { ...search, name: "example.other" };
    expect(await codeOf(() => computeExecutionIdentity(v3({ nativeDescriptors: [search, unselected] })))).toBe(JOURNAL_ERRORS.IDENTITY_INPUT_INVALID);
    expect(await codeOf(() => computeExecutionIdentity(v3({ bundle: { ...v3().bundle, version: 4 as never } })))).toBe(JOURNAL_ERRORS.IDENTITY_INPUT_INVALID);
  });

  it("M3 the arguments digest ignores key order and nothing else", () => {
    expect(argumentsDigest({ a: 1, b: [1, 2] })).toBe(argumentsDigest({ b: [1, 2], a: 1 }));
    expect(argumentsDigest({ a: 1, b: [1, 2] })).not.toBe(argumentsDigest({ a: 1, b: [2, 1] }));
  });
});

describe("host executable digest (A2)", () => {
  let folder: ReturnType<typeof temporaryFolder> | undefined;
  afterEach(() => folder?.remove());

  it("A2 hashes the bundled entry file's bytes and names the Node version", async () => {
    folder = temporaryFolder();
    const entry = folder.file("host.mjs");
    writeFileSync(entry, "console.log('host');\n");
    const first = await hostExecutableDigest(entry);
    expect(first).toEqual({
      executableBytesDigest: "sha256:2d178c447519f19dccb7c098a9adce29c8980db4473f7160477ba6961e7016e0",
      nodeVersion: process.version,
    });
    writeFileSync(entry, "console.log('host, rebuilt');\n");
    expect((await hostExecutableDigest(entry)).executableBytesDigest).not.toBe(first.executableBytesDigest);
  });

  it("A2 an unreadable entry file is a clear error", async () => {
    expect(await codeOf(() => hostExecutableDigest("/nonexistent/host.mjs"))).toBe(JOURNAL_ERRORS.HOST_ENTRY_UNREADABLE);
  });

  it("A2 an entry that is a FIFO or a device is refused at once, not read for ever", async () => {
    const folder = temporaryFolder();
    const fifo = folder.file("host.fifo");
    execFileSync("mkfifo", [fifo]);
    try {
      expect(await codeOf(() => hostExecutableDigest(fifo))).toBe(JOURNAL_ERRORS.HOST_ENTRY_UNREADABLE);
      expect(await codeOf(() => hostExecutableDigest("/dev/zero"))).toBe(JOURNAL_ERRORS.HOST_ENTRY_UNREADABLE);
    } finally {
      folder.remove();
    }
  });
});
