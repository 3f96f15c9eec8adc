// The runnable entry (dist/server.js): serves the acer tools over stdio until stdin closes.
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createAcerServer } from "./acer-server.js";

const server = createAcerServer();
await server.connect(new StdioServerTransport());
