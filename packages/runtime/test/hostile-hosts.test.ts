import path from "node:path";
import { ToolRegistry } from "@openworker/registry";
import { Journal } from "@openworker/journal";
import { describe, expect, it } from "vitest";
import { isSessionId, Runtime } from "../src/index.js";
import { ScriptedProvider } from "../src/testing/index.js";
import { bypass } from "./hostile-helpers.js";
import { echo, nativeTool, openRuntime, scratchEach, writeBundle, writeHostEntry } from "./support/harness.js";

// Hostile values from hosts: arguments of host-driven calls, session and policy options,
// registrations and provider observations. Each must end in a coded outcome or a refusal
// (never a rejected turn, a hang or a dead process), as in hostile.test.ts.

let runtime: Runtime | undefined;
const space = scratchEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

describe("host-driven calls take JSON, by exact name", () => {
  it("E5 host arguments are their JSON: NaN fails the schema, toJSON cannot dodge the size bound, BigInt is invalid, undefined is {}", async () => {
    let received: unknown;
    const counter = nativeTool(
      "test.count",
      async (context, args) => {
        received = args;
        return { json: "ok" };
      },
      { schema: { type: "object", properties: { n: { type: "number" } }, additionalProperties: true } },
    );
    runtime = await openRuntime(space.dir, [counter]);
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.count"]), policy: bypass });
    expect(await session.callTool("test.count", { n: Number.NaN })).toMatchObject({ outcome: "failed", code: "ARGUMENTS_INVALID" });
    const dodging = { toJSON: () => ({}), big: "x".repeat(400 * 1024) };
    const sized = await session.callTool("test.count", dodging as never);
    expect(sized).toMatchObject({ outcome: "succeeded" });
    expect(received).toEqual({});
    expect(await session.callTool("test.count", { n: 10n } as never)).toMatchObject({ outcome: "failed", code: "ARGUMENTS_INVALID" });
    expect(await session.callTool("test.count", undefined as never)).toMatchObject({ outcome: "succeeded" });
    expect(received).toEqual({});
    const when = new Date(0);
    await session.callTool("test.count", { when } as never);
    expect(received).toEqual({ when: "1970-01-01T00:00:00.000Z" });
  });

  it("N7 a host call reaches a tool by its exact name only, not by another spelling of its alias", async () => {
    const dotted = nativeTool("test.a.b", async () => ({ json: "ran" }));
    runtime = await openRuntime(space.dir, [dotted]);
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.a.b"]), policy: bypass });
    expect(await session.callTool("test.a.b", {})).toMatchObject({ outcome: "succeeded" });
    for (const spelling of ["test.a__b", "test__a.b", "test__a__b"]) {
      const report = await session.callTool(spelling, {});
      expect(report, spelling).toMatchObject({ outcome: "failed", code: "UNKNOWN_TOOL", message: expect.stringContaining("names are exact") });
    }
  });
});

