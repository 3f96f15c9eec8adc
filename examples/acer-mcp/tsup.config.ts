import { defineConfig } from "tsup";

// index: the library (createAcerServer, readBatteryStatus); server: the stdio server the launcher runs.
export default defineConfig({
  entry: { index: "src/index.ts", server: "src/server.ts" },
  format: ["esm"],
  dts: { entry: { index: "src/index.ts" } },
  clean: true,
  sourcemap: true,
  target: "node22",
  platform: "node",
});
