/**
 * The KMS emulator's authentication gate: every KMS request must carry an AWS Signature Version 4
 * `Authorization` header (`AWS4-HMAC-SHA256 Credential=<akid>/<yyyymmdd>/<region>/kms/aws4_request,
 * SignedHeaders=..., Signature=<hex>`) and an `X-Amz-Date`, so a client that forgot to sign (or signs
 * for another service or region) fails here as it would against AWS.
 *
 * With configured credentials (the default) the signature itself is checked: the emulator recomputes it
 * with the SDK's own signer (`@smithy/signature-v4`, over exactly the headers the client listed as
 * signed, at the client's `X-Amz-Date`) and compares in constant time; `x-amz-content-sha256`, when
 * sent, must be the SHA-256 of the body actually received; a session token must match; the date must be
 * within 15 minutes of the emulator's clock. With `credentials: 'any-signed'` only the shape is checked.
 *
 * Refusals use AWS's codes: MissingAuthenticationTokenException (no Authorization header),
 * IncompleteSignatureException (a malformed one), UnrecognizedClientException (unknown access key or
 * session token), InvalidSignatureException (wrong signature, scope, body hash or an expired date; the
 * message starts "Signature expired" in the last case, which the SDK treats as clock skew and retries).
 *
 * What it does not defend: this is a test double. The test credentials are public constants, nothing
 * is authorised per key or operation (see the fault injector's `deny` mode for AccessDeniedException),
 * and there is no replay protection beyond the date window, as in SigV4 itself.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Sha256 } from '@smithy/core/checksum';
import { HttpRequest } from '@smithy/core/protocols';
import { SignatureV4 } from '@smithy/signature-v4';
import { KmsError } from './kms-errors.js';

export interface KmsEmulatorCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** Public test credentials the emulator accepts by default. Not a secret: never use them anywhere else. */
export const KMS_EMULATOR_TEST_CREDENTIALS: Readonly<KmsEmulatorCredentials> = Object.freeze({
  accessKeyId: 'AKIDKMSEMULATORTEST',
  secretAccessKey: 'kms-emulator-test-secret-not-a-real-aws-key',
});

export interface SignedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface SigV4Identity {
  accessKeyId: string;
  region: string;
}

const MAX_CLOCK_SKEW_MS = 15 * 60 * 1000;
const AMZ_DATE_PATTERN = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;
const SIGNATURE_MISMATCH =
  'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.';

const incomplete = (message: string) => new KmsError('IncompleteSignatureException', message);
const invalid = (message: string) => new KmsError('InvalidSignatureException', message);
const unrecognized = () =>
  new KmsError('UnrecognizedClientException', 'The security token included in the request is invalid.');

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

interface ParsedAuthorization {
  accessKeyId: string;
  scopeDate: string;
  region: string;
  service: string;
  terminator: string;
  signedHeaders: string[];
  signature: string;
}

function parseAuthorization(header: string): ParsedAuthorization {
  const prefix = 'AWS4-HMAC-SHA256 ';
  if (!header.startsWith(prefix))
    throw incomplete(
      `Authorization header requires the 'AWS4-HMAC-SHA256' algorithm. Authorization=${header.split(' ')[0] ?? ''}`,
    );
  const params = new Map<string, string>();
  for (const part of header.slice(prefix.length).split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) params.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  const missing = ['Credential', 'SignedHeaders', 'Signature'].filter((name) => !params.get(name));
  if (missing.length > 0)
    throw incomplete(missing.map((name) => `Authorization header requires '${name}' parameter.`).join(' '));
  const scope = params.get('Credential')!.split('/');
  if (scope.length !== 5 || scope.some((s) => s === ''))
    throw incomplete(
      `Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term, got '${params.get('Credential')}'`,
    );
  const [accessKeyId, scopeDate, region, service, terminator] = scope as [string, string, string, string, string];
  const signature = params.get('Signature')!;
  if (!/^[0-9a-f]{64}$/.test(signature)) throw invalid(SIGNATURE_MISMATCH);
  return {
    accessKeyId,
    scopeDate,
    region,
    service,
    terminator,
    signedHeaders: params.get('SignedHeaders')!.split(';'),
    signature,
  };
}

function parseAmzDate(value: string): Date {
  const m = AMZ_DATE_PATTERN.exec(value);
  if (!m)
    throw incomplete(
      `Date must be in ISO-8601 'basic format'. Got '${value}'. See http://en.wikipedia.org/wiki/ISO_8601`,
    );
  const [, y, mo, d, h, mi, s] = m as unknown as [string, string, string, string, string, string, string];
  return new Date(Date.UTC(+y, +mo - 1, +d, +h, +mi, +s));
}

