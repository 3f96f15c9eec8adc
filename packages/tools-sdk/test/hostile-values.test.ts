import { describe, expect, it } from "vitest";
import { executeTool, gatherModelContext } from "../src/execution/index.js";
import { LIMITS, snapshotDescriptor, ToolError, type Tool } from "../src/index.js";
import { captureError, runTool } from "../src/testing/index.js";
import { hostileTool, options, png, throwingProxy } from "./hostile-helpers.js";

// Values a tool hands the call boundary that misbehave when read: throwing getters, getters
// that answer differently the second time, Proxies, forged ToolErrors. Each becomes a coded
// outcome; none makes executeTool, runTool, gatherModelContext or report throw.

const TOOL_ERROR_BRAND = Symbol.for("openworker.tool-error");

describe("hostile values at the call boundary", () => {
  it("E4 a result whose json or images getter throws is a RESULT_INVALID crash naming the tool", async () => {
    const json = await executeTool(
      hostileTool(async () => ({
        get json() {
          throw new Error("json getter");
        },
      })),
      {},
      options,
    );
    expect(json.outcome).toBe("crashed");
    expect(json.error?.code).toBe("RESULT_INVALID");
    expect(json.error?.message).toBe(`tool "hostile.tool": reading the result's json threw Error: json getter`);
    const images = await executeTool(
      hostileTool(async () => ({
        json: 1,
        get images() {
          throw new Error("images getter");
        },
      })),
      {},
      options,
    );
    expect(images.outcome).toBe("crashed");
    expect(images.error).toEqual({ code: "RESULT_INVALID", message: `tool "hostile.tool": reading the result's images threw Error: images getter` });
  });

  it("E3 a getter inside the JSON that throws is RESULT_NOT_JSON, with where it is", async () => {
    const result = await executeTool(
      hostileTool(async () => ({
        json: {
          list: [
            {
              get a() {
                throw new Error("inner getter");
              },
            },
          ],
        },
      })),
      {},
      options,
    );
    expect(result.outcome).toBe("crashed");
    expect(result.error?.code).toBe("RESULT_NOT_JSON");
    expect(result.error?.message).toBe(`tool "hostile.tool": result is not JSON: at /list/0/a could not be read (Error: inner getter)`);
  });

  it("E3 a getter that answers differently on a second read: the checked snapshot is what comes out", async () => {
    let reads = 0;
    const original = {
      get a() {
        return reads++ === 0 ? 1 : 10n;
      },
    };
    const result = await executeTool(
      hostileTool(async () => ({ json: original })),
      {},
      options,
    );
    expect(result.outcome).toBe("succeeded");
    expect(reads).toBe(1);
    expect(result.output?.json).toEqual({ a: 1 });
    // Not `.not.toBe(original)`: its failure message would read the getter.
    expect(result.output?.json === original).toBe(false);
    // The output is plain data: reading it again reads no getter of the tool's.
    expect((result.output!.json as { a: unknown }).a).toBe(1);
    expect(result.output?.text).toBe('{"a":1}');
    expect(reads).toBe(1);
  });

  it("E3 the normalized result is a copy: changing the tool's object afterwards changes nothing", async () => {
    const original: { list: number[]; __proto__?: unknown } = JSON.parse('{"list":[1,2],"__proto__":{"kept":true}}');
    const result = await executeTool(
      hostileTool(async () => ({ json: original })),
      {},
      options,
    );
    original.list.push(3);
    expect(result.output?.json).toEqual(JSON.parse('{"list":[1,2],"__proto__":{"kept":true}}'));
    // An own "__proto__" key stays a key: the copy's prototype is untouched.
    expect(Object.getPrototypeOf(result.output?.json)).toBe(Object.prototype);
    expect(result.output?.text).toBe('{"list":[1,2],"__proto__":{"kept":true}}');
  });

  it("E3 a result of many megabytes of strings is a breach found without serializing it", async () => {
    const blob = "z".repeat(8 * 1024 * 1024);
    const result = await executeTool(
      hostileTool(async () => ({ json: { a: blob, b: blob } })),
      {},
      options,
    );
    expect(result.outcome).toBe("limit_exceeded");
    expect(result.breach).toMatchObject({ limit: "resultBytes", actual: 16 * 1024 * 1024 + 2, max: LIMITS.resultBytes });
    expect(result.breach?.message).toContain("characters in its strings and keys alone");
  });

  it("E4 a Proxy result, or a Proxy inside the JSON, whose traps throw is a coded crash", async () => {
    const outer = await executeTool(
      hostileTool(async () => throwingProxy({ json: 1 }, { thenable: false })),
      {},
      options,
    );
    expect(outer.outcome).toBe("crashed");
    expect(outer.error).toEqual({ code: "RESULT_INVALID", message: `tool "hostile.tool": reading the result's json threw Error: trap` });
    // Resolving the tool's Promise reads `then` first: that throw rejects the call itself.
    const rejected = await executeTool(
      hostileTool(async () => throwingProxy({ json: 1 })),
      {},
      options,
    );
    expect(rejected.error).toEqual({ code: "TOOL_CRASHED", message: `tool "hostile.tool" threw Error: trap` });
    const inner = await executeTool(
      hostileTool(async () => ({ json: { nested: throwingProxy() } })),
      {},
      options,
    );
    expect(inner.outcome).toBe("crashed");
    expect(inner.error?.code).toBe("RESULT_NOT_JSON");
    expect(inner.error?.message).toContain("at /nested could not be read (Error: trap)");
    const array = await executeTool(
      hostileTool(async () => ({ json: new Proxy([1, 2], { get: (target, key) => (key === "length" ? {} : Reflect.get(target, key)) }) })),
      {},
      options,
    );
    expect(array.error?.code).toBe("RESULT_NOT_JSON");
    expect(array.error?.message).toContain("is an array whose length is an object");
  });

  it("E4 a thrown Proxy, or an Error whose message is a Symbol or a throwing getter, is TOOL_CRASHED", async () => {
    const proxy = await executeTool(
      hostileTool(async () => {
        throw throwingProxy();
      }),
      {},
      options,
    );
    expect(proxy.outcome).toBe("crashed");
    expect(proxy.error).toEqual({ code: "TOOL_CRASHED", message: `tool "hostile.tool" threw a non-Error value (object)` });
    const symbolMessage = await executeTool(
      hostileTool(async () => {
        const error = new Error("x");
        Object.defineProperty(error, "message", { value: Symbol("s") });
        throw error;
      }),
      {},
      options,
    );
    expect(symbolMessage.error).toEqual({ code: "TOOL_CRASHED", message: `tool "hostile.tool" threw Error: (its message is a symbol, not a string)` });
    const getter = await executeTool(
      hostileTool(() => {
        const error = new TypeError("x");
        Object.defineProperty(error, "message", {
          get() {
            throw new Error("getter");
          },
        });
        throw error;
      }),
      {},
      options,
    );
    expect(getter.error).toEqual({ code: "TOOL_CRASHED", message: `tool "hostile.tool" threw TypeError: (its name or message could not be read)` });
  });

  it("T1 E4 a branded ToolError with a bad code or a message that is not a string is a crash, not a failed call", async () => {
    const forged = {
      numberCode: { [TOOL_ERROR_BRAND]: true, code: 42, message: "m" },
      hugeCode: { [TOOL_ERROR_BRAND]: true, code: "C".repeat(300_000), message: "m" },
      noCode: { [TOOL_ERROR_BRAND]: true, message: "m" },
      messageToStringThrows: {
        [TOOL_ERROR_BRAND]: true,
        code: "X",
        message: {
          toString() {
            throw new Error("toString");
          },
        },
      },
      codeGetterThrows: {
        [TOOL_ERROR_BRAND]: true,
        get code(): string {
          throw new Error("code getter");
        },
        message: "m",
      },
    };
    for (const [name, value] of Object.entries(forged)) {
      for (const how of ["returned", "threw"] as const) {
        const result = await executeTool(
          hostileTool(async () => {
            if (how === "threw") throw value;
            return value;
          }),
          {},
          options,
        );
        expect(result.outcome, `${name} ${how}`).toBe("crashed");
        expect(result.error?.code, `${name} ${how}`).toBe("TOOL_CRASHED");
        expect(result.error?.message, `${name} ${how}`).toMatch(new RegExp(`^tool "hostile.tool" ${how} a ToolError whose `));
        expect(result.error!.message.length, `${name} ${how}`).toBeLessThanOrEqual(LIMITS.errorMessageBytes);
      }
    }
    const huge = await executeTool(
      hostileTool(async () => forged.hugeCode),
      {},
      options,
    );
    expect(huge.error?.message).toContain("(300000 characters), not 1-64 characters of A-Z a-z 0-9 _ . -");
    // A genuine one whose code was changed after construction is checked the same way.
    const changed = new ToolError("FINE", "m");
    (changed as { code: unknown }).code = "has space";
    expect(
      (
        await executeTool(
          hostileTool(async () => changed),
          {},
          options,
        )
      ).error?.code,
    ).toBe("TOOL_CRASHED");
    // A branded one from another copy of the package, well formed, is still a failed call.
    const foreign = Object.assign(new Error("said no"), { [TOOL_ERROR_BRAND]: true, code: "NOPE" });
    expect(
      (
        await executeTool(
          hostileTool(async () => foreign),
          {},
          options,
        )
      ).error,
    ).toEqual({ code: "NOPE", message: "said no" });
  });

  it("T1 ToolError refuses a code that is not a string, even one that looks like a valid code once coerced", () => {
    expect(() => new ToolError(42 as unknown as string, "m")).toThrow(TypeError);
    expect(ToolError.isInstance(throwingProxy())).toBe(false);
  });

  it("T7 runTool resolves, never rejects, for every hostile value", async () => {
    const cases: Array<() => unknown> = [
      async () => ({
        get json() {
          throw new Error("g");
        },
      }),
      async () => throwingProxy({ json: 1 }),
      async () => throwingProxy({ json: 1 }, { thenable: false }),
      async () => {
        throw throwingProxy();
      },
      async () => ({ [TOOL_ERROR_BRAND]: true, code: 42, message: "m" }),
      async () => ({
        json: 1,
        images: [
          {
            data: png(),
            get mimeType() {
              throw new Error("mime getter");
            },
          },
        ],
      }),
      async () => ({ json: 1, images: throwingProxy([]) }),
      async () => ({ json: { a: throwingProxy([]) } }),
    ];
    for (const call of cases) {
      const result = await runTool(hostileTool(call), {});
      expect(result.outcome).toBe("crashed");
      expect(["TOOL_CRASHED", "RESULT_INVALID", "RESULT_NOT_JSON"]).toContain(result.error?.code);
    }
  });
});
describe("hostile modelContext facts (L1)", () => {
  const withFacts = (modelContext: unknown): Tool => hostileTool(async () => ({ json: null }), { modelContext: modelContext as Tool["modelContext"] });

  it("L1 facts with no JSON form (a function, a Symbol) contribute nothing, with the reason", () => {
    expect(
      gatherModelContext(
        withFacts(() => () => 1),
        "s",
      ),
    ).toEqual({ ok: false, reason: "modelContext facts are not JSON: a function has no JSON form" });
    expect(
      gatherModelContext(
        withFacts(() => Symbol("s")),
        "s",
      ),
    ).toEqual({ ok: false, reason: "modelContext facts are not JSON: a symbol has no JSON form" });
  });

  it("L1 a then getter, a toJSON or a Proxy that throws contributes nothing, with the reason", () => {
    const thenGetter = withFacts(() => ({
      // oxlint-disable-next-line unicorn/no-thenable -- the hostile value under test
      get then() {
        throw new Error("then getter");
      },
    }));
    expect(gatherModelContext(thenGetter, "s")).toEqual({ ok: false, reason: "modelContext facts are not JSON: then getter" });
    const toJSON = withFacts(() => ({
      toJSON() {
        throw new Error("toJSON");
      },
    }));
    expect(gatherModelContext(toJSON, "s")).toEqual({ ok: false, reason: "modelContext facts are not JSON: toJSON" });
    expect(
      gatherModelContext(
        withFacts(() => throwingProxy()),
        "s",
      ),
    ).toEqual({ ok: false, reason: "modelContext facts are not JSON: trap" });
    const thenThrowsWhenCalled = withFacts(() => ({
      // oxlint-disable-next-line unicorn/no-thenable -- the hostile value under test
      then() {
        throw new Error("then");
      },
    }));
    expect(gatherModelContext(thenThrowsWhenCalled, "s")).toMatchObject({ ok: false, reason: expect.stringContaining("synchronous") });
  });

  it("L1 a modelContext getter that throws, a hook that is not a function, or a thrown non-Error object contributes nothing", () => {
    const tool = withFacts(undefined);
    Object.defineProperty(tool, "modelContext", {
      get() {
        throw new Error("hook getter");
      },
    });
    expect(gatherModelContext(tool, "s")).toEqual({ ok: false, reason: "reading modelContext threw: hook getter" });
    expect(gatherModelContext(withFacts({}), "s")).toEqual({ ok: false, reason: "modelContext is an object, not a function" });
    const nullProto = withFacts(() => {
      throw Object.create(null);
    });
    expect(gatherModelContext(nullProto, "s")).toEqual({ ok: false, reason: "modelContext threw: a non-Error value (object)" });
  });

  it("L1 the facts are a copy: a getter that answers differently later changes nothing", () => {
    let reads = 0;
    const facts = gatherModelContext(
      withFacts(() => ({
        get battery() {
          return reads++ === 0 ? 80 : 10n;
        },
      })),
      "s",
    );
    expect(facts).toEqual({ ok: true, facts: { battery: 80 }, bytes: 14 });
    expect(reads).toBe(1);
  });
});

