// A local npm registry for the release tests: Verdaccio on 127.0.0.1 (port 0), keeping
// its packages in STORAGE. It serves only `@openworker/*` (published by an authenticated
// user) and proxies nothing: a consumer reaches it through a scoped registry setting, so
// every other package still comes from its usual registry. Prints `{"port":N}` once it
// listens; SIGTERM closes it.
//   node registry-server.mjs STORAGE
import path from "node:path";
import { runServer } from "verdaccio";

const storage = path.resolve(process.argv[2]);
const server = await runServer({
  self_path: storage,
  storage: path.join(storage, "packages"),
  auth: { htpasswd: { file: path.join(storage, "htpasswd"), max_users: 10 } },
  uplinks: {},
  packages: {
    "@openworker/*": { access: "$all", publish: "$authenticated", unpublish: "$authenticated" },
    "**": { access: "$all", publish: "$authenticated" },
  },
  web: { enable: false },
  log: { type: "stdout", format: "json", level: "error" },
  max_body_size: "64mb",
});
server.listen(0, "127.0.0.1", () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
process.once("SIGTERM", () => {
  server.closeAllConnections?.();
  server.close(() => process.exit(0));
});
