import { defineConfig } from "tsup";
import { packageBuild } from "../../tsup.base.js";

export default defineConfig(packageBuild({ index: "src/index.ts", redact: "src/redact.ts" }));
