/**
 * Our Bazaar declaration is the official one: for the same route config, method, route pattern and path, what
 * declareBazaar builds equals what `bazaarResourceServerExtension.enrichDeclaration` makes of
 * `declareDiscoveryExtension(cfg)` — without building a regular expression from the route. And the bounds:
 * service name cut or left out, tags sanitised, a declaration the validator refuses replaced by the method-only one.
 */
import assert from 'node:assert/strict';
import {
  bazaarResourceServerExtension,
  declareDiscoveryExtension,
  validateDiscoveryExtension,
} from '@x402/extensions/bazaar';
import { declareBazaar } from '../../../src/x402/seller/bazaar-declaration.js';
import { resolveDiscovery, type DiscoveryOptions } from '../../../src/x402/seller/discovery-options.js';

function resolved(options: DiscoveryOptions) {
  const problems: string[] = [];
  const discovery = resolveDiscovery(options, problems);
  assert.deepEqual(problems, []);
  return discovery!;
}

function official(cfg: Parameters<typeof declareDiscoveryExtension>[0], method: string, pattern: string, path: string) {
  const declared = declareDiscoveryExtension(cfg).bazaar;
  const ctx = { method, adapter: { getPath: () => path }, routePattern: pattern };
  return bazaarResourceServerExtension.enrichDeclaration!(declared, ctx);
}

describe('Bazaar declaration (unit)', () => {
  const schema = { type: 'object', properties: { units: { type: 'string' } } };

  it('equals the official enrichment for a query route with parameters', () => {
    const ours = declareBazaar(resolved({ routes: { '/weather/{city}/{day}': { input_schema: schema } } }), {
      method: 'GET',
      path: '/weather/paris/monday',
    });
    assert.deepEqual(
      ours.extensions.bazaar,
      official({ inputSchema: schema }, 'GET', '/weather/:city/:day', '/weather/paris/monday'),
    );
  });

  it('equals the official enrichment for a body route without parameters', () => {
    const body = { type: 'object', properties: { text: { type: 'string' } } };
    const ours = declareBazaar(resolved({ input_schema: body, output_example: { ok: true } }), {
      method: 'PUT',
      path: '/notes',
    });
    assert.deepEqual(
      ours.extensions.bazaar,
      official({ inputSchema: body, bodyType: 'json', output: { example: { ok: true } } }, 'PUT', '/notes', '/notes'),
    );
  });

  it('a declaration the validator refuses becomes the method-only one; an unknown method gets none', () => {
    const discovery = resolved({ input_schema: { type: 'object', properties: {}, required: ['city'] } });
    const ours = declareBazaar(discovery, { method: 'GET', path: '/x' }).extensions.bazaar!;
    assert.deepEqual(validateDiscoveryExtension(ours), { valid: true });
    assert.deepEqual(ours, official({}, 'GET', '/x', '/x'));
    assert.deepEqual(declareBazaar(discovery, { method: 'PROPFIND', path: '/x' }).extensions, {});
  });

  it('bounds the service metadata and puts the prefix before the route template', () => {
    const discovery = resolved({
      service_name: 'Ünïcode name',
      tags: ['a', 'A', 'b\u0007', 'c', 'd', 'e', 'f', 'g'],
      routes: { '/items/{id}.json': {} },
    });
    const out = declareBazaar(discovery, { method: 'GET', path: '/items/42.json', prefix: '/shop' });
    assert.deepEqual(out.resource, { tags: ['a', 'c', 'd', 'e', 'f'] });
    assert.equal((out.extensions.bazaar as { routeTemplate?: string }).routeTemplate, '/shop/items/:id.json');
    assert.deepEqual((out.extensions.bazaar!.info.input as { pathParams?: unknown }).pathParams, { id: '42' });
  });

  it('refuses at start-up what it cannot bound, never at request time', () => {
    const tooBig: string[] = [];
    resolveDiscovery({ input_schema: { big: 'x'.repeat(20_000) } }, tooBig);
    assert.match(tooBig.join(), /discovery\.input_schema: must be JSON of at most 16384 bytes/);
    const notARoute: string[] = [];
    resolveDiscovery({ routes: { 'no-slash': {} } }, notARoute);
    assert.match(notARoute.join(), /discovery\.routes: "no-slash" is not a route pattern/);
  });
});
