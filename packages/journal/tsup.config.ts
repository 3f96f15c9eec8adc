import { defineConfig } from "tsup";
import { packageBuild } from "../../tsup.base.js";

// The commit thread's worker and its checkpoint helper are built as their own files
// beside the entry (see src/commit-thread.ts, src/checkpoint-thread.ts); `shims` gives the CommonJS build an `import.meta.url` to find it.
export default defineConfig({
  ...packageBuild({
    index: "src/index.ts",
    "journal-commit-worker": "src/journal-commit-worker.ts",
    "journal-checkpoint-worker": "src/journal-checkpoint-worker.ts",
  }),
  shims: true,
});
