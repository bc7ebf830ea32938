/**
 * readEveryPage against real local HTTP servers: follows next_cursor with pages of 500 until null or absent,
 * keeps the first page's other fields, continues from a first page already read, and refuses a repeated
 * cursor or a page without its list with invalid_reply instead of paging for ever or showing part of it.
 * With a response schema (src/shared/api-responses/), a row of another shape on any page is an invalid_reply
 * naming the field, and `ApiClient.request` with `reply` returns the body as sent (unknown keys kept).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiClient } from '../../../src/cli/core/api-client.js';
import { CliError } from '../../../src/cli/core/cli-error.js';
import { PAGE_LIMIT, readEveryPage } from '../../../src/cli/core/read-every-page.js';
import { patPageSchema, patViewSchema } from '../../../src/shared/api-responses/pat-responses.js';

type Page = Record<string, unknown>;

/** A server answering GET /list from `pages` keyed by the cursor asked for ('' for none); records the queries. */
async function serve(
  pages: Record<string, Page>,
): Promise<{ client: ApiClient; queries: URLSearchParams[]; close(): Promise<void> }> {
  const queries: URLSearchParams[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    queries.push(url.searchParams);
    const page = pages[url.searchParams.get('cursor') ?? ''];
    res.writeHead(page ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(page ?? { error_code: 'not_found', user_message: 'no such page' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    client: new ApiClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: 'as_test' }),
    queries,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const invalidReply = (err: unknown) => err instanceof CliError && err.code === 'invalid_reply';

describe('xx CLI readEveryPage', () => {
  it("reads every page in order, asking for the largest page, and keeps the first page's other fields", async () => {
    const s = await serve({
      '': { seller_id: 'sel_1', accrued_usd: '1', flushes: [1, 2], next_cursor: 'c1' },
      c1: { seller_id: 'sel_1', accrued_usd: '1', flushes: [3, 4], next_cursor: 'c2' },
      c2: { seller_id: 'sel_1', accrued_usd: '1', flushes: [5], next_cursor: null },
    });
    try {
      const all = await readEveryPage<{
        seller_id: string;
        accrued_usd: string;
        flushes: number[];
        next_cursor?: string | null;
      }>(s.client, '/list', 'flushes');
      assert.deepEqual(all, { seller_id: 'sel_1', accrued_usd: '1', flushes: [1, 2, 3, 4, 5] });
      assert.deepEqual(
        s.queries.map((q) => [q.get('limit'), q.get('cursor')]),
        [
          [String(PAGE_LIMIT), null],
          [String(PAGE_LIMIT), 'c1'],
          [String(PAGE_LIMIT), 'c2'],
        ],
      );
    } finally {
      await s.close();
    }
  });

  it('takes an answer without next_cursor as the only page, and continues from a first page already read', async () => {
    const s = await serve({ '': { pats: ['a'] }, c1: { pats: ['c'], next_cursor: null } });
    try {
      assert.deepEqual(
        await readEveryPage<{ pats: string[]; next_cursor?: string | null }>(s.client, '/list', 'pats'),
        { pats: ['a'] },
      );
      assert.deepEqual(await readEveryPage(s.client, '/list', 'pats', { first: { pats: ['b'], next_cursor: 'c1' } }), {
        pats: ['b', 'c'],
      });
      assert.deepEqual(
        s.queries.map((q) => q.get('cursor')),
        [null, 'c1'],
      );
    } finally {
      await s.close();
    }
  });

  it('refuses a cursor that repeats, a page without its list and a cursor that is not a string', async () => {
    const s = await serve({
      '': { pats: [1], next_cursor: 'c1' },
      c1: { pats: [2], next_cursor: 'c2' },
      c2: { pats: [3], next_cursor: 'c1' },
      bad: { pats: [1], next_cursor: 'nolist' },
      nolist: { items: [] },
      weird: { pats: [], next_cursor: 7 },
    });
    try {
      await assert.rejects(
        readEveryPage<{ pats: number[]; next_cursor?: string | null }>(s.client, '/list', 'pats'),
        (err: unknown) => invalidReply(err) && /repeated/.test((err as CliError).userMessage),
      );
      assert.equal(s.queries.length, 3, 'stopped at the repeat');
      await assert.rejects(
        readEveryPage(s.client, '/list', 'pats', { first: { pats: [0], next_cursor: 'bad' } }),
        invalidReply,
      );
      await assert.rejects(
        readEveryPage(s.client, '/list', 'pats', { first: { pats: [0], next_cursor: 'weird' } }),
        invalidReply,
      );
    } finally {
      await s.close();
    }
  });

  it('checks every page against the response schema, naming the field at fault; a page without next_cursor is the last', async () => {
    const pat = (n: number) => ({
      id: `pat_${String(n).padStart(24, '0')}`,
      scope_type: 'service' as const,
      scope_id: 'sel_1',
      gate: false,
      label: null,
      daily_cap_usd: null,
      single_use: false,
      created_at: '2026-01-01T00:00:00.000Z',
      expires_at: null,
      used_at: null,
      revoked_at: null,
      parent_token_id: null,
      created_by: 'ses_1',
    });
    const s = await serve({
      '': { pats: [pat(1)], next_cursor: 'c1' },
      c1: { pats: [pat(2)] },
      bad: { pats: [pat(3)], next_cursor: 'c2' },
      c2: { pats: [{ ...pat(4), created_at: 'yesterday' }], next_cursor: null },
    });
    try {
      const all = await readEveryPage(s.client, '/list', 'pats', { page: patPageSchema });
      assert.deepEqual(
        all.pats.map((p) => p.id),
        [pat(1).id, pat(2).id],
      );
      await assert.rejects(
        readEveryPage(s.client, '/list', 'pats', { page: patPageSchema, first: { pats: [pat(3)], next_cursor: 'c2' } }),
        (err: unknown) =>
          invalidReply(err) &&
          (err as CliError).details?.field === 'pats.0.created_at' &&
          !(err as CliError).userMessage.includes('yesterday'),
      );
    } finally {
      await s.close();
    }
  });

  it('request with a reply schema returns the body as the server sent it, or refuses another shape', async () => {
    const extra = {
      ...{
        id: `pat_${'0'.repeat(24)}`,
        scope_type: 'agent',
        scope_id: 'agt_1',
        gate: false,
        label: 'x',
        daily_cap_usd: '1.5',
        single_use: true,
        created_at: '2026-01-01T00:00:00.000Z',
        expires_at: null,
        used_at: null,
        revoked_at: null,
        parent_token_id: null,
        created_by: 'ses_1',
      },
      added_later: 1,
    };
    const s = await serve({ '': extra, c1: { ...extra, daily_cap_usd: 'lots' } });
    try {
      assert.deepEqual(
        await s.client.request('GET', '/list', { reply: patViewSchema }),
        extra,
        'unknown keys kept, key order as sent',
      );
      assert.deepEqual(
        Object.keys(await s.client.request('GET', '/list', { reply: patViewSchema })),
        Object.keys(extra),
      );
      await assert.rejects(
        s.client.request('GET', '/list', { query: { cursor: 'c1' }, reply: patViewSchema }),
        (err: unknown) => invalidReply(err) && (err as CliError).details?.field === 'daily_cap_usd',
      );
    } finally {
      await s.close();
    }
  });
});
