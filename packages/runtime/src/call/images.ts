import type { ToolImage } from "@openworker/tools-sdk";
import { sha256Hex } from "@openworker/tools-sdk/validation";
import type { ModelImage } from "../model/types.js";

/** An image waiting for delivery to the model, held in memory only (T4). */
export interface PendingImage {
  readonly image: ToolImage;
  /** `sha256:<hex>` of the bytes: what the journal keeps instead of the image. */
  readonly digest: string;
}

/** Digests images for the journal and keeps the bytes for delivery only. */
export function holdImages(images: readonly ToolImage[]): PendingImage[] {
  return images.map((image) => ({ image, digest: `sha256:${sha256Hex(image.data)}` }));
}

/**
 * Rechecks each image's consent right before delivery (T4). A refused or failing check
 * withholds the image; the returned notes tell the model what was withheld and why.
 */
export async function releaseImages(pending: readonly PendingImage[]): Promise<{ images: ModelImage[]; notes: string[] }> {
  const images: ModelImage[] = [];
  const notes: string[] = [];
  for (const { image, digest } of pending) {
    let consented = true;
    if (image.recheckConsent) {
      try {
        consented = (await image.recheckConsent()) === true;
      } catch {
        consented = false;
      }
    }
    if (consented) {
      images.push({ mimeType: image.mimeType, data: image.data, ...(image.description ? { description: image.description } : {}) });
    } else {
      notes.push(`[image withheld: the user's consent could not be confirmed right before delivery (${image.description ?? digest.slice(0, 19)})]`);
    }
  }
  return { images, notes };
}