describe("hostile descriptors (T1)", () => {
  const withRequired = (required: unknown) => ({
    name: "example.x",
    description: "d",
    version: "1",
    inputSchema: { type: "object", properties: { q: { type: "string" } }, required },
  });

  it("T1 an array whose length is an object with a throwing valueOf is DESCRIPTOR_FAILED naming the field, not a raw error", () => {
    const throwingLength = new Proxy(["q"], {
      get(target, key, receiver) {
        if (key === "length")
          return {
            valueOf: () => {
              throw new Error("length valueOf boom");
            },
          };
        return Reflect.get(target, key, receiver);
      },
    });
    const error = captureError(() => snapshotDescriptor(withRequired(throwingLength)));
    expect(error.code).toBe("DESCRIPTOR_FAILED");
    expect(error.message).toContain('"inputSchema.required"');
    // A length that counts up on every read is refused at once, not read a million times.
    let reads = 0;
    const growing = new Proxy([], { get: (_target, key) => (key === "length" ? { valueOf: () => ++reads } : "x") });
    expect(captureError(() => snapshotDescriptor(withRequired(growing))).code).toBe("DESCRIPTOR_FAILED");
    expect(reads).toBe(0);
    for (const length of [-1, 1.5, Number.NaN, "2"]) {
      const lying = new Proxy(["q"], { get: (target, key, receiver) => (key === "length" ? length : Reflect.get(target, key, receiver)) });
      expect(captureError(() => snapshotDescriptor(withRequired(lying))).code, String(length)).toBe("DESCRIPTOR_FAILED");
    }
  });
});
