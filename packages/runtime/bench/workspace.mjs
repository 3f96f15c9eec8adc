// The scratch workspace the runtime's bench scripts run in.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The MCP server fixture the scripts call (`mut.status_get`, …). */
export const mutableServer = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../test/fixtures/mutable-server.mjs");

/**
 * A fresh folder, removed however the run ends (an error too: a run's journal can reach
 * hundreds of MB), with a host entry (`host.js`, the identity's host bytes) and a
 * `bundle(name, tools)` that writes a v3 bundle there and returns its path.
 */
export function benchWorkspace(prefix) {
  const dir = mkdtempSync(path.join(tmpdir(), `ow-${prefix}-`));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  const hostEntry = path.join(dir, "host.js");
  writeFileSync(hostEntry, `// ${prefix} host\n`);
  const bundle = (name, tools) => {
    const folder = path.join(dir, name);
    mkdirSync(folder);
    writeFileSync(path.join(folder, "manifest.md"), `---\nname: ${prefix}\n---\nRuns the ${prefix} script.\n`);
    writeFileSync(path.join(folder, "tools.json"), JSON.stringify({ version: 3, tools }));
    return folder;
  };
  return { dir, hostEntry, bundle };
}
