import { defineTool, type Tool, type ToolImage, ToolError } from "@openworker/tools-sdk";
import { Type } from "typebox";

/** What the user allowed, per session: access to the team's diagram folder, until a deadline. */
export class DiagramConsent {
  readonly #until = new Map<string, number>();

  grant(sessionId: string, forMs: number): void {
    this.#until.set(sessionId, Date.now() + forMs);
  }

  allowed(sessionId: string): boolean {
    return (this.#until.get(sessionId) ?? 0) > Date.now();
  }

  revoke(sessionId: string): void {
    this.#until.delete(sessionId);
  }
}

/** `glossary.diagram`: the diagram drawn for a term, as an image the model can look at. */
export function createDiagramTool(diagrams: ReadonlyMap<string, Uint8Array>, consent: DiagramConsent): Tool {
  return defineTool({
    name: "glossary.diagram",
    description: "Show the diagram drawn for a glossary term. Needs the user's permission in this session.",
    version: "1.0.0",
    inputSchema: Type.Object({ term: Type.String({ minLength: 1, maxLength: 80 }) }, { additionalProperties: false }),
    // Live facts for the model: synchronous, tiny, no I/O; never pixels, paths or tokens.
    modelContext: (sessionId) => ({ diagramAccess: consent.allowed(sessionId) ? "granted" : "not granted: ask the user" }),
    call(args, context) {
      if (!consent.allowed(context.sessionId)) {
        return new ToolError("CONSENT_REQUIRED", "the user has not allowed diagram access in this session; ask them");
      }
      const png = diagrams.get(args.term);
      if (!png) return new ToolError("NO_DIAGRAM", `no diagram is drawn for "${args.term}"`);
      const image: ToolImage = {
        mimeType: "image/png",
        data: png,
        description: `diagram of "${args.term}"`,
        // Asked again right before the model receives the image: the user may have withdrawn access.
        recheckConsent: () => consent.allowed(context.sessionId),
      };
      return { json: { term: args.term, bytes: png.byteLength }, images: [image] };
    },
    // A clarifying question that completed keeps the access the user just granted; anything else drops it.
    turnFinished: (sessionId, completed) => {
      if (!completed) consent.revoke(sessionId);
    },
    revoke: (sessionId) => consent.revoke(sessionId),
  });
}
