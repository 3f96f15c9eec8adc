import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterEach, describe, expect, it } from "vitest";
import { BATTERY_TOOL, createAcerServer, readBatteryStatus } from "../src/index.js";

const launcher = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../bin/acer-mcp-launcher");
const folders: string[] = [];

function powerSupplies(entries: Record<string, Record<string, string>>): string {
  const root = mkdtempSync(path.join(tmpdir(), "acer-sysfs-"));
  folders.push(root);
  for (const [name, files] of Object.entries(entries)) {
    mkdirSync(path.join(root, name));
    for (const [file, content] of Object.entries(files)) writeFileSync(path.join(root, name, file), `${content}\n`);
  }
  return root;
}

afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

describe("acer battery status", () => {
  it("reads a battery and the AC adapter from a power_supply tree", async () => {
    const root = powerSupplies({
      AC: { type: "Mains", online: "1" },
      BAT1: {
        type: "Battery",
        present: "1",
        capacity: "87",
        status: "Charging",
        cycle_count: "42",
        technology: "Li-ion",
        manufacturer: "ACER",
        model_name: "AP18C8K",
      },
    });
    expect(await readBatteryStatus(root)).toEqual({
      present: true,
      acOnline: true,
      batteries: [{ name: "BAT1", capacityPercent: 87, status: "Charging", cycleCount: 42, technology: "Li-ion", manufacturer: "ACER", model: "AP18C8K" }],
    });
  });

  it("says clearly when the machine has no battery", async () => {
    const root = powerSupplies({ AC: { type: "Mains", online: "0" } });
    const status = await readBatteryStatus(root);
    expect(status).toMatchObject({ present: false, acOnline: false });
    expect(status.present === false && status.message).toContain("no battery");
  });

  it("says clearly when there is no power_supply folder at all", async () => {
    const status = await readBatteryStatus(path.join(tmpdir(), "acer-no-such-folder"));
    expect(status.present).toBe(false);
  });

  it("serves acer_care_center_batterystatus_get with structured content", async () => {
    const root = powerSupplies({ BAT0: { type: "Battery", capacity: "50", status: "Discharging" } });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const server = createAcerServer(root);
    await server.connect(serverSide);
    const client = new Client({ name: "test", version: "1" });
    await client.connect(clientSide);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([BATTERY_TOOL]);
    const result = await client.callTool({ name: BATTERY_TOOL, arguments: {} });
    expect(result.structuredContent).toMatchObject({ present: true, batteries: [{ name: "BAT0", capacityPercent: 50, status: "Discharging" }] });
    await client.close();
    await server.close();
  });

  it("M1 M6 runs through bin/acer-mcp-launcher, a wrapper that starts node as its child, on protocol 2026-07-28", async () => {
    const root = powerSupplies({});
    const transport = new StdioClientTransport({
      command: launcher,
      args: [],
      env: { PATH: process.env.PATH ?? "", ACER_POWER_SUPPLY_ROOT: root },
      stderr: "ignore",
    });
    const client = new Client({ name: "test", version: "1" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
    await client.connect(transport);
    expect(client.getProtocolEra()).toBe("modern");
    const result = await client.callTool({ name: BATTERY_TOOL, arguments: {} });
    expect(result.structuredContent).toMatchObject({ present: false });
    await client.close();
  });
});
