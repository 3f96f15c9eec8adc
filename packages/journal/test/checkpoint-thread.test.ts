import { afterEach, describe, expect, it, vi } from "vitest";
import { Checkpoints } from "../src/checkpoint-thread.js";
import { Journal } from "../src/index.js";
import { completeCall, openSession, temporaryFolderPerTest } from "./helpers.js";

const folder = temporaryFolderPerTest();
// The module the built worker is looked for beside (`../dist/` from the sources).
const here = new URL("../src/checkpoint-thread.ts", import.meta.url).href;
const CHECKPOINT_EVERY_CHARS = 4 << 20;

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("checkpoint thread (A3)", () => {
  it("A3 when \"auto\" hands commits to the commit thread, the writer's checkpoint thread is retired, not waited for; close still waits for it, and the journal verifies", async () => {
    // Spies on this thread's Checkpoints only (the commit thread has its own module).
    const retire = vi.spyOn(Checkpoints.prototype, "retire");
    const stop = vi.spyOn(Checkpoints.prototype, "stop");
    const journal = Journal.open({ path: folder.file("auto.db"), commitThreadShare: 0.02 });
    let closed = false;
    try {
      for (let index = 0; index < 32; index += 1) openSession(journal, `s${index}`);
      // Load until the thread starts (two busy 100 ms windows of three; a busy machine stretches them).
      const deadline = performance.now() + 20_000;
      for (let round = 0; journal.commits !== "thread" && performance.now() < deadline; round += 1) {
        await Promise.all(Array.from({ length: 32 }, async (_, index) => {
          for (let call = 0; call < 20; call += 1) await completeCall(journal, `s${index}`, `r${round}c${call}`);
        }));
      }
      expect(journal.commits).toBe("thread");
      expect(retire).toHaveBeenCalledTimes(1);
      // A blocking stop() here held the writer's event loop for up to a whole checkpoint.
      expect(stop).not.toHaveBeenCalled();
      await journal.flush();
      journal.close();
      closed = true;
      expect(stop).toHaveBeenCalled();
      const reader = Journal.open({ path: folder.file("auto.db"), readonly: true });
      try {
        expect(reader.verify().ok).toBe(true);
      } finally {
        reader.close();
      }
    } finally {
      if (!closed) journal.close();
    }
  });

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
