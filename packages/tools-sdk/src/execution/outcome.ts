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
}

/** A coded error as the journal and the model see it. */
export interface CallError {
  readonly code: string;
  readonly message: string;
}
