/**
 * Whether a request is a browser's cross-site subresource request (a `fetch`, an image, a form or a frame that a
 * page of another site made the owner's browser send): `Sec-Fetch-Site` is `cross-site` or `same-site` and the
 * request is not a top-level navigation (`Sec-Fetch-Dest: document`). Treasury's API offers no CORS and no cookies,
 * so no legitimate client sends one: the CLI, the SDK and servers send no `Sec-Fetch-*` headers, and the dashboard's
 * requests are same-origin.
 *
 * Defends (with ./rate-limit.ts): a web page the owner visits spending the owner's address's sign-in or catalogue
 * allowance with requests it cannot even read, and so locking the owner (and everyone behind the same address) out
 * of signing in. Does not defend: browsers that send no `Sec-Fetch-Site` (before 2023 on Safari), nor a page that
 * navigates the whole tab (one request each time).
 */
import type { Context } from 'koa';

const OTHER_SITE = new Set(['cross-site', 'same-site']);

export function isCrossSiteSubresource(ctx: Pick<Context, 'get'>): boolean {
  return (
    OTHER_SITE.has(ctx.get('sec-fetch-site').toLowerCase()) && ctx.get('sec-fetch-dest').toLowerCase() !== 'document'
  );
}
