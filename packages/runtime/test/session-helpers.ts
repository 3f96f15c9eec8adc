import type { Runtime } from "../src/index.js";
import { openRuntime, scratchEach } from "./support/harness.js";

/**
 * The session tests' fixture: a fresh scratch folder for each test (`space.dir`), and `open`,
 * which opens a runtime there as `openRuntime` does and closes it after the test. A test that
 * opens a runtime some other way pushes it onto `runtimes` to have it closed too.
 */
export function runtimesEach(): {
  space: { readonly dir: string };
  runtimes: Runtime[];
  open: (...args: Parameters<typeof openRuntime>) => Promise<Runtime>;
} {
  const runtimes: Runtime[] = [];
  const space = scratchEach(async () => {
    for (const runtime of runtimes.splice(0)) await runtime.close();
  });

  async function open(...args: Parameters<typeof openRuntime>): Promise<Runtime> {
    const runtime = await openRuntime(...args);
    runtimes.push(runtime);
    return runtime;
  }

  return { space, runtimes, open };
}
