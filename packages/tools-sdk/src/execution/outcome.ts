import type { JsonValue } from "../json.js";
import type { ToolImage } from "../output.js";

/** How a call ended: exactly one terminal outcome per started call (A3). */
export type CallOutcome = "succeeded" | "failed" | "timed_out" | "cancelled" | "limit_exceeded" | "crashed";

/** Which limit a call broke. */
export type LimitName = "resultBytes" | "progressEvents" | "progressMessageBytes" | "progressJsonBytes" | "imagesPerCall" | "imageBytes" | "imageMimeType";

/** A limit breach: which limit, by how much, in words. */
export interface LimitBreach {
  readonly limit: LimitName;
  readonly actual: number;
  readonly max: number;
  readonly message: string;
}

/** A successful result after normalization (T3, E3): JSON, the derived text, and images. */
export interface NormalizedOutput {
  readonly json: JsonValue;
  /** The text representation the model pipeline sees, derived by the runtime. */
  readonly text: string;
  /** UTF-8 bytes of the serialized JSON. */
  readonly bytes: number;
  readonly images: readonly ToolImage[];
  /**
   * Audio clips an MCP result carried (M7): ephemeral attachments like images (T4), never
   * given to the model nor journaled; the JSON keeps a reference, size and digest of each.
   * Absent for native tools.
   */
  readonly audio?: readonly AudioAttachment[];
}

/** The bytes of one audio clip of a result, for a host that delivers them (never the model). */
export interface AudioAttachment {
  readonly mimeType: string;
  readonly data: Uint8Array;
}

/** A coded error as the journal and the model see it. */
export interface CallError {
  readonly code: string;
  readonly message: string;
}
