/**
 * The search text of GET /discovery/search as ILIKE patterns: split on white space into at most eight distinct
 * terms (lower-cased), each with the three characters ILIKE gives meaning to — `\`, `%` and `_` — escaped by a
 * backslash and wrapped in `%…%`, so every term matches as the literal text it is, anywhere in the haystack.
 * The patterns are bound values (`? ESCAPE '\'`), never spliced into SQL, and no regular expression is built
 * from them. Pure.
 *
 * Defends: a search that means more than its text (a `%` or `_` matching everything, a trailing `\` breaking
 * the pattern). Does not defend: a slow match — the text is bounded at the schema (200 characters) and the
 * haystack is the catalogue's own bounded columns.
 */

/** At most this many terms are matched; the rest of the text is ignored. */
export const MAX_SEARCH_TERMS = 8;

/** `term` with ILIKE's escape character and wildcards escaped (the pattern's ESCAPE is `\`). */
export function escapeLikeTerm(term: string): string {
  return term.replaceAll('\\', '\\\\').replaceAll('%', '\\%').replaceAll('_', '\\_');
}

/** The distinct terms of `text` as `%term%` patterns, in the order they first appear. */
export function searchPatterns(text: string): string[] {
  const terms = new Set<string>();
  for (const term of text.toLowerCase().split(/\s+/)) {
    if (term === '') continue;
    terms.add(term);
    if (terms.size === MAX_SEARCH_TERMS) break;
  }
  return [...terms].map((term) => `%${escapeLikeTerm(term)}%`);
}
