/**
 * The model's gate step: an unpaid request with a generated target — plain, or with what an origin could resolve
 * to another path (`..`, `\`, `%2e`, `%2f`, case) — sent raw to the tenant's gate, after the gate read the
 * catalogue as it stands. What the origin receives is checked by ./invariants.ts: only free routes, unpaid.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { rawExchange } from '../../integration/gate/raw-http.js';
import { Step, type Model } from './model-world.js';

const SEGMENTS = [
  'data',
  'free',
  'DATA',
  'Free',
  'x',
  '..',
  '.',
  '%2e%2e',
  '%2E',
  '..\\data',
  '%2fdata',
  '%5cdata',
  '',
];

/** A request target below a seller's prefix: segments joined by `/` (or `\`), an optional query. */
export const gateTarget = fc
  .tuple(
    fc.array(fc.constantFrom(...SEGMENTS), { minLength: 1, maxLength: 4 }),
    fc.constantFrom('/', '\\'),
    fc.constantFrom('', '?q=1'),
  )
  .map(([segments, separator, query]) => `/${segments.join(separator)}${query}`);

export class GateRequest extends Step {
  constructor(
    readonly tenant: number,
    readonly method: 'GET' | 'POST' | 'OPTIONS',
    readonly target: string,
  ) {
    super();
  }
  async act(m: Model): Promise<void> {
    const tenant = m.tenants[this.tenant]!;
    await tenant.gate.app.catalogue.refreshNow();
    const before = tenant.origin.served.length;
    const answer = await rawExchange(tenant.gate.url, {
      method: this.method,
      target: `/${tenant.slug}${this.target}`,
      ...(this.method === 'GET' ? {} : { body: '{"a":1}', headers: { 'Content-Type': 'application/json' } }),
    });
    // Unpaid, the origin may see a request only for a route whose price is 0 now, and exactly as priced.
    const free = new Set(['/free', ...(tenant.priceMicro === 0n ? ['/data'] : [])]);
    for (const line of tenant.origin.served.slice(before)) {
      const [method, target] = line.split(' ') as [string, string];
      assert.notEqual(method, 'OPTIONS', 'a preflight is answered by the gate');
      assert.ok(free.has(target.split('?')[0]!), `${this}: the origin served ${line} unpaid (${answer.status})`);
    }
  }
  override toString = () => `GateRequest(${this.tenant}, ${this.method} ${JSON.stringify(this.target)})`;
}
