// The runnable entry (dist/server.js): serves the acer tools over stdio until stdin closes,
// to clients of protocol 2026-07-28 and of the 2025 revisions alike.
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { createAcerServer } from "./acer-server.js";

serveStdio(() => createAcerServer());
