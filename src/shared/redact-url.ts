/**
 * URLs made fit for logs and error messages: only the scheme, host and port are kept. RPC providers put
 * their API key in the path (`/v2/<key>`), the query (`?apikey=`) or the user-info, and a database URL
 * carries its password there; none of that is ever written out. `redactUrl` takes one URL,
 * `redactUrlsIn` every URL inside a text (viem's error messages quote the whole endpoint: "URL: …").
 *
 * Pure functions. The pattern is fixed (a short list of schemes, then everything up to white space or a
 * quote), never built from input, and runs on at most MAX_TEXT characters.
 * Does not defend: a secret that is not inside a URL (a bare key in a message), or a URL whose scheme is not
 * in the list (it is left as it is).
 */

/** Longest text searched for URLs; longer texts are cut (log lines have no use for more). */
const MAX_TEXT = 16_000;

const TRAILING = '.,;:!?)]}';

const URL_IN_TEXT = /\b(?:https?|wss?|postgres(?:ql)?|redis|ftp):\/\/[^\s"'<>`\\]+/gi;

/** `scheme://host[:port]` of a URL — never its user-info, path, query or fragment; `[url]` when it does not parse. */
export function redactUrl(url: string | URL): string {
  let parsed: URL;
  try {
    parsed = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return '[url]';
  }
  return parsed.host ? `${parsed.protocol}//${parsed.host}` : '[url]';
}

/** The text with every URL in it reduced to its scheme, host and port (see `redactUrl`). */
export function redactUrlsIn(text: string): string {
  const bounded = text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text;
  return bounded.replace(URL_IN_TEXT, (match) => {
    // Punctuation that closes a sentence or a bracket around the URL stays outside it.
    let end = match.length;
    while (end > 0 && TRAILING.includes(match[end - 1]!)) end--;
    return redactUrl(match.slice(0, end)) + match.slice(end);
  });
}
