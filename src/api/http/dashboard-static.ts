/**
 * Serves the built dashboard (`npm run build:dashboard` → .build/dashboard/) under /dashboard/ from the API
 * itself: hashed files under /dashboard/assets/ as they are (cached for a year, immutable), every other
 * /dashboard/ path the single page's index.html (never cached), so a deep link such as the `settings_url` of
 * MGMT_6014 (/dashboard/settings/pats/{id}) opens its page. Every answer carries a strict Content Security
 * Policy (scripts and connections to this origin only, no inline script, no framing), `nosniff` and
 * `Referrer-Policy: no-referrer` (the cli-handoff fragment never leaves the page, and no path leaks either).
 *
 * Defends: path traversal (an asset path is resolved inside the assets/ folder or not served), script injection and
 * clickjacking (CSP, frame-ancestors 'none'), MIME sniffing. Does not: authenticate (the pages are public;
 * what they show comes from the API with the session's own token) nor build the dashboard (a missing build
 * answers 503 `dashboard_not_built`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context, Middleware } from 'koa';
import { AppError } from '../errors/app-error.js';

/**
 * Where `npm run build:dashboard` writes (git-ignored): .build/ at the root, three folders above src/api/http/
 * and four above the compiled dist/src/api/http/ (`npm run start:api`, and `npm start` once built).
 */
const HERE = fileURLToPath(import.meta.url);
export const DASHBOARD_BUILD_DIR = path.resolve(
  path.dirname(HERE),
  path.extname(HERE) === '.js' ? '../../../..' : '../../..',
  '.build/dashboard',
);

export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
  '.map': 'application/json',
};

function secure(ctx: Context): void {
  ctx.set('Content-Security-Policy', DASHBOARD_CSP);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
}

/** A file under `dir` named by the URL's rest, or undefined (outside the folder, missing, or not a file). */
function fileInside(dir: string, rest: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(rest);
  } catch {
    return undefined;
  }
  if (decoded.includes('\0')) return undefined;
  const file = path.resolve(dir, decoded);
  if (!file.startsWith(dir + path.sep)) return undefined;
  try {
    return fs.statSync(file).isFile() ? file : undefined;
  } catch {
    return undefined;
  }
}

export function dashboardStatic(options: { dir?: string } = {}): Middleware {
  const dir = path.resolve(options.dir ?? DASHBOARD_BUILD_DIR);
  return async (ctx, next) => {
    if (ctx.path !== '/dashboard' && !ctx.path.startsWith('/dashboard/')) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    secure(ctx);
    if (ctx.path === '/dashboard') {
      ctx.status = 308;
      ctx.redirect('/dashboard/');
      return;
    }
    const rest = ctx.path.slice('/dashboard/'.length);
    if (rest.startsWith('assets/')) {
      const file = fileInside(path.join(dir, 'assets'), rest.slice('assets/'.length));
      if (!file) throw new AppError('not_found');
      ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
      ctx.type = TYPES[path.extname(file)] ?? 'application/octet-stream';
      ctx.body = fs.createReadStream(file);
      return;
    }
    const index = path.join(dir, 'index.html');
    if (!fs.existsSync(index)) throw new AppError('dashboard_not_built');
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = fs.createReadStream(index);
  };
}
