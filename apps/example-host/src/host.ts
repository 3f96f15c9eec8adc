#!/usr/bin/env node
// The example host executable: register everything, then hand over to the stock CLI.
// `serve --stdio` re-runs this same file, so the harness child registers the same tools.
import { mainWithRegistry } from "@openworker/cli";
import { createHostRegistry } from "./registry.js";

await mainWithRegistry(createHostRegistry());
