/**
 * Vite build of the dashboard: served by the API under /dashboard/ (src/api/http/dashboard-static.ts), so
 * every asset URL starts with /dashboard/ and lands, hashed, in assets/. No inline script or style is
 * emitted (the page's CSP allows neither), and no module-preload polyfill (it would be inline).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const HERE = path.dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root: HERE,
  base: '/dashboard/',
  publicDir: false,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: path.join(HERE, '../.build/dashboard'),
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
  },
});
