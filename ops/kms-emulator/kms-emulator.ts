/**
 * ╔══════════════════════════════════════════════════════════════════════════════════════════════╗
 * ║ TEST DOUBLE. The KMS emulator keeps every private key in its own process memory, in the clear. ║
 * ║ It exists for tests, benchmarks and the sandbox; never point a signer that holds money at it.  ║
 * ╚══════════════════════════════════════════════════════════════════════════════════════════════╝
 *
 * A local, wire-compatible stand-in for AWS KMS: a node:http server speaking the KMS JSON 1.1 protocol
 * (POST /, `X-Amz-Target: TrentService.<Op>`, `application/x-amz-json-1.1`, AWS error shapes) so that the
 * real `@aws-sdk/client-kms` talks to it through an endpoint override. It emulates the operations the
 * AWS KMS key backend uses on ECC_SECG_P256K1 SIGN_VERIFY keys (see kms-dispatch.ts), checks every
 * request's SigV4 signature (sigv4-check.ts), and can be told to throttle, fail, deny, stall, drop or be
 * unreachable (fault-injector.ts), counting what it saw (request-stats.ts). docs/kms-emulator.md.
 *
 *   const kms = await startKmsEmulator();
 *   const client = new KMSClient({ ...kms.clientConfig(), maxAttempts: 1 });
 *   kms.faults.throttle({ count: 2, operations: ['Sign'] });
 *   kms.stats.received('Sign');
 *   await kms.close();
 *
 * Every answer carries `x-treasury-kms-emulator: test-double`, and starting one logs a warning.
 * What it defends: nothing; it binds 127.0.0.1 by default and should stay there (the control endpoint
 * and the test credentials are unauthenticated by design).
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { pino, type Logger } from 'pino';
import { CONTROL_PATH_PREFIX, createControlHandler } from './control-endpoint.js';
import { FaultInjector } from './fault-injector.js';
import { KeyStore } from './key-store.js';
import { KmsError } from './kms-errors.js';
import { createKmsRequestHandler } from './kms-request-handler.js';
import { newRequestId, sendKmsError } from './kms-wire.js';
import { KmsRequestStats } from './request-stats.js';
import { KMS_EMULATOR_TEST_CREDENTIALS, SigV4Check, type KmsEmulatorCredentials } from './sigv4-check.js';

export { KMS_EMULATOR_TEST_CREDENTIALS, type KmsEmulatorCredentials } from './sigv4-check.js';
export type { FaultRule, RateLimit, UnreachableMode } from './fault-injector.js';
export type { KmsEmulatorStatsSnapshot } from './request-stats.js';
export type { FaultInjector, KeyStore, KmsRequestStats };

export const KMS_EMULATOR_DEFAULT_REGION = 'us-east-1';
/** A fake account id (AWS's documentation example), so ARNs are well-formed but point nowhere real. */
export const KMS_EMULATOR_ACCOUNT_ID = '111122223333';

export const TEST_DOUBLE_WARNING =
  'TEST DOUBLE: this KMS emulator keeps private keys in its own process memory, in the clear; it is for tests, benchmarks and the sandbox only. Never point a signer holding real funds at it.';

export interface StartKmsEmulatorOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  /** Default us-east-1; requests must be signed for this region. */
  region?: string;
  /** Default 111122223333. */
  accountId?: string;
  /** Accepted credentials (signatures verified), or 'any-signed' (shape only). Default: KMS_EMULATOR_TEST_CREDENTIALS. */
  credentials?: ReadonlyArray<KmsEmulatorCredentials> | 'any-signed';
  /** Serve /__emulator/* (default true). */
  controlEndpoint?: boolean;
  logger?: Logger;
}

export interface KmsClientSettings {
  region: string;
  endpoint: string;
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
}

export interface KmsEmulator {
  /** Base URL, e.g. http://127.0.0.1:43127 (the SDK's `endpoint`). */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly region: string;
  readonly accountId: string;
  readonly faults: FaultInjector;
  readonly stats: KmsRequestStats;
  readonly keys: KeyStore;
  /** `new KMSClient({ ...kms.clientConfig() })`: region, endpoint and the first accepted credentials. */
  clientConfig(): KmsClientSettings;
  /** Environment for a child process using the SDK's default chain (AWS_ENDPOINT_URL_KMS, AWS_REGION, keys). */
  clientEnv(): Record<string, string>;
  close(): Promise<void>;
}

