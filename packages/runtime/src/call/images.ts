import type { ToolImage } from "@openworker/tools-sdk";
import { sha256Hex } from "@openworker/tools-sdk/internal/validation";
import type { ModelImage } from "../model/types.js";
import type { Redactor } from "../secrets.js";

/** An image waiting for delivery to the model, held in memory only (T4). */
export interface PendingImage {
  /** What is delivered: read once when the call finished, after the SDK's checks (bytes, type). */
  readonly image: ModelImage;
  /** The tool's consent check, run right before delivery. */
  readonly recheckConsent: ToolImage["recheckConsent"];
  /** `sha256:<hex>` of the bytes: what the journal keeps instead of the image. */
  readonly digest: string;
}

/**
 * How long an image's consent check may take right before delivery. A check that does not
 * answer in time counts as refused: the image is withheld and the attempt goes on.
 */
export const CONSENT_RECHECK_TIMEOUT_MS = 5_000;

/**
 * Digests images for the journal and keeps the bytes for delivery only. Each image's
 * fields are read here, once: what is delivered is what was checked and digested, whatever
 * the tool's image object (or its consent check) does later. A description is the tool's
 * text like its result, and reaches the model (with the image, or in the note that it was
 * withheld) and the `IMAGE_WITHHELD` event: it is redacted here, once (E6).
 */
export function holdImages(images: readonly ToolImage[], redactor: Redactor): PendingImage[] {
  return images.map((source) => {
    const description = source.description;
    const image: ModelImage =
      description === undefined
        ? { mimeType: source.mimeType, data: source.data }
        : { mimeType: source.mimeType, data: source.data, description: redactor.text(description) };
    return { image, recheckConsent: source.recheckConsent, digest: `sha256:${sha256Hex(image.data)}` };
  });
}

/** One image of a call after its consent recheck: delivered, or withheld with the note that says why. */
export type ReleasedImage = { readonly image: ModelImage } | { readonly withheld: string };

/**
 * Rechecks each image's consent right before delivery (T4). A refused, failing, slow
 * (past {@link CONSENT_RECHECK_TIMEOUT_MS}) or cancelled check withholds the image; the
 * returned notes tell the model what was withheld and why.
 */
export async function releaseImages(pending: readonly PendingImage[], signal: AbortSignal): Promise<{ images: ModelImage[]; notes: string[] }> {
  const images: ModelImage[] = [];
  const notes: string[] = [];
  for (const released of await releaseEach(pending, signal)) {
    if ("image" in released) images.push(released.image);
    else notes.push(released.withheld);
  }
  return { images, notes };
}

/** {@link releaseImages}, image by image in order: for a host that places each image where its result put it. */
export async function releaseEach(pending: readonly PendingImage[], signal: AbortSignal): Promise<ReleasedImage[]> {
  const released: ReleasedImage[] = [];
  for (const { image, recheckConsent, digest } of pending) {
    const consented = recheckConsent === undefined ? true : await confirmed(recheckConsent, signal);
    released.push(
      consented
        ? { image }
        : { withheld: `[image withheld: the user's consent could not be confirmed right before delivery (${image.description ?? digest.slice(0, 19)})]` },
    );
  }
  return released;
}

/** Whether a consent check answered exactly `true` in time; any throw, other answer, timeout or cancellation is no. */
function confirmed(check: NonNullable<ToolImage["recheckConsent"]>, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise<boolean>((resolve) => {
    const settle = (answer: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", refuse);
      resolve(answer);
    };
    const refuse = () => settle(false);
    const timer = setTimeout(refuse, CONSENT_RECHECK_TIMEOUT_MS);
    signal.addEventListener("abort", refuse, { once: true });
    try {
      Promise.resolve(check()).then(
        (answer) => settle(answer === true),
        () => settle(false),
      );
    } catch {
      settle(false);
    }
  });
}