describe("runtime options and inventories", () => {
  it("openSession refuses a session id that is not one, and a call bound that is not a positive number", async () => {
    runtime = await openRuntime(space.dir, [echo]);
    const bundle = writeBundle(space.dir, ["test.echo"]);
    for (const sessionId of ["../../etc", "has space", "x".repeat(129), ""]) {
      await expect(runtime.openSession({ bundle, sessionId }), sessionId).rejects.toMatchObject({ code: "OPTIONS_INVALID" });
    }
    for (const callTimeoutMs of [Number.NaN, 0, -5]) {
      await expect(runtime.openSession({ bundle, callTimeoutMs }), String(callTimeoutMs)).rejects.toMatchObject({ code: "OPTIONS_INVALID" });
    }
    await expect(runtime.openSession({ bundle, sessionId: "ses_01J9:ok-1.2" })).resolves.toMatchObject({ id: "ses_01J9:ok-1.2" });
  });

  it("a session opened without an id gets a short random one: ses_ and 16 base64url characters, one the runtime accepts back", async () => {
    runtime = await openRuntime(space.dir, [echo]);
    const bundle = writeBundle(space.dir, ["test.echo"]);
    const ids = await Promise.all(Array.from({ length: 20 }, async () => (await runtime!.openSession({ bundle })).id));
    for (const id of ids) {
      expect(id).toMatch(/^ses_[A-Za-z0-9_-]{16}$/);
      expect(isSessionId(id)).toBe(true);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("A1 openSession checks the policy: a misspelt deny rule, an alias-form classification or an unknown mode is refused, never read as ask (which bypass approves)", async () => {
    let ran = 0;
    const pay = nativeTool("test.pay", async () => (ran++, { json: "paid" }));
    runtime = await openRuntime(space.dir, [pay]);
    const bundle = writeBundle(space.dir, ["test.pay"]);
    const refused: [unknown, string][] = [
      [{ mode: "bypass", rules: { external: "Deny" } }, 'policy: rules.external must be "ask", "allow" or "deny", got "Deny"'],
      [{ mode: "bypass", rules: { external: " deny" } }, "rules.external must be"],
      [{ mode: "bypass", classifications: { test__pay: "blocked" }, rules: { blocked: "deny" } }, '"test__pay" is not a qualified tool name (namespace.tool)'],
      [{ mode: "bypass", classifications: { "test.pay": "toString" }, rules: { external: "ask" } }, 'is "toString", which no rule names'],
      [{ mode: "yolo" }, '"mode" must be "normal" or "bypass", got "yolo"'],
      [{ rule: { external: "deny" } }, 'unknown field "rule"'],
      ["deny", "must be an object"],
    ];
    for (const [policy, message] of refused) {
      const error = await runtime.openSession({ bundle, policy: policy as never }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error, JSON.stringify(policy)).toMatchObject({ code: "OPTIONS_INVALID", message: expect.stringContaining(message) });
    }
    // A valid deny rule still denies under bypass.
    const session = await runtime.openSession({ bundle, policy: { mode: "bypass", rules: { external: "deny" } } });
    expect(await session.callTool("test.pay", {})).toMatchObject({ outcome: "denied" });
    expect(ran).toBe(0);
  });

  it("A1 a class given at registration that no rule names is refused too (a typo would fall to ask, which bypass approves)", async () => {
    const registry = new ToolRegistry();
    registry.register(
      nativeTool("test.wipe", async () => ({ json: "wiped" })),
      { classification: "destructve" },
    );
    runtime = await Runtime.openWithRegistry(registry, {
      workspace: space.dir,
      journal: { path: path.join(space.dir, "classes.db") },
      hostEntry: writeHostEntry(space.dir),
    });
    const bundle = writeBundle(space.dir, ["test.wipe"]);
    const error = await runtime.openSession({ bundle, policy: { mode: "bypass", rules: { destructive: "deny", external: "ask" } } }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({
      code: "OPTIONS_INVALID",
      message: expect.stringContaining('classifications["test.wipe"] is "destructve", which no rule names'),
    });
    // Without rules every class asks, as before.
    await expect(runtime.openSession({ bundle, policy: { mode: "bypass" } })).resolves.toBeDefined();
  });

  it("T5 closing a session that never prepared revokes every selected native tool, even beside one whose schema does not compile", async () => {
    const revoked: string[] = [];
    const mail = nativeTool("test.mail", async () => ({ json: "sent" }), { revoke: () => void revoked.push("test.mail") });
    const broken = nativeTool("test.broken", async () => ({ json: "never" }), {
      schema: { type: "object", properties: { n: { type: "nonsense" } } } as never,
      revoke: () => void revoked.push("test.broken"),
    });
    runtime = await openRuntime(space.dir, [mail, broken]);
    const session = await runtime.openSession({ bundle: writeBundle(space.dir, ["test.mail", "test.broken"]), policy: bypass });
    await session.close();
    expect(revoked.sort()).toEqual(["test.broken", "test.mail"]);
    const kinds = [...runtime.journal.exportSession(session.id)]
      .map((line) => JSON.parse(line) as { kind: string; tool?: string })
      .filter((record) => record.kind === "revoked");
    expect(kinds.map((record) => record.tool).sort()).toEqual(["test.broken", "test.mail"]);
  });

  it("I1 a readiness observation that throws reads as no observation; the catalog still lists every model", async () => {
    const model = new ScriptedProvider([]);
    Object.assign(model, {
      readModelReadiness: () => {
        throw new Error("probe exploded");
      },
    });
    runtime = await openRuntime(space.dir, [echo], { models: [model] });
    const catalog = runtime.loadModelCatalog();
    expect(catalog.length).toBeGreaterThan(0);
    for (const row of catalog) expect(runtime.readModelCatalogReadiness(row)).toBeUndefined();
  });

  it("I1 readiness travels as { accountType } only: whatever else a provider's observation carries stays behind", async () => {
    const model = new ScriptedProvider([]);
    Object.assign(model, { readModelReadiness: () => ({ accountType: "api-key", token: "sk-secret", refreshAt: 1 }) });
    runtime = await openRuntime(space.dir, [echo], { models: [model] });
    expect(runtime.readModelCatalogReadiness({ provider: "scripted", model: "scripted-1" })).toEqual({ accountType: "api-key" });
  });

  it("A1 A2 a classification given at registration applies when the policy does not classify the tool, and enters the identity", async () => {
    const registry = new ToolRegistry();
    registry.register(echo, { classification: "read_only" });
    runtime = await Runtime.openWithRegistry(registry, {
      workspace: space.dir,
      journal: { path: path.join(space.dir, "journal.db") },
      hostEntry: writeHostEntry(space.dir),
    });
    const bundle = writeBundle(space.dir, ["test.echo"]);
    const allowed = await runtime.openSession({ bundle, policy: { rules: { read_only: "allow" } } });
    expect(await allowed.callTool("test.echo", { text: "x" })).toMatchObject({ outcome: "succeeded" });
    // The policy's own classification wins over the registry's.
    const overridden = await runtime.openSession({ bundle, policy: { classifications: { "test.echo": "external" }, rules: { read_only: "allow" } } });
    expect(await overridden.callTool("test.echo", { text: "x" })).toMatchObject({ outcome: "denied" });
    expect(allowed.executionIdentity).not.toBe(overridden.executionIdentity);
  });

  it("A2 a classification given at registration for a tool the bundle does not select leaves the identity as it was (v3 and v1 bundles)", async () => {
    const identities = async (classification: string | undefined, name: string): Promise<string[]> => {
      const registry = new ToolRegistry();
      registry.register(echo);
      registry.register(
        nativeTool("test.other", async () => ({ json: "other" })),
        classification === undefined ? {} : { classification },
      );
      registry.registerMcp({ namespace: "acer", program: process.execPath, args: ["-e", ""] });
      const opened = await Runtime.openWithRegistry(registry, {
        workspace: space.dir,
        journal: { path: path.join(space.dir, `${name}.db`) },
        hostEntry: writeHostEntry(space.dir),
      });
      try {
        const v3 = await opened.openSession({ bundle: writeBundle(space.dir, ["test.echo"], "v3"), policy: { rules: { read_only: "allow" } } });
        const v1 = await opened.openSession({
          bundle: writeBundle(space.dir, '{"version":1,"mcpServers":["acer"]}', "v1"),
          policy: { rules: { read_only: "allow" } },
        });
        return [v3.executionIdentity, v1.executionIdentity];
      } finally {
        await opened.close();
      }
    };
    const plain = await identities(undefined, "plain");
    expect(await identities("read_only", "classified")).toEqual(plain);
  });

  it("N8 a journal that cannot open leaves the registry unfrozen, to fix and try again", async () => {
    const journalPath = path.join(space.dir, "locked.db");
    const holder = Journal.open({ path: journalPath });
    try {
      const registry = new ToolRegistry();
      await expect(Runtime.openWithRegistry(registry, { workspace: space.dir, journal: { path: journalPath } })).rejects.toMatchObject({
        code: "JOURNAL_LOCKED",
      });
      expect(registry.frozen).toBe(false);
      registry.register(echo);
    } finally {
      holder.close();
    }
  });
});
