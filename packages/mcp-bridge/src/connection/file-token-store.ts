import { randomBytes } from "node:crypto";
import { mkdir, open, readFile, rename, rm } from "node:fs/promises";
import path from "node:path";
import { OpenWorkerError } from "@openworker/tools-sdk";
import { MCP_ERROR_CODES } from "../codes.js";
import type { McpStoredAuthorization, McpTokenKey, McpTokenStore } from "./authorization.js";

interface StoreFile {
  readonly version: 1;
  readonly entries: Record<string, McpStoredAuthorization>;
}

/**
 * OAuth tokens in one JSON file that only its owner may read (mode 0600), as
 * `{ version: 1, entries: { "<namespace> <resource>": … } }` (M8). Writes replace the
 * file whole (a new file, then a rename), so a crash leaves the old file or the new
 * one, never half of one; writes of one store are serialized. A file another process
 * changes in between is read again at each load.
 */
export class FileTokenStore implements McpTokenStore {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly file: string) {}

  async load(key: McpTokenKey): Promise<McpStoredAuthorization | undefined> {
    return (await this.read()).entries[entryName(key)];
  }

  save(key: McpTokenKey, value: McpStoredAuthorization): Promise<void> {
    return this.update((entries) => {
      entries[entryName(key)] = value;
    });
  }

  delete(key: McpTokenKey): Promise<void> {
    return this.update((entries) => {
      delete entries[entryName(key)];
    });
  }

  /** Every stored key, for `auth status` listings. */
  async keys(): Promise<McpTokenKey[]> {
    return Object.keys((await this.read()).entries).map((name) => {
      const space = name.indexOf(" ");
      return { namespace: name.slice(0, space), resource: name.slice(space + 1) };
    });
  }

  private update(change: (entries: Record<string, McpStoredAuthorization>) => void): Promise<void> {
    const next = this.queue.then(async () => {
      const entries = { ...(await this.read()).entries };
      change(entries);
      await this.write({ version: 1, entries });
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async read(): Promise<StoreFile> {
    let text: string;
    try {
      text = await readFile(this.file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return { version: 1, entries: {} };
      throw this.failure(`could not be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, error);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw this.failure("is not JSON; delete it and authorize the providers again", error);
    }
    const file = parsed as Partial<StoreFile> | null;
    if (typeof file !== "object" || file === null || file.version !== 1 || typeof file.entries !== "object" || file.entries === null) {
      throw this.failure('is not a token store (expected {"version":1,"entries":{…}}); delete it and authorize the providers again');
    }
    return file as StoreFile;
  }

  private async write(file: StoreFile): Promise<void> {
    await mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const temporary = `${this.file}.${randomBytes(6).toString("hex")}.tmp`;
    const handle = await open(temporary, "wx", 0o600);
    try {
      await handle.writeFile(JSON.stringify(file));
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await rename(temporary, this.file);
    } catch (error) {
      await rm(temporary, { force: true });
      throw this.failure(`could not be replaced (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, error);
    }
  }

  private failure(problem: string, cause?: unknown): OpenWorkerError {
    return new OpenWorkerError(MCP_ERROR_CODES.tokenStoreFailed, `the MCP token store ${this.file} ${problem}`, {
      ...(cause === undefined ? {} : { cause }),
      details: { file: this.file },
    });
  }
}

function entryName(key: McpTokenKey): string {
  return `${key.namespace} ${key.resource}`;
}