export class SigV4Check {
  private readonly signers = new Map<string, { credentials: KmsEmulatorCredentials; signer: SignatureV4 }>();

  /** `credentials: 'any-signed'` checks the header's shape and scope only, not the signature. */
  constructor(
    private readonly region: string,
    credentials: ReadonlyArray<KmsEmulatorCredentials> | 'any-signed',
  ) {
    if (credentials !== 'any-signed') {
      for (const c of credentials) {
        this.signers.set(c.accessKeyId, {
          credentials: c,
          signer: new SignatureV4({ credentials: c, region, service: 'kms', sha256: Sha256, applyChecksum: false }),
        });
      }
    }
  }

  get verifiesSignatures(): boolean {
    return this.signers.size > 0;
  }

  /** Answers who signed the request, or throws the KmsError AWS would answer. */
  async check(req: SignedRequest, now = new Date()): Promise<SigV4Identity> {
    const authorization = headerValue(req.headers, 'authorization');
    if (authorization === undefined || authorization === '')
      throw new KmsError('MissingAuthenticationTokenException', 'Missing Authentication Token');
    const auth = parseAuthorization(authorization);
    const amzDate = headerValue(req.headers, 'x-amz-date');
    if (amzDate === undefined)
      throw incomplete("Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.");
    const signingDate = parseAmzDate(amzDate);
    if (auth.scopeDate !== amzDate.slice(0, 8))
      throw invalid(
        `Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '${auth.scopeDate}' != '${amzDate.slice(0, 8)}', from '${amzDate}'.`,
      );
    if (auth.service !== 'kms') throw invalid(`Credential should be scoped to correct service: 'kms'.`);
    if (auth.terminator !== 'aws4_request')
      throw invalid(`Credential should be scoped with a valid terminator: 'aws4_request', not '${auth.terminator}'.`);
    if (auth.region !== this.region)
      throw invalid(`Credential should be scoped to a valid region, not '${auth.region}'.`);
    for (const required of ['host', 'x-amz-date']) {
      if (!auth.signedHeaders.includes(required))
        throw invalid(`'${required}' must be a 'SignedHeader' in the AWS Authorization.`);
    }
    if (!this.verifiesSignatures) return { accessKeyId: auth.accessKeyId, region: auth.region };

    const entry = this.signers.get(auth.accessKeyId);
    if (!entry) throw unrecognized();
    const sentToken = headerValue(req.headers, 'x-amz-security-token');
    if ((entry.credentials.sessionToken ?? undefined) !== sentToken) throw unrecognized();
    const skew = signingDate.getTime() - now.getTime();
    if (skew < -MAX_CLOCK_SKEW_MS)
      throw invalid(`Signature expired: ${amzDate} is now earlier than the emulator's clock minus 15 min.`);
    if (skew > MAX_CLOCK_SKEW_MS)
      throw invalid(`Signature not yet current: ${amzDate} is still later than the emulator's clock plus 15 min.`);
    const sentBodyHash = headerValue(req.headers, 'x-amz-content-sha256');
    if (sentBodyHash !== undefined && sentBodyHash !== createHash('sha256').update(req.body).digest('hex')) {
      throw invalid("The provided 'x-amz-content-sha256' header does not match what was computed.");
    }

    const signedHeaders: Record<string, string> = {};
    for (const name of auth.signedHeaders) {
      const value = headerValue(req.headers, name);
      if (value === undefined) throw invalid(SIGNATURE_MISMATCH);
      signedHeaders[name] = value;
    }
    const url = new URL(req.path, 'http://emulator.invalid');
    const query: Record<string, string> = {};
    for (const [k, v] of url.searchParams) query[k] = v;
    const recomputed = await entry.signer.sign(
      new HttpRequest({
        method: req.method,
        protocol: 'http:',
        hostname: 'emulator.invalid',
        path: url.pathname,
        query,
        headers: signedHeaders,
        body: req.body,
      }),
      { signingDate, signableHeaders: new Set(auth.signedHeaders), signingRegion: auth.region, signingService: 'kms' },
    );
    const expected = /Signature=([0-9a-f]{64})$/.exec(String(recomputed.headers['authorization'] ?? ''))?.[1];
    if (expected === undefined || !timingSafeEqual(Buffer.from(expected, 'hex'), Buffer.from(auth.signature, 'hex')))
      throw invalid(SIGNATURE_MISMATCH);
    return { accessKeyId: auth.accessKeyId, region: auth.region };
  }
}
