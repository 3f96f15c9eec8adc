import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { afterAll } from "vitest";
import type { McpProviderDefinition } from "@openworker/registry";
import type { McpAuthorizationOptions, McpTokenStore } from "../src/index.js";
import { fixture } from "./helpers.js";
import { followAuthorization } from "./oauth-browser.js";

const services: ChildProcess[] = [];
afterAll(() => {
  for (const service of services) service.kill();
});

/** Starts the OAuth-protected service and its authorization server (test/fixtures/oauth-service.mjs, its settings in `env`). */
export async function startService(env: Record<string, string> = {}): Promise<{ mcp: string; issuer: string }> {
  const service = spawn(process.execPath, [fixture("oauth-service.mjs")], { stdio: ["ignore", "pipe", "ignore"], env: { ...process.env, ...env } });
  services.push(service);
  return JSON.parse(await new Promise<string>((resolve) => createInterface({ input: service.stdout! }).once("line", resolve))) as {
    mcp: string;
    issuer: string;
  };
}

export const REDIRECT = "http://127.0.0.1:7/callback";

/** The host's step, as a headless user agent; counts how often it ran. */
export function hostStep(store: McpTokenStore): McpAuthorizationOptions & { readonly runs: URL[] } {
  const runs: URL[] = [];
  return {
    store,
    redirectUrl: async () => REDIRECT,
    authorize: async ({ authorizationUrl }) => {
      runs.push(authorizationUrl);
      return followAuthorization(authorizationUrl, REDIRECT);
    },
    runs,
  };
}

/** The service as a provider named `notes`. */
export const notes = (url: string, extra: Partial<McpProviderDefinition> = {}): McpProviderDefinition =>
  ({ transport: "streamable_http", namespace: "notes", url, ...extra }) as McpProviderDefinition;
