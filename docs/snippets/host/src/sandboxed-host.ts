#!/usr/bin/env node
import { mainWithRegistry } from "@openworker/cli";
import { createRegistry } from "./registry.js";

// The stock CLI, with every sandbox-placed MCP provider started by this host's own bwrap command line.
await mainWithRegistry(createRegistry(), {
  sandbox: ({ program, args, env }) => ({
    program: "bwrap",
    args: ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--unshare-all", "--die-with-parent", "--", program, ...args],
    env,
  }),
});
