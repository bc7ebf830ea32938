/**
 * Plain multipart part heads: the one shape of a part's header block that every origin reader splits into the
 * same headers, so the part names method-override.ts reads in it are the names the origin reads. A head is the
 * text after a `--boundary` up to the blank line that ends it (or the end of the body). It is plain when:
 * - the rest of the delimiter line is empty, then one or more header lines, each `token ":" value` — the value
 *   not blank, no control character but a tab (a bare CR or LF splits lines differently per reader);
 * - `content-disposition:` and `content-id:` (any case) appear only as a line's own header name;
 * - or it follows a closing delimiter (`--boundary--`) with only white space after it.
 * What each rule closes, as those readers parse a head:
 * - a line without a colon or starting with white space: PHP and commons-fileupload append it to the header
 *   before (`name="_me` + `thod"` is `name="_method"`); Rack's `Content-Disposition:[^:]*;\s*name=` runs across
 *   it to a `; name=` on the next line;
 * - those names elsewhere: Rack's Content-Disposition and Content-ID patterns are not anchored at a line start
 *   (`X-Note: Content-ID: _method` names the part); a blank value: Rack's `Content-ID:\s*` runs on to the next line;
 * - a head with no header line: Rack reads its head up to the next blank line, so the part's first lines become
 *   its head; text after a closing delimiter before the blank line: a delimiter line there starts a part for Rack
 *   and PHP whose head the scan would take as this one's.
 *
 * Defends against: a part head the gate reads as not naming `_method` that an origin reads as naming it. Does not
 * defend against: nothing here reads names (method-override.ts does); a plain head is refused nothing.
 */

/** An RFC 9110 token, a colon, and a value of tabs, visible ASCII, spaces and bytes above 0x7F (read as latin1). */
const HEADER_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+:[\t\x20-\x7e\x80-\xff]*$/;

/** What may follow a closing delimiter before the blank line or the end of the body. */
const CLOSE_REST = /^--[ \t\r\n]*$/;

/** Header names an origin finds anywhere in a head, not only at a line start (Rack). */
const UNANCHORED_NAMES = ['content-disposition:', 'content-id:'];

/** Is `line` one plain header line, those names only as its own? */
function isPlainHeaderLine(line: string): boolean {
  if (!HEADER_LINE.test(line)) return false;
  if (line.slice(line.indexOf(':') + 1).trim() === '') return false;
  const lower = line.toLowerCase();
  return UNANCHORED_NAMES.every((name) => lower.indexOf(name, 1) === -1);
}

/** Does every origin reader split this part head (the text after a `--boundary`) into the same headers? */
export function isPlainPartHead(head: string): boolean {
  if (head.startsWith('--')) return CLOSE_REST.test(head);
  const lines = head.split(/\r?\n/);
  if (lines[0] !== '' || lines.length < 2) return false;
  for (let i = 1; i < lines.length; i++) if (!isPlainHeaderLine(lines[i]!)) return false;
  return true;
}
