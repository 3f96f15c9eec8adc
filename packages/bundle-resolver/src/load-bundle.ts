import { stat } from "node:fs/promises";
import path from "node:path";
import { readConfigFile, type ConfigFileContents } from "@openworker/registry/internal";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { BUNDLE_ERROR_CODES as CODES } from "./codes.js";
import { parseManifest, type Manifest } from "./manifest.js";
import { problemsOf } from "./problems.js";
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
  // Both files are read and parsed even when the first fails, so a bundle with problems in
  // both reports them together (`tools check` lists every one).
  const manifestPart = await attempt(async () => {
    const contents = await readBundleFile(manifestFile, CODES.manifestMissing);
    return { contents, manifest: parseManifest(contents.text, manifestFile) };
  });
  const toolsPart = await attempt(async () => {
    const contents = await readBundleFile(toolsFile, CODES.toolsJsonMissing);
    return { contents, selection: parseToolsJson(contents.text, toolsFile) };
  });
  if ("value" in manifestPart && "value" in toolsPart) {
    return Object.freeze({
      dir: folder,
      manifest: manifestPart.value.manifest,
      selection: toolsPart.value.selection,
      manifestBytes: manifestPart.value.contents.bytes,
      toolsJsonBytes: toolsPart.value.contents.bytes,
    });
  }
  throw bundleProblems(manifestPart, toolsPart);
}

type Attempt<T> = { readonly value: T } | { readonly error: OpenWorkerError };

async function attempt<T>(read: () => Promise<T>): Promise<Attempt<T>> {
  try {
    return { value: await read() };
  } catch (error) {
    if (!OpenWorkerError.isInstance(error)) throw error;
    return { error };
  }
}

/**
 * The bundle's first problem, counting the others, with every problem of both files in
 * `details.problems` and, when tools.json parsed (or partly), `details.selection`: what
 * `tools check` resolves to report the rest (see tools.json's own entry problems).
 */
function bundleProblems(manifest: Attempt<unknown>, tools: Attempt<{ selection: BundleSelection }>): OpenWorkerError {
  const toolsProblems = "error" in tools ? problemsOf(tools.error) : [];
  const selection = "value" in tools ? tools.value.selection : (tools.error.details.selection as BundleSelection | undefined);
  if (!("error" in manifest)) return (tools as { error: OpenWorkerError }).error;
  const problems = [manifest.error, ...toolsProblems];
  const more = toolsProblems.length === 0 ? "" : ` (and ${toolsProblems.length} more problem${toolsProblems.length === 1 ? "" : "s"} in tools.json)`;
  return new OpenWorkerError(manifest.error.code, `${manifest.error.message}${more}`, {
    cause: manifest.error.cause,
    details: { ...manifest.error.details, problems: Object.freeze(problems), ...(selection === undefined ? {} : { selection }) },
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
  const own = (await kindOf(path.join(dir, BUNDLE_FILES.manifest))) !== "missing" || (await kindOf(path.join(dir, BUNDLE_FILES.tools))) !== "missing";
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
      throw new OpenWorkerError(missingCode, `${file}: missing; a bundle folder holds both manifest.md and tools.json: add the missing file`, {
        cause: error,
        details: { file },
      });
    }
    throw error;
  }
}
