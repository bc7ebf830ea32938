/**
 * GET /docs (the rendered API reference) and GET /docs/{asset} (its script, style sheet and icon), no bearer.
 * Every reply carries the page's strict Content-Security-Policy (../docs/reference-page.ts), `nosniff` and
 * `no-referrer`; an unknown asset is a 404 `not_found`.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { AppError } from '../../errors/app-error.js';
import { REFERENCE_CSP, referenceAsset, referencePage, type ReferenceAsset } from '../docs/reference-page.js';

function send(ctx: Context, asset: ReferenceAsset, cacheControl: string): void {
  ctx.set('Content-Security-Policy', REFERENCE_CSP);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', cacheControl);
  ctx.type = asset.type;
  ctx.body = asset.body;
}

export function docsRoutes(): Router {
  const router = new Router();
  router.get('/docs', (ctx) => send(ctx, referencePage(), 'no-cache'));
  router.get('/docs/:asset', async (ctx) => {
    const asset = referenceAsset(ctx.params.asset ?? '');
    if (!asset) throw new AppError('not_found');
    send(ctx, await asset, 'public, max-age=3600');
  });
  return router;
}
