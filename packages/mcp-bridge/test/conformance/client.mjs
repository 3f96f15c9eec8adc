// The bridge as an MCP client under the official conformance suite's client scenarios:
// `conformance client --command "node client.mjs" --scenario NAME` starts a scenario's
// server, then this program with the server's URL as its last argument, the scenario's
// name in MCP_CONFORMANCE_SCENARIO and its context (pre-registered client credentials)
// in MCP_CONFORMANCE_CONTEXT. It discovers the server's tools through the bridge and
// calls each one with arguments made from its input schema, authorizing as a host
// would: tokens in memory, the authorization server's redirect followed at once (the
// suite's authorization servers grant without a person), each form a server asks for
// accepted as shown.
import { McpBridge } from "../../dist/index.js";

const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}");
const entries = new Map();
const keyOf = (key) => `${key.namespace} ${key.resource}`;
const store = {
  load: async (key) => entries.get(keyOf(key)),
  save: async (key, value) => void entries.set(keyOf(key), value),
  delete: async (key) => void entries.delete(keyOf(key)),
};
const REDIRECT = "http://127.0.0.1:3333/callback";

// The host's configuration for the scenario, as a host's servers.json would say it.
const oauth = {};
if (typeof context.client_id === "string") oauth.clientId = context.client_id;
if (typeof context.client_secret === "string") {
  process.env.CONFORMANCE_CLIENT_SECRET = context.client_secret;
  oauth.clientSecretEnv = "CONFORMANCE_CLIENT_SECRET";
}
if (scenario.startsWith("auth/client-credentials")) oauth.grant = "client_credentials";
if (scenario === "auth/basic-cimd") oauth.clientMetadataUrl = "https://conformance-test.local/client-metadata.json";

const bridge = new McpBridge([{ transport: "streamable_http", namespace: "conformance", url, oauth }], {
  connectTimeoutMs: 20_000,
  elicitation: true,
  authorization: {
    store,
    redirectUrl: async () => REDIRECT,
    authorize: async ({ authorizationUrl }) => {
      const answer = await fetch(authorizationUrl, { redirect: "manual" });
      const location = answer.headers.get("location");
      if (location === null) throw new Error(`the authorization server answered ${answer.status} without a redirect`);
      return new URL(location, authorizationUrl);
    },
  },
});

/** Arguments for a tool from its input schema: a value of each simple property's type. */
function argumentsFor(schema) {
  const args = {};
  for (const [name, property] of Object.entries(schema?.properties ?? {})) {
    const type = Array.isArray(property?.type) ? property.type[0] : property?.type;
    if (property?.default !== undefined) args[name] = property.default;
    else if (type === "number" || type === "integer") args[name] = 1;
    else if (type === "string") args[name] = Array.isArray(property.enum) ? property.enum[0] : "test";
    else if (type === "boolean") args[name] = true;
  }
  return args;
}

let failed = false;
try {
  const session = bridge.openSession("conformance");
  const { catalogs, unavailable } = await session.discover(["conformance"]);
  for (const problem of unavailable) {
    console.error(`unavailable: ${problem.code}: ${problem.message}`);
    failed = true;
  }
  for (const tool of catalogs[0]?.tools ?? []) {
    // A host whose user accepts each form as shown, its defaults pre-filled.
    const result = await session.callTool("conformance", tool.name, argumentsFor(tool.inputSchema), { onElicitation: async () => ({ action: "accept" }) });
    console.log(`${tool.name}: ${result.outcome}${result.error ? ` ${result.error.code}: ${result.error.message}` : ""}`);
  }
  await session.close();
} catch (error) {
  console.error(error);
  failed = true;
} finally {
  await bridge.dispose();
}
process.exit(failed ? 1 : 0);
