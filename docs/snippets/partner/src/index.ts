import type { ToolRegistrar } from "@openworker/tools-sdk";
import { createDiagramTool, DiagramConsent } from "./diagram.js";
import type { Glossary } from "./glossary.js";
import { createLookupTool } from "./lookup.js";

export { createDiagramTool, DiagramConsent } from "./diagram.js";
export { memoryGlossary, type Entry, type Glossary } from "./glossary.js";
export { createLookupTool } from "./lookup.js";

export interface GlossaryToolsOptions {
  readonly glossary: Glossary;
  readonly diagrams?: ReadonlyMap<string, Uint8Array>;
  readonly consent?: DiagramConsent;
}

/** Registers `glossary.lookup` and `glossary.diagram` into a host's registry. */
export function register(registry: ToolRegistrar, options: GlossaryToolsOptions): void {
  registry.register(createLookupTool(options.glossary));
  registry.register(createDiagramTool(options.diagrams ?? new Map(), options.consent ?? new DiagramConsent()));
}
