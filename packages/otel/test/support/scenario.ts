import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { ToolRegistry } from "@openworker/registry";
import { Runtime, type ModelProvider, type ModelRequest, type ModelResponse, type Session } from "@openworker/runtime";
import { ScriptedProvider, type ScriptStep } from "@openworker/runtime/testing";
import type { Tool } from "@openworker/tools-sdk";

/** Secrets and private facts planted in the scenario: none may reach the collector (E6, L2). */
export const CANARIES = Object.freeze({
  /** In the host's environment under a secret-looking name; the lookup tool returns it. */
  envSecret: "env-canary-7f3a91c2d8e4",
  /** The model provider's API key; the model echoes it in a call's arguments. */
  apiKey: "sk-canary-api-4c1e9b77a0f3",
  /** The MCP provider's configured credential; its server returns it in a result. */
  mcpCredential: "mcp-canary-cred-2b8d60e1",
  /** A `modelContext` fact (L2): transient instruction context for the model only. */
  fact: "fact-canary-ward-5-bed-12",
  /** Who approved: a person's address, journaled but not exported. */
  approver: "ana.fisher@example.org",
});

export const ENV_SECRET_NAME = "OW_OTEL_CANARY_TOKEN";
const probeServer = path.resolve(import.meta.dirname, "../fixtures/probe-server.mjs");

/** The host's OpenTelemetry SDK, exporting over OTLP/HTTP (JSON) to `url`. */
export function otelSdk(url: string): { tracerProvider: TracerProvider; meterProvider: MeterProvider; flush(): Promise<void>; shutdown(): Promise<void> } {
  const tracerProvider = new TracerProvider({ spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: `${url}/v1/traces` }) })] });
  const meterProvider = new MeterProvider({
    // Exported when the test flushes, not on a timer.
    readers: [new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter({ url: `${url}/v1/metrics` }), exportIntervalMillis: 3_600_000 })],
  });
  return {
    tracerProvider,
    meterProvider,
    flush: async () => {
      await tracerProvider.forceFlush();
      await meterProvider.forceFlush();
    },
    shutdown: async () => {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
}

/** A scripted model that says it used tokens, with an API key for the runtime to redact. */
class MeteredModel implements ModelProvider {
  readonly id = "scripted";
  readonly defaultModel = "scripted-1";
  readonly script: ScriptedProvider;

  constructor(steps: readonly ScriptStep[]) {
    this.script = new ScriptedProvider(steps, { whenExhausted: "fail" });
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const response = await this.script.complete(request);
    return { ...response, usage: { inputTokens: 120, outputTokens: 30 } };
  }

  listModels() {
    return this.script.listModels();
  }

  secrets(): readonly string[] {
    return [CANARIES.apiKey];
  }
}

function nativeTool(name: string, call: Tool["call"], schema: object, extra: Partial<Tool> = {}): Tool {
  const descriptor = { name, description: `Test tool ${name}.`, inputSchema: schema, version: "1" };
  return { descriptor: () => descriptor, call, ...extra } as Tool;
}

/** The scenario's runtime and session, and how to end them. */
export interface Scenario {
  readonly runtime: Runtime;
  readonly session: Session;
  readonly model: ScriptedProvider;
  close(): Promise<void>;
}

/**
 * A runtime with native tools (`desk.lookup`, approved by a person and holding a
 * `modelContext` fact; `desk.erase`, which the person denies; `desk.export`, whose result
 * breaks the 256 KB bound, E3) and MCP tools (`probe.status`, allowed by the policy;
 * `gone.status`, whose provider exits at start). Its session's first turn runs, in one
 * answer, the MCP call, the lookup, a lookup with invalid arguments and the erase, then in
 * a second answer the export, which stops the turn.
 */
export async function openScenario(): Promise<Scenario> {
  const dir = mkdtempSync(path.join(tmpdir(), "ow-otel-"));
  process.env[ENV_SECRET_NAME] = CANARIES.envSecret;
  const registry = new ToolRegistry();
  registry.register(
    nativeTool(
      "desk.lookup",
      async () => ({ json: { found: true, badge: process.env[ENV_SECRET_NAME] ?? null } }),
      { type: "object", properties: { query: { type: "string" } }, required: ["query"] },
      {
        modelContext: () => ({ ward: CANARIES.fact }),
      },
    ),
  );
  registry.register(nativeTool("desk.erase", async () => ({ json: { erased: true } }), { type: "object", properties: {} }));
  registry.register(nativeTool("desk.export", async () => ({ json: { blob: "x".repeat(300 * 1024) } }), { type: "object", properties: {} }));
  registry.registerMcp({ namespace: "probe", program: process.execPath, args: [probeServer], env: { PROBE_API_KEY: CANARIES.mcpCredential } });
  registry.registerMcp({ namespace: "gone", program: process.execPath, args: [probeServer], env: { PROBE_DOWN: "1" } });
  const model = new MeteredModel([
    {
      toolCalls: [
        { name: "probe__status", arguments: {} },
        { name: "desk__lookup", arguments: { query: `badge of the key ${CANARIES.apiKey}` } },
        { name: "desk__lookup", arguments: { query: 5 } },
        { name: "desk__erase", arguments: {} },
      ],
    },
    { toolCalls: [{ name: "desk__export", arguments: {} }] },
  ]);
  const hostEntry = path.join(dir, "host.js");
  writeFileSync(hostEntry, "// host\n");
  const runtime = await Runtime.openWithRegistry(registry, {
    workspace: dir,
    journal: { path: path.join(dir, "journal.db") },
    hostEntry,
    models: [model],
    approver: (request) =>
      request.qualifiedName === "desk.erase"
        ? { approved: false, who: CANARIES.approver, reason: "not on a Friday" }
        : { approved: true, who: CANARIES.approver },
  });
  const bundle = path.join(dir, "bundle");
  mkdirSync(bundle);
  writeFileSync(path.join(bundle, "manifest.md"), "---\nname: Front desk\n---\nYou help at the front desk.\n");
  writeFileSync(
    path.join(bundle, "tools.json"),
    JSON.stringify({ version: 3, tools: ["desk.lookup", "desk.erase", "desk.export", "probe.status", "gone.status"] }),
  );
  const session = await runtime.openSession({
    bundle,
    policy: { name: "desk-policy", classifications: { "probe.status": "harmless", "desk.export": "harmless" }, rules: { harmless: "allow" } },
  });
  return {
    runtime,
    session,
    model: model.script,
    close: async () => {
      try {
        await runtime.close();
      } finally {
        delete process.env[ENV_SECRET_NAME];
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
