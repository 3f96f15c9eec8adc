import { defineConfig } from "vitest/config";

// One vitest setup for the whole workspace: every package keeps its tests in test/.
export default defineConfig({
  test: {
    include: ["{packages,apps,examples}/*/test/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    restoreMocks: true,
  },
});
