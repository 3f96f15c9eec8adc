// Reads the code blocks of the guides in docs/. Every block carries a marker comment on the
// line above its fence, saying how a test proves it:
//   <!-- snippet: docs/snippets/partner/src/lookup.ts -->  the block IS that file (compiled or run)
//   <!-- shell: run -->                                    each command is run by the consumer test
//   <!-- shell: illustrative -->                           commands checked against the CLI's --help
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { ROOT } from "./workspace.js";

export const DOCS = path.join(ROOT, "docs");
export const GUIDES = ["write-a-partner-tool.md", "compose-a-host.md", "operate.md"] as const;

export type BlockMarker =
  { readonly kind: "snippet"; readonly path: string } | { readonly kind: "shell"; readonly mode: "run" | "illustrative" } | { readonly kind: "none" };

export interface CodeBlock {
  readonly guide: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly lang: string;
  readonly marker: BlockMarker;
  /** The block's text, ending with a newline. */
  readonly content: string;
}

const MARKER = /^<!--\s*(snippet|shell):\s*(\S+)\s*-->$/;

/** Every fenced code block of one markdown file, with the marker above it. */
export function codeBlocks(file: string): CodeBlock[] {
  const lines = readFileSync(file, "utf8").split("\n");
  const blocks: CodeBlock[] = [];
  for (let index = 0; index < lines.length; index++) {
    // A fence may be indented (inside a list item): its block is read without that indent,
    // so no block escapes the checks by sitting in a list.
    const fence = /^( *)(`{3,})(\S*)\s*$/.exec(lines[index]!);
    if (!fence) continue;
    const indent = fence[1]!;
    const close = `${indent}${fence[2]}`;
    const body: string[] = [];
    let end = index + 1;
    while (end < lines.length && lines[end]!.trimEnd() !== close) body.push(lines[end++]!.slice(indent.length));
    let above = index - 1;
    while (above >= 0 && lines[above]!.trim() === "") above--;
    const match = above >= 0 ? MARKER.exec(lines[above]!.trim()) : null;
    let marker: BlockMarker = { kind: "none" };
    if (match?.[1] === "snippet") marker = { kind: "snippet", path: match[2]! };
    if (match?.[1] === "shell" && (match[2] === "run" || match[2] === "illustrative")) marker = { kind: "shell", mode: match[2] };
    blocks.push({ guide: path.relative(ROOT, file), line: index + 1, lang: fence[3] ?? "", marker, content: body.length ? `${body.join("\n")}\n` : "" });
    index = end;
  }
  return blocks;
}

/** The markdown files of docs/ (guides and index). */
export function docFiles(): string[] {
  return readdirSync(DOCS)
    .filter((name) => name.endsWith(".md"))
    .map((name) => path.join(DOCS, name));
}

/** The commands of a shell block: one per line, comments and blank lines dropped. */
export function shellCommands(block: CodeBlock): string[] {
  return block.content
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith("#"));
}

/** The `shell: run` commands of the guides, in reading order (partner, host, operate). */
export function runnableCommands(): { readonly guide: string; readonly line: number; readonly command: string }[] {
  return GUIDES.flatMap((guide) =>
    codeBlocks(path.join(DOCS, guide))
      .filter((block) => block.marker.kind === "shell" && block.marker.mode === "run")
      .flatMap((block) => shellCommands(block).map((command) => ({ guide, line: block.line, command }))),
  );
}
