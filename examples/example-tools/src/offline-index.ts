import { OFFLINE_DOCUMENTS } from "./offline-documents.js";

/** One search result. */
export interface SearchHit {
  readonly title: string;
  readonly url: string;
  readonly snippet: string;
}

function terms(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((term) => term.length > 1);
}

const INDEX = OFFLINE_DOCUMENTS.map((document) => ({
  document,
  terms: new Set(terms(`${document.title} ${document.snippet}`)),
}));

/**
 * Ranks the shipped documents by how many query terms they contain (title matches
 * weigh double). Pure and synchronous: the offline mode needs no network.
 */
export function searchOfflineIndex(query: string, limit: number): SearchHit[] {
  const wanted = terms(query);
  return INDEX.map(({ document, terms: documentTerms }) => {
    const title = new Set(terms(document.title));
    const score = wanted.reduce((sum, term) => sum + (documentTerms.has(term) ? 1 : 0) + (title.has(term) ? 1 : 0), 0);
    return { document, score };
  })
    .filter((entry) => entry.score > 0)
    .sort((a, b) => b.score - a.score || a.document.title.localeCompare(b.document.title))
    .slice(0, limit)
    .map((entry) => entry.document);
}
