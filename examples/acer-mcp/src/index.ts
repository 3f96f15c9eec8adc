// Anything exported here is public API of the acer-mcp example.
export { POWER_SUPPLY_ROOT, readBatteryStatus, type BatteryReading, type BatteryStatus } from "./battery.js";
export { BATTERY_TOOL, createAcerServer } from "./acer-server.js";