export async function startKmsEmulator(options: StartKmsEmulatorOptions = {}): Promise<KmsEmulator> {
  const host = options.host ?? '127.0.0.1';
  const region = options.region ?? KMS_EMULATOR_DEFAULT_REGION;
  const accountId = options.accountId ?? KMS_EMULATOR_ACCOUNT_ID;
  const credentials = options.credentials ?? [KMS_EMULATOR_TEST_CREDENTIALS];
  const logger =
    options.logger ??
    pino({ name: 'kms-emulator', base: { service: 'kms-emulator' }, timestamp: pino.stdTimeFunctions.isoTime });
  const store = new KeyStore({ region, accountId });
  const stats = new KmsRequestStats();
  const faults = new FaultInjector();
  const sigv4 = new SigV4Check(region, credentials);
  const handleKms = createKmsRequestHandler({ store, stats, faults, sigv4, logger });
  const handleControl = options.controlEndpoint === false ? undefined : createControlHandler({ store, stats, faults });

  /** Sockets that carried a KMS request (not control ones): cut when the emulator becomes unreachable. */
  const kmsSockets = new Set<Socket>();
  const server = createEmulatorServer({ handleKms, handleControl, faults, stats, logger, kmsSockets });

  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.removeListener('error', reject);
        resolve((server.address() as AddressInfo).port);
      });
    });
  const port = await listen(options.port ?? 0);
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  let closed = false;
  let relisten: Promise<unknown> = Promise.resolve();

  const stopReachabilityListener = faults.onReachabilityChange((mode) => {
    if (closed) return;
    if (mode !== undefined) for (const socket of kmsSockets) socket.destroy();
    if (mode === 'refuse' && server.listening) {
      server.close();
      server.closeAllConnections();
    } else if (mode === undefined && !server.listening) {
      relisten = listen(port).catch((err: unknown) =>
        logger.error(
          { err: err instanceof Error ? err.message : String(err), port },
          'kms emulator could not listen again',
        ),
      );
    }
  });

  logger.warn({ url, region, accountId, verifiesSignatures: sigv4.verifiesSignatures }, TEST_DOUBLE_WARNING);

  const clientCredentials = clientCredentialsOf(credentials);

  return {
    url,
    host,
    port,
    region,
    accountId,
    faults,
    stats,
    keys: store,
    clientConfig: () => ({ region, endpoint: url, credentials: { ...clientCredentials } }),
    clientEnv: () => ({
      AWS_ENDPOINT_URL_KMS: url,
      AWS_REGION: region,
      AWS_ACCESS_KEY_ID: clientCredentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: clientCredentials.secretAccessKey,
      ...(clientCredentials.sessionToken ? { AWS_SESSION_TOKEN: clientCredentials.sessionToken } : {}),
    }),
    async close() {
      if (closed) return;
      closed = true;
      stopReachabilityListener();
      faults.reset();
      await relisten;
      server.closeAllConnections();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>;

/**
 * The HTTP server: control requests (under the control prefix) always answered; KMS requests cut while a fault
 * makes the emulator unreachable, their sockets tracked in `kmsSockets`; a handler's failure is KMS's internal error.
 */
function createEmulatorServer(deps: {
  handleKms: Handler;
  handleControl: Handler | undefined;
  faults: FaultInjector;
  stats: KmsRequestStats;
  logger: Logger;
  kmsSockets: Set<Socket>;
}): http.Server {
  const { handleKms, handleControl, faults, stats, logger, kmsSockets } = deps;
  const server = http.createServer((req, res) => {
    const isControl = handleControl !== undefined && (req.url ?? '').startsWith(CONTROL_PATH_PREFIX);
    if (!isControl && faults.unreachableAs !== undefined) {
      stats.recordInjected('unreachable');
      req.socket.destroy();
      return;
    }
    if (!isControl && !kmsSockets.has(req.socket)) {
      const socket = req.socket;
      kmsSockets.add(socket);
      socket.once('close', () => kmsSockets.delete(socket));
    }
    const handler = isControl ? handleControl : handleKms;
    handler(req, res).catch((err: unknown) => {
      logger.error({ err: err instanceof Error ? err.message : String(err) }, 'kms emulator request failed');
      sendKmsError(
        res,
        newRequestId(),
        new KmsError('KMSInternalException', 'An internal error occurred in the KMS emulator.'),
      );
    });
  });
  server.keepAliveTimeout = 65_000;
  server.on('connection', (socket: Socket) => {
    if (faults.unreachableAs === 'reset' && handleControl === undefined) socket.destroy();
  });
  return server;
}

/** The credentials a client of the emulator signs with: the first accepted ones (the test pair for any-signed). */
function clientCredentialsOf(credentials: NonNullable<StartKmsEmulatorOptions['credentials']>) {
  const first =
    credentials === 'any-signed' ? KMS_EMULATOR_TEST_CREDENTIALS : (credentials[0] ?? KMS_EMULATOR_TEST_CREDENTIALS);
  return {
    accessKeyId: first.accessKeyId,
    secretAccessKey: first.secretAccessKey,
    ...(first.sessionToken ? { sessionToken: first.sessionToken } : {}),
  };
}
