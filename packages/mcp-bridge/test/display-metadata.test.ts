import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpBridge, type DiscoveryResult, type McpCatalogTool } from "../src/index.js";
import { fixture } from "./helpers.js";

const SECRET = "s3cr3t-display-token";
const provider = (namespace: string, env: Record<string, string>) => ({
  transport: "stdio" as const,
  namespace,
  program: process.execPath,
  args: [fixture("display-metadata.mjs")],
  env: { SECRET_VALUE: SECRET, ...env },
});

let bridge: McpBridge;
let discovery: DiscoveryResult;
const lookup = (namespace: string): McpCatalogTool => discovery.catalogs.find((catalog) => catalog.namespace === namespace)!.tools[0]!;

beforeAll(async () => {
  bridge = new McpBridge(
    [provider("plain", {}), provider("restyled", { STYLE: "b" }), provider("annotated", { ANNOTATE: "b" }), provider("bulky", { BIG_META: "1" })],
    { closeGraceMs: 300 },
  );
  discovery = await bridge.openSession("display").discover(["plain", "restyled", "annotated", "bulky"]);
  expect(discovery.unavailable).toEqual([]);
});

afterAll(async () => {
  await bridge.dispose();
  await bridge.joinCleanup();
});

describe("tool icons, _meta and annotations for host UIs (M5, M7)", () => {
  it("M5 M7 the inventory shows a tool's icons, _meta and annotations as published, bounded and redacted", () => {
    const row = bridge.inventory({ serverNames: ["plain"] })?.tools[0];
    expect(row).toMatchObject({ toolName: "lookup", title: "Lookup a", annotations: { title: "Look up", readOnlyHint: true, openWorldHint: false } });
    // Unsafe schemes and an oversized source are left out; eight icons at most.
    expect(row?.icons).toEqual([
      { src: "https://example.invalid/lookup-a.png", mimeType: "image/png", sizes: ["48x48"], theme: "light" },
      { src: "data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=", mimeType: "image/svg+xml", sizes: ["any"] },
      ...Array.from({ length: 6 }, (_, index) => ({ src: `https://example.invalid/extra-${index}.png` })),
    ]);
    // E6: the provider's configured secret is masked in _meta's strings.
    expect(row?._meta).toEqual({ "example/owner": "team-a", "example/links": [{ help: "https://example.invalid/help?token=[redacted]" }] });
    expect(JSON.stringify(bridge.inventory())).not.toContain(SECRET);
  });

  it("M5 a _meta over 4 KiB is left out whole; the rest of the tool stands", () => {
    expect(lookup("bulky")._meta).toBeUndefined();
    expect(lookup("bulky").icons).toHaveLength(8);
    expect(bridge.inventory({ serverNames: ["bulky"] })?.tools[0]).not.toHaveProperty("_meta");
  });

  it("M3 M7 the fingerprint leaves out what is display-only (title, icons, _meta) and keeps annotations", () => {
    expect(lookup("restyled")).toMatchObject({ title: "Lookup b", _meta: { "example/owner": "team-b" } });
    expect(lookup("restyled").icons?.[0]?.src).toBe("https://example.invalid/lookup-b.png");
    expect(lookup("restyled").fingerprint).toBe(lookup("plain").fingerprint);
    expect(lookup("annotated").fingerprint).not.toBe(lookup("plain").fingerprint);
  });
});
