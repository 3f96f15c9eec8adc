import { defineConfig } from "tsup";
import { packageBuild } from "../../tsup.base.js";

// The commit thread's worker is built as its own file beside the entry (see
// src/commit-thread.ts); `shims` gives the CommonJS build an `import.meta.url` to find it.
export default defineConfig({
  ...packageBuild({ index: "src/index.ts", "journal-commit-worker": "src/journal-commit-worker.ts" }),
  shims: true,
});
