import { describe, expect, it } from "vitest";
import { executeTool } from "../src/execution/index.js";
import { LIMITS, type ToolImage } from "../src/index.js";
import { hostileTool, options, png } from "./hostile-helpers.js";

// Images a tool hands the call boundary that misbehave when read: throwing getters, getters
// that answer differently the second time, Proxies, disguised or detached bytes. Each becomes
// a coded outcome, or a checked copy that the tool can no longer change; none makes executeTool throw.

describe("hostile images (T4)", () => {
  it("T4 an image whose mimeType getter throws is RESULT_INVALID", async () => {
    const result = await executeTool(
      hostileTool(async () => ({
        json: 1,
        images: [
          {
            data: png(),
            get mimeType() {
              throw new Error("mime getter");
            },
          },
        ],
      })),
      {},
      options,
    );
    expect(result.outcome).toBe("crashed");
    expect(result.error).toEqual({ code: "RESULT_INVALID", message: `tool "hostile.tool": images[0] could not be read (Error: mime getter)` });
  });

  it("T4 each image is copied and checked once: a consent recheck that swaps the tool's bytes and type changes nothing delivered", async () => {
    const original = png();
    let calledOnOwnImage = false;
    const image: { mimeType: string; data: Uint8Array; description: string; recheckConsent(): boolean } = {
      mimeType: "image/png",
      data: original,
      description: "a chart",
      recheckConsent() {
        calledOnOwnImage = this === image;
        image.data = new Uint8Array(6 * 1024 * 1024).fill(7);
        image.mimeType = "application/x-sh";
        original.fill(0);
        return true;
      },
    };
    const result = await executeTool(
      hostileTool(async () => ({ json: "shot", images: [image] })),
      {},
      options,
    );
    expect(result.outcome).toBe("succeeded");
    const [copy] = result.output!.images;
    expect(copy).not.toBe(image);
    expect(copy!.data).not.toBe(original);
    expect(await copy!.recheckConsent!()).toBe(true);
    // The recheck ran on the tool's own image, and could not reach the copy.
    expect(calledOnOwnImage).toBe(true);
    expect(copy!.mimeType).toBe("image/png");
    expect([...copy!.data]).toEqual([...png()]);
    expect(copy!.description).toBe("a chart");
  });

  it("T4 the fields of an image are read once: a data getter cannot pass a small image and deliver a large one", async () => {
    let reads = 0;
    const result = await executeTool(
      hostileTool(async () => ({
        json: null,
        images: [
          {
            mimeType: "image/png",
            get data() {
              return reads++ === 0 ? png() : new Uint8Array(6 * 1024 * 1024);
            },
          },
        ],
      })),
      {},
      options,
    );
    expect(result.outcome).toBe("succeeded");
    expect(reads).toBe(1);
    expect(result.output!.images[0]!.data.byteLength).toBe(8);
  });

  it("T4 a Proxy, a disguised Float64Array, a lying byteLength or a detached buffer cannot pass for image bytes", async () => {
    const proxy = await executeTool(
      hostileTool(async () => ({ json: null, images: [{ mimeType: "image/png", data: new Proxy(png(), {}) }] })),
      {},
      options,
    );
    expect(proxy.error?.code).toBe("RESULT_INVALID");
    const big = new Uint8Array(LIMITS.imageBytes + 1);
    Object.defineProperty(big, "byteLength", { value: 4 });
    const lying = await executeTool(
      hostileTool(async () => ({ json: null, images: [{ mimeType: "image/png", data: big }] as ToolImage[] })),
      {},
      options,
    );
    expect(lying.outcome).toBe("limit_exceeded");
    expect(lying.breach).toMatchObject({ limit: "imageBytes", actual: LIMITS.imageBytes + 1 });
    const floats = Object.setPrototypeOf(new Float64Array(2), Uint8Array.prototype) as Uint8Array;
    const disguised = await executeTool(
      hostileTool(async () => ({ json: null, images: [{ mimeType: "image/png", data: floats }] })),
      {},
      options,
    );
    expect(disguised.error?.code).toBe("RESULT_INVALID");
    const detached = png();
    structuredClone(detached.buffer, { transfer: [detached.buffer] });
    const gone = await executeTool(
      hostileTool(async () => ({ json: null, images: [{ mimeType: "image/png", data: detached }] })),
      {},
      options,
    );
    expect(gone.error).toMatchObject({ code: "RESULT_INVALID", message: expect.stringContaining("images[0].data could not be copied") });
  });

  it("T4 a description that is not a string, or a recheckConsent that is not a function, is RESULT_INVALID", async () => {
    const description = await executeTool(
      hostileTool(async () => ({ json: null, images: [{ mimeType: "image/png", data: png(), description: {} }] })),
      {},
      options,
    );
    expect(description.error).toMatchObject({ code: "RESULT_INVALID", message: expect.stringContaining("images[0].description must be a string") });
    const recheck = await executeTool(
      hostileTool(async () => ({ json: null, images: [{ mimeType: "image/png", data: png(), recheckConsent: true }] })),
      {},
      options,
    );
    expect(recheck.error).toMatchObject({ code: "RESULT_INVALID", message: expect.stringContaining("recheckConsent must be a function") });
  });
});
