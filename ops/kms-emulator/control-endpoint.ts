/**
 * The KMS emulator's control endpoint, deliberately outside the KMS protocol (its own path prefix
 * `/__emulator/`, plain JSON, no SigV4), for tests and scripts in another process (the sandbox, a shell):
 *
 *   GET    /__emulator/health       → {status: 'ok', testDouble: true, region, accountId, keys}
 *   GET    /__emulator/stats        → request counts (see request-stats.ts)
 *   POST   /__emulator/stats/reset  → 204
 *   GET    /__emulator/faults       → active rules, rate limit, unreachability, stalled requests
 *   POST   /__emulator/faults       → add one: a fault rule ({mode: 'throttle'|'fail'|'deny'|'stall'|'drop', ...}),
 *                                     {mode: 'rate_limit', perSecond, burst?, operations?}, or
 *                                     {mode: 'unreachable', as?: 'reset'|'refuse', durationMs?}
 *   DELETE /__emulator/faults       → clear every fault and release stalled requests (204)
 *   POST   /__emulator/keys/complete-pending-deletions → {deleted: [keyId...]} (the waiting period "elapses")
 *
 * While the emulator is unreachable in `reset` mode this endpoint still answers (only KMS requests are
 * dropped); in `refuse` mode nothing listens, so pass `durationMs` to come back by itself.
 * What it does not defend: anyone who can reach the port can change faults; bind it to loopback.
 */
import type http from 'node:http';
import { z } from 'zod';
import { faultRuleSchema, rateLimitSchema, type FaultInjector } from './fault-injector.js';
import type { KeyStore } from './key-store.js';
import { readBody, sendControlJson } from './kms-wire.js';
import type { KmsRequestStats } from './request-stats.js';

export const CONTROL_PATH_PREFIX = '/__emulator/';

export const controlFaultSchema = z.discriminatedUnion('mode', [
  ...faultRuleSchema.options,
  rateLimitSchema.extend({ mode: z.literal('rate_limit') }).strict(),
  z
    .object({
      mode: z.literal('unreachable'),
      as: z.enum(['reset', 'refuse']).optional(),
      durationMs: z.number().int().min(1).max(3_600_000).optional(),
    })
    .strict(),
]);
export type ControlFault = z.infer<typeof controlFaultSchema>;

export interface ControlDeps {
  store: KeyStore;
  stats: KmsRequestStats;
  faults: FaultInjector;
}

/** Applies one control-endpoint fault (also usable programmatically). */
export function applyControlFault(faults: FaultInjector, fault: ControlFault): void {
  if (fault.mode === 'rate_limit') {
    const { mode: _mode, ...limit } = fault;
    faults.rateLimit(limit);
  } else if (fault.mode === 'unreachable') {
    faults.unreachable(fault.as ?? 'reset');
    if (fault.durationMs !== undefined) setTimeout(() => faults.reachable(), fault.durationMs).unref();
  } else {
    faults.add(fault);
  }
}

export function createControlHandler(
  deps: ControlDeps,
): (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void> {
  const { store, stats, faults } = deps;
  return async function handleControl(req, res) {
    const path = (req.url ?? '/').split('?')[0]!;
    const route = `${req.method} ${path.slice(CONTROL_PATH_PREFIX.length)}`;
    switch (route) {
      case 'GET health':
        return sendControlJson(res, 200, {
          status: 'ok',
          testDouble: true,
          region: store.region,
          accountId: store.accountId,
          keys: store.size,
        });
      case 'GET stats':
        return sendControlJson(res, 200, stats.snapshot());
      case 'POST stats/reset':
        stats.reset();
        return sendControlJson(res, 200, { reset: true });
      case 'GET faults':
        return sendControlJson(res, 200, faults.describe());
      case 'DELETE faults':
        faults.reset();
        return sendControlJson(res, 200, faults.describe());
      case 'POST keys/complete-pending-deletions':
        return sendControlJson(res, 200, { deleted: store.completePendingDeletions() });
      case 'POST faults': {
        let body: unknown;
        try {
          body = JSON.parse((await readBody(req, 64 * 1024)).toString('utf8'));
        } catch {
          return sendControlJson(res, 400, {
            error_code: 'invalid_request',
            user_message: 'body must be a JSON object of at most 64 KiB',
          });
        }
        const parsed = controlFaultSchema.safeParse(body);
        if (!parsed.success) {
          return sendControlJson(res, 400, {
            error_code: 'invalid_request',
            user_message: 'not a fault',
            issues: parsed.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })),
          });
        }
        // Answer first: an `unreachable` fault closes this very connection (and, as `refuse`, the listener).
        if (parsed.data.mode === 'unreachable') {
          res.once('finish', () => applyControlFault(faults, parsed.data));
          return sendControlJson(res, 200, { ...faults.describe(), applying: parsed.data });
        }
        applyControlFault(faults, parsed.data);
        return sendControlJson(res, 200, faults.describe());
      }
      default:
        return sendControlJson(res, 404, { error_code: 'not_found', user_message: `no control route ${route}` });
    }
  };
}
