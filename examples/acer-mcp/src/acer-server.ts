import { McpServer } from "@modelcontextprotocol/server";
import * as z from "zod/v4";
import { POWER_SUPPLY_ROOT, readBatteryStatus } from "./battery.js";

/** The remote name the seed's bundles select as `acer.acer_care_center_batterystatus_get`. */
export const BATTERY_TOOL = "acer_care_center_batterystatus_get";

const battery = z.object({
  name: z.string(),
  capacityPercent: z.number().nullable(),
  status: z.string(),
  cycleCount: z.number().nullable(),
  technology: z.string().nullable(),
  manufacturer: z.string().nullable(),
  model: z.string().nullable(),
});

/**
 * Builds the acer MCP server (not connected): one read-only tool reporting the
 * machine's battery. `powerSupplyRoot` defaults to `ACER_POWER_SUPPLY_ROOT` or
 * `/sys/class/power_supply`.
 *
 * @example
 * ```ts
 * serveStdio(() => createAcerServer());
 * ```
 */
export function createAcerServer(powerSupplyRoot: string = process.env.ACER_POWER_SUPPLY_ROOT ?? POWER_SUPPLY_ROOT): McpServer {
  const server = new McpServer({ name: "acer-care-center", version: "1.0.0" });
  server.registerTool(
    BATTERY_TOOL,
    {
      title: "Battery status",
      description: "Reads the battery charge, charging state and health of this machine. Reports clearly when the machine has no battery.",
      inputSchema: z.object({}),
      outputSchema: z.object({
        present: z.boolean(),
        batteries: z.array(battery).optional(),
        message: z.string().optional(),
        acOnline: z.boolean().nullable(),
      }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async () => {
      const status = await readBatteryStatus(powerSupplyRoot);
      const text = status.present
        ? status.batteries.map((entry) => `${entry.name}: ${entry.capacityPercent ?? "?"}% (${entry.status})`).join("\n")
        : status.message;
      return { content: [{ type: "text", text }], structuredContent: { ...status } };
    },
  );
  return server;
}
