/**
 * The rendered API reference at `/docs`: a page of our own that loads Swagger UI (swagger-ui-dist, served from
 * this origin) and a small initializer script pointing it at `/v1/openapi.json`. Every reply carries a strict
 * Content-Security-Policy: scripts, styles, images and fetches from this origin only, no inline script, no
 * eval, no framing, no forms, no base URI — so the page runs exactly the two scripts listed here.
 *
 * Defends: script injection through the page (nothing inline runs; no third-party origin is reachable), the
 * page being framed (clickjacking), the validator badge calling out to a third party (validatorUrl: null).
 * Does not defend: what a reader types into "Try it out" (it calls this API with the bearer they give).
 */
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

export const REFERENCE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The initializer, a script of its own (the CSP allows no inline script). */
const INIT_SCRIPT = `'use strict';
window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/v1/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    validatorUrl: null,
    tryItOutEnabled: false,
  });
});
`;

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <title>Treasury API reference</title>
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <link rel="stylesheet" href="/docs/swagger-ui.css">
    <link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
  </head>
  <body>
    <div id="swagger-ui"></div>
    <script src="/docs/swagger-ui-bundle.js"></script>
    <script src="/docs/init.js"></script>
  </body>
</html>
`;

export interface ReferenceAsset {
  type: string;
  body: Buffer | string;
}

/** The assets `/docs/{asset}` serves, by name; any other name is a 404. Files of swagger-ui-dist are read once. */
const ASSETS: Record<string, { type: string; file?: string; text?: string }> = {
  'swagger-ui-bundle.js': { type: 'text/javascript; charset=utf-8', file: 'swagger-ui-bundle.js' },
  'swagger-ui.css': { type: 'text/css; charset=utf-8', file: 'swagger-ui.css' },
  'favicon-32x32.png': { type: 'image/png', file: 'favicon-32x32.png' },
  'init.js': { type: 'text/javascript; charset=utf-8', text: INIT_SCRIPT },
};

const distDir = () => path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const cache = new Map<string, Promise<ReferenceAsset>>();

export function referencePage(): ReferenceAsset {
  return { type: 'text/html; charset=utf-8', body: PAGE };
}

/** The named asset, or undefined for a name that is not one of ours (no path is built from the name). */
export function referenceAsset(name: string): Promise<ReferenceAsset> | undefined {
  if (!Object.hasOwn(ASSETS, name)) return undefined;
  const asset = ASSETS[name]!;
  let loaded = cache.get(name);
  if (!loaded) {
    loaded = asset.file
      ? fs.readFile(path.join(distDir(), asset.file)).then((body) => ({ type: asset.type, body }))
      : Promise.resolve({ type: asset.type, body: asset.text ?? '' });
    loaded.catch(() => cache.delete(name));
    cache.set(name, loaded);
  }
  return loaded;
}
