import { readdir, readFile } from "node:fs/promises";
import path from "node:path";

/** Where Linux publishes power supplies. */
export const POWER_SUPPLY_ROOT = "/sys/class/power_supply";

/** One battery as `/sys/class/power_supply/<name>` describes it. */
export interface BatteryReading {
  readonly name: string;
  /** 0–100, when the kernel reports it. */
  readonly capacityPercent: number | null;
  /** `Charging`, `Discharging`, `Full`, `Not charging` or `Unknown`. */
  readonly status: string;
  readonly cycleCount: number | null;
  readonly technology: string | null;
  readonly manufacturer: string | null;
  readonly model: string | null;
}

/** The tool's result: the batteries found, or a clear "no battery". */
export type BatteryStatus =
  | { readonly present: true; readonly batteries: readonly BatteryReading[]; readonly acOnline: boolean | null }
  | { readonly present: false; readonly message: string; readonly acOnline: boolean | null };

async function readText(file: string): Promise<string | null> {
  try {
    return (await readFile(file, "utf8")).trim();
  } catch {
    return null;
  }
}

async function readNumber(file: string): Promise<number | null> {
  const text = await readText(file);
  if (text === null || text === "") return null;
  const value = Number(text);
  return Number.isFinite(value) ? value : null;
}

/**
 * Reads the machine's batteries from `root` (default {@link POWER_SUPPLY_ROOT}). A
 * machine without batteries, or without that folder at all (not Linux, a container),
 * gets `{ present: false, message }` rather than an error.
 *
 * @example
 * ```ts
 * const status = await readBatteryStatus();
 * if (status.present) console.log(status.batteries[0]?.capacityPercent);
 * ```
 */
export async function readBatteryStatus(root: string = POWER_SUPPLY_ROOT): Promise<BatteryStatus> {
  let names: string[];
  try {
    names = (await readdir(root)).sort();
  } catch {
    return { present: false, message: `no battery: ${root} does not exist on this machine (${process.platform})`, acOnline: null };
  }
  const batteries: BatteryReading[] = [];
  let acOnline: boolean | null = null;
  for (const name of names) {
    const folder = path.join(root, name);
    const type = await readText(path.join(folder, "type"));
    if (type === "Mains" || type === "USB") {
      const online = await readNumber(path.join(folder, "online"));
      if (online !== null) acOnline = acOnline === true || online === 1;
      continue;
    }
    if (type !== "Battery") continue;
    if ((await readNumber(path.join(folder, "present"))) === 0) continue;
    batteries.push({
      name,
      capacityPercent: await readNumber(path.join(folder, "capacity")),
      status: (await readText(path.join(folder, "status"))) ?? "Unknown",
      cycleCount: await readNumber(path.join(folder, "cycle_count")),
      technology: await readText(path.join(folder, "technology")),
      manufacturer: await readText(path.join(folder, "manufacturer")),
      model: await readText(path.join(folder, "model_name")),
    });
  }
  if (batteries.length === 0) return { present: false, message: `no battery: ${root} lists no battery on this machine`, acOnline };
  return { present: true, batteries, acOnline };
}
