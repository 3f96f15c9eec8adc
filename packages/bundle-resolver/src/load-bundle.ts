import { stat } from "node:fs/promises";
import path from "node:path";
import { readConfigFile, type ConfigFileContents } from "@openworker/registry";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { BUNDLE_ERROR_CODES as CODES } from "./codes.js";
import { parseManifest, type Manifest } from "./manifest.js";
import { parseToolsJson, type BundleSelection } from "./tools-json.js";

/**
 * A loaded coworker bundle (B1): what it says, and the exact bytes an execution identity pins (A2).
 *
 * @example
 * ```ts
 * const bundle: Bundle = await loadBundle("./app");
 * bundle.manifest.name;
 * ```
 */
export interface Bundle {
  /** Absolute path of the folder holding `manifest.md` and `tools.json`. */
  readonly dir: string;
  readonly manifest: Manifest;
  readonly selection: BundleSelection;
  readonly manifestBytes: Uint8Array;
  readonly toolsJsonBytes: Uint8Array;
}

/**
 * File names inside a bundle folder.
 *
 * @example
 * ```ts
 * path.join(appDir, BUNDLE_FILES.folder, BUNDLE_FILES.tools); // app/coworker/tools.json
 * ```
 */
export const BUNDLE_FILES = Object.freeze({ folder: "coworker", manifest: "manifest.md", tools: "tools.json" });

/**
 * Loads a coworker bundle (B1, B6). `dir` is the folder holding `manifest.md` and
 * `tools.json`, or its parent holding a `coworker/` folder. Both files must exist,
 * be regular files of at most 1 MiB and be UTF-8 (a BOM is fine).
 *
 * @example
 * ```ts
 * const bundle = await loadBundle("./my-app"); // reads my-app/coworker/{manifest.md,tools.json}
 * bundle.selection.version; // 3
 * ```
 */
export async function loadBundle(dir: string): Promise<Bundle> {
  const folder = await bundleFolder(path.resolve(dir));
  const manifestFile = path.join(folder, BUNDLE_FILES.manifest);
  const toolsFile = path.join(folder, BUNDLE_FILES.tools);
  const manifestContents = await readBundleFile(manifestFile, CODES.manifestMissing);
  const toolsContents = await readBundleFile(toolsFile, CODES.toolsJsonMissing);
  return Object.freeze({
    dir: folder,
    manifest: parseManifest(manifestContents.text, manifestFile),
    selection: parseToolsJson(toolsContents.text, toolsFile),
    manifestBytes: manifestContents.bytes,
    toolsJsonBytes: toolsContents.bytes,
  });
}

async function bundleFolder(dir: string): Promise<string> {
  const kind = await kindOf(dir);
  if (kind !== "directory") {
    throw new OpenWorkerError(
      CODES.bundleNotFound,
      `${dir}: ${kind === "missing" ? "does not exist" : "is not a folder"}; pass the bundle folder (with manifest.md and tools.json) or its parent`,
      { details: { dir } },
    );
  }
  const own =
    (await kindOf(path.join(dir, BUNDLE_FILES.manifest))) !== "missing" ||
    (await kindOf(path.join(dir, BUNDLE_FILES.tools))) !== "missing";
  if (own) return dir;
  const nested = path.join(dir, BUNDLE_FILES.folder);
  if ((await kindOf(nested)) === "directory") return nested;
  throw new OpenWorkerError(
    CODES.bundleNotFound,
    `${dir}: holds neither ${BUNDLE_FILES.manifest}/${BUNDLE_FILES.tools} nor a ${BUNDLE_FILES.folder}/ folder with them`,
    { details: { dir } },
  );
}

async function kindOf(file: string): Promise<"missing" | "directory" | "other"> {
  try {
    return (await stat(file)).isDirectory() ? "directory" : "other";
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" || (error as NodeJS.ErrnoException).code === "ENOTDIR") {
      return "missing";
    }
    return "other";
  }
}

async function readBundleFile(file: string, missingCode: string): Promise<ConfigFileContents> {
  try {
    return await readConfigFile(file, { codePrefix: "BUNDLE_FILE" });
  } catch (error) {
    if (OpenWorkerError.hasCode(error, "BUNDLE_FILE_NOT_FOUND")) {
      throw new OpenWorkerError(missingCode, `${file}: missing; a bundle needs both manifest.md and tools.json (B1)`, {
        cause: error,
        details: { file },
      });
    }
    throw error;
  }
}
