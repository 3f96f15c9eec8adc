#!/usr/bin/env node
import { mainWithRegistry } from "@openworker/cli";
import { createRegistry } from "./registry.js";

// The stock CLI (tools, call, run, serve, journal) over exactly this host's tools.
await mainWithRegistry(createRegistry());
