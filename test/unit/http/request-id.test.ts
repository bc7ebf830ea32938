/**
 * Request ids (src/api/http/middleware/request-context.ts): `req_` and 32 lower-case hex digits, each from random
 * bytes drawn once (the pool the ids are cut from is refilled, never reused); a caller's X-Request-Id is kept when it
 * is short and plain, and replaced by a fresh id otherwise; the id is echoed in the header and in an error's body.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import pino from 'pino';
import { newRequestId, requestContext } from '../../../src/api/http/middleware/request-context.js';
import { errorHandler } from '../../../src/api/http/middleware/error-handler.js';
import { AppError } from '../../../src/api/errors/app-error.js';
import { createTreasuryMetrics } from '../../../src/api/metrics/treasury-metrics.js';

const ID = /^req_[0-9a-f]{32}$/;

describe('request ids', () => {
  it('are req_ and 32 hex digits, none repeated over several refills of their pool', () => {
    const ids = Array.from({ length: 5_000 }, () => newRequestId());
    for (const id of ids) assert.match(id, ID);
    assert.equal(new Set(ids).size, ids.length);
    // Random bytes, not a count: the digits of consecutive ids share no more than chance would.
    const digits = new Set(ids.map((id) => id.slice(4, 12)));
    assert.equal(digits.size, ids.length);
  });

  it('keeps a plain caller id, replaces any other, and echoes the id in the header and an error body', async () => {
    const log = pino({ level: 'silent' });
    const metrics = createTreasuryMetrics();
    const app = new Koa();
    app.use(requestContext(log, metrics));
    app.use(errorHandler(log, metrics));
    app.use(() => {
      throw new AppError('pat_not_found');
    });
    const server = app.listen(0, '127.0.0.1');
    try {
      await new Promise((resolve) => server.once('listening', resolve));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const ask = async (header?: string) => {
        const res = await fetch(url, header === undefined ? {} : { headers: { 'x-request-id': header } });
        const body = (await res.json()) as { request_id: string };
        assert.equal(body.request_id, res.headers.get('x-request-id'));
        return body.request_id;
      };
      assert.equal(await ask('trace-123.A_b'), 'trace-123.A_b');
      for (const header of [undefined, '', 'has space', 'x'.repeat(65), 'semi;colon']) {
        const id = await ask(header);
        assert.match(id, ID, `for ${String(header)}`);
      }
    } finally {
      server.close();
    }
  });
});
