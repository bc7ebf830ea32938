/**
 * A multipart part's name as PHP reads it from its Content-Disposition value (rfc1867.c: `php_ap_getword`,
 * `php_ap_getword_conf`), for method-override.ts to compare with `_method`. PHP splits the value on `;` outside
 * `"…"` and `'…'`, takes each pair holding a `=` as key (up to the first `=`, any case) and value (past every
 * further `=`), and reads a `name` value with leading white space skipped: quoted by `"` or `'` up to the same
 * quote (`\\` and `\` + quote unescaped), else up to the next white space. So `name='_method'`,
 * `name=_method x` and `name==_method` all name a part `_method` for Laravel and Symfony.
 *
 * Defends against: a `_method` part name PHP reads where the gate's other readings (the RFC's, Rack's) do not.
 * Does not defend against: nothing here decides; it only reads (a later PHP that reads otherwise is not known).
 */

/** C's isspace in the "C" locale. */
const isSpace = (c: string | undefined) =>
  c === ' ' || c === '\t' || c === '\n' || c === '\v' || c === '\f' || c === '\r';

/** `php_ap_getword`: from `at` up to `stop` outside quotes; `next` past every `stop` that follows. */
function getword(text: string, at: number, stop: string): { word: string; next: number } {
  let pos = at;
  while (pos < text.length && text[pos] !== stop) {
    const quote = text[pos];
    if (quote === '"' || quote === "'") {
      pos++;
      while (pos < text.length && text[pos] !== quote) pos += text[pos] === '\\' && text[pos + 1] === quote ? 2 : 1;
      if (pos < text.length) pos++;
    } else pos++;
  }
  const word = text.slice(at, Math.min(pos, text.length));
  while (text[pos] === stop) pos++;
  return { word, next: pos };
}

/** `php_ap_getword_conf`: a parameter value, quoted or up to white space, its escapes undone. */
function getwordConf(text: string): string {
  let at = 0;
  while (isSpace(text[at])) at++;
  const quote = text[at] === '"' || text[at] === "'" ? text[at] : undefined;
  if (quote !== undefined) at++;
  let out = '';
  for (let i = at; i < text.length; i++) {
    const c = text[i]!;
    if (quote === undefined ? isSpace(c) : c === quote) break;
    if (c === '\\' && (text[i + 1] === '\\' || (quote !== undefined && text[i + 1] === quote))) out += text[++i];
    else out += c;
  }
  return out;
}

/** Every `name` a Content-Disposition value (after its colon) gives a part as PHP reads it (PHP keeps the last). */
export function phpPartNames(value: string): string[] {
  const names: string[] = [];
  let at = 0;
  while (isSpace(value[at])) at++;
  while (at < value.length) {
    const { word: pair, next } = getword(value, at, ';');
    at = next;
    while (isSpace(value[at])) at++;
    if (!pair.includes('=')) continue;
    const { word: key, next: rest } = getword(pair, 0, '=');
    if (key.toLowerCase() === 'name') names.push(getwordConf(pair.slice(rest)));
  }
  return names;
}
