import { describe, expect, it } from "vitest";
import { Checkpoints } from "../src/checkpoint-thread.js";
import { Journal } from "../src/index.js";
import { temporaryFolderPerTest } from "./helpers.js";

const folder = temporaryFolderPerTest();
// The module the built worker is looked for beside (`../dist/` from the sources).
const here = new URL("../src/checkpoint-thread.ts", import.meta.url).href;
const CHECKPOINT_EVERY_CHARS = 4 << 20;

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe("checkpoint thread (A3)", () => {
  it("A3 the hand-over to the commit thread does not wait for the writer's checkpoint thread: retire() returns while it still runs, and it closes on its own", async () => {
    const file = folder.file("journal.db");
    Journal.open({ path: file }).close();
    const checkpoints = new Checkpoints(file, "NORMAL", here);
    // The first 4 MB committed start the thread; it is still loading when retire() is called.
    checkpoints.committed(CHECKPOINT_EVERY_CHARS);
    expect(checkpoints.running).toBe(true);
    checkpoints.retire();
    // A blocking stop would have waited here until the thread closed (up to 200 ms for a
    // loading thread, 5 s for one in a checkpoint): the writer's event loop held meanwhile.
    expect(checkpoints.running).toBe(true);
    await until(() => !checkpoints.running);
    // Retired: no later commit starts another thread or asks it for a checkpoint.
    checkpoints.committed(CHECKPOINT_EVERY_CHARS * 2);
    expect(checkpoints.running).toBe(false);
    checkpoints.stop(1_000);
  });
});
