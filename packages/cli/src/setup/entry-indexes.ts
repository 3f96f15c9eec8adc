import type { BundleSelection } from "@openworker/bundle-resolver";

/**
 * Where the entries of a reduced selection stand in tools.json: for each list (`tools`,
 * `mcpServers`, `mcpServers.acer`), the file index of each entry it kept, in order.
 *
 * `tools check` resolves a selection with entries left out (the bad entries of a
 * tools.json that did not parse, the tools of a provider that could not start), and the
 * resolver labels what it finds by position in the list it was given. Without this map,
 * `tools[1]` of the shortened list would send a partner to the wrong line of the file.
 */
export type EntryIndexes = ReadonlyMap<string, readonly number[]>;

/**
 * The file indexes of `selection`'s entries, once the entries named by `dropped` (fields
 * such as `tools[2]`, one per entry tools.json's parser left out) were removed from it.
 * `within` maps `selection`'s own lists further back, when it was itself reduced.
 */
export function keptIndexes(selection: BundleSelection, dropped: Iterable<string>, within?: EntryIndexes): EntryIndexes {
  const droppedByList = new Map<string, Set<number>>();
  for (const field of dropped) {
    const match = /^(.+)\[(\d+)\]$/.exec(field);
    if (!match) continue;
    const [, list, index] = match as unknown as [string, string, string];
    droppedByList.set(list, (droppedByList.get(list) ?? new Set()).add(Number(index)));
  }
  const indexes = new Map<string, readonly number[]>();
  for (const [list, length] of listLengths(selection)) {
    const gone = droppedByList.get(list) ?? new Set<number>();
    const kept: number[] = [];
    for (let index = 0; kept.length < length; index += 1) if (!gone.has(index)) kept.push(index);
    indexes.set(list, within ? kept.map((index) => within.get(list)?.[index] ?? index) : kept);
  }
  return indexes;
}

/**
 * The file indexes of the entries `withoutProviders` kept: `selection` less the entries of
 * the `skipped` namespaces (a v2 server goes whole, so its list keeps its own indexes).
 * `within` maps `selection`'s own lists further back, when it was itself reduced.
 */
export function indexesWithoutProviders(selection: BundleSelection, skipped: ReadonlySet<string>, within?: EntryIndexes): EntryIndexes {
  const indexes = new Map(within ?? []);
  const keep = (list: string, names: readonly string[], namespaceOf: (name: string) => string) =>
    indexes.set(
      list,
      names.flatMap((name, index) => (skipped.has(namespaceOf(name)) ? [] : [within?.get(list)?.[index] ?? index])),
    );
  if (selection.version === 3) keep("tools", selection.tools, (name) => name.slice(0, name.indexOf(".")));
  else if (selection.version === 1) keep("mcpServers", selection.mcpServers, (server) => server);
  return indexes;
}

/**
 * A resolver message with each entry label (`"tools[1]"`, `"mcpServers.acer[0]"`) turned
 * into the entry's index in the file.
 */
export function relabel(message: string, indexes: EntryIndexes): string {
  if (indexes.size === 0) return message;
  return message.replace(/"((?:tools|mcpServers)(?:\.[A-Za-z0-9_-]+)?)\[(\d+)\]"/g, (label, list: string, index: string) => {
    const original = indexes.get(list)?.[Number(index)];
    return original === undefined ? label : `"${list}[${original}]"`;
  });
}

function listLengths(selection: BundleSelection): [string, number][] {
  switch (selection.version) {
    case 3:
      return [["tools", selection.tools.length]];
    case 2:
      return Object.entries(selection.mcpServers).map(([server, tools]) => [`mcpServers.${server}`, tools.length]);
    case 1:
      return [["mcpServers", selection.mcpServers.length]];
  }
}
