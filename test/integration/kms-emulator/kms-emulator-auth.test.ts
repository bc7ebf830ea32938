/**
 * The KMS emulator refuses what AWS refuses at the door: no Authorization header
 * (MissingAuthenticationTokenException), a malformed one (IncompleteSignatureException), an unknown
 * access key (UnrecognizedClientException), a wrong secret, a scope for another region or service, a
 * body or signed header changed after signing, or a date more than 15 minutes off
 * (InvalidSignatureException). Every refusal is a 400 with the KMS error shape, no operation runs, and
 * the real SDK reports each by name without retrying. `credentials: 'any-signed'` checks shape only.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { ListKeysCommand } from '@aws-sdk/client-kms';
import { Sha256 } from '@smithy/core/checksum';
import { HttpRequest } from '@smithy/core/protocols';
import { SignatureV4 } from '@smithy/signature-v4';
import { KMS_EMULATOR_TEST_CREDENTIALS, type KmsEmulator } from '../../../ops/kms-emulator/kms-emulator.js';
import { kmsClient, kmsFailure, startQuietKmsEmulator } from './kms-emulator-test-client.js';

interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

function postRaw(url: string, headers: Record<string, string>, body: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/`,
      { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Headers of a request signed like the SDK signs it (host, content type, target, date, body hash). */
async function signedHeaders(
  kms: KmsEmulator,
  body: string,
  options: { target?: string; signingDate?: Date; region?: string } = {},
): Promise<Record<string, string>> {
  const url = new URL(kms.url);
  const signer = new SignatureV4({
    credentials: KMS_EMULATOR_TEST_CREDENTIALS,
    region: options.region ?? kms.region,
    service: 'kms',
    sha256: Sha256,
  });
  const request = new HttpRequest({
    method: 'POST',
    protocol: 'http:',
    hostname: url.hostname,
    port: Number(url.port),
    path: '/',
    headers: {
      host: url.host,
      'content-type': 'application/x-amz-json-1.1',
      'x-amz-target': options.target ?? 'TrentService.ListKeys',
    },
    body,
  });
  const signed = await signer.sign(request, { signingDate: options.signingDate ?? new Date() });
  return signed.headers as Record<string, string>;
}

describe('KMS emulator: SigV4 at the door', function () {
  let kms: KmsEmulator;

  before(async () => {
    kms = await startQuietKmsEmulator();
  });
  after(async () => {
    await kms?.close();
  });

  it('a correctly signed raw request is served (the baseline the refusals below differ from)', async () => {
    const answer = await postRaw(kms.url, await signedHeaders(kms, '{}'), '{}');
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.body, { Keys: [], Truncated: false });
  });

  it('no Authorization header: 400 MissingAuthenticationTokenException; a malformed one: IncompleteSignatureException; nothing runs', async () => {
    kms.stats.reset();
    const unsigned = await postRaw(
      kms.url,
      { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'TrentService.ListKeys' },
      '{}',
    );
    assert.equal(unsigned.status, 400);
    assert.deepEqual(unsigned.body, {
      __type: 'MissingAuthenticationTokenException',
      message: 'Missing Authentication Token',
    });
    assert.equal(unsigned.headers['x-treasury-kms-emulator'], 'test-double');
    const headers = await signedHeaders(kms, '{}');
    for (const authorization of [
      'Bearer abc',
      'AWS4-HMAC-SHA256 Credential=AKID/20261125/us-east-1/kms/aws4_request',
      'AWS4-HMAC-SHA256 Credential=AKID/x, SignedHeaders=host, Signature=' + '0'.repeat(64),
    ]) {
      const answer = await postRaw(kms.url, { ...headers, authorization }, '{}');
      assert.equal(answer.status, 400, authorization);
      assert.equal(answer.body['__type'], 'IncompleteSignatureException', authorization);
    }
    const noDate = { ...headers };
    delete noDate['x-amz-date'];
    assert.equal((await postRaw(kms.url, noDate, '{}')).body['__type'], 'IncompleteSignatureException');
    assert.equal(kms.stats.received('ListKeys'), 0, 'no operation was dispatched');
    assert.equal(kms.stats.snapshot().refusedBeforeDispatch['IncompleteSignatureException'], 4);
  });

  it('a body or a signed header changed after signing: InvalidSignatureException', async () => {
    const headers = await signedHeaders(kms, '{}');
    const body = await postRaw(kms.url, headers, '{"Limit":1}');
    assert.equal(body.status, 400);
    assert.equal(body.body['__type'], 'InvalidSignatureException');
    const bodyAndHash = await postRaw(
      kms.url,
      { ...headers, 'x-amz-content-sha256': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' },
      '',
    );
    assert.equal(
      bodyAndHash.body['__type'],
      'InvalidSignatureException',
      'a body hash that matches the new body but not the signature',
    );
    const target = await postRaw(kms.url, { ...headers, 'x-amz-target': 'TrentService.CreateKey' }, '{}');
    assert.equal(target.body['__type'], 'InvalidSignatureException');
    assert.equal(kms.stats.received('CreateKey'), 0);
  });

  it('a date more than 15 minutes off: InvalidSignatureException "Signature expired"', async () => {
    const stale = await postRaw(
      kms.url,
      await signedHeaders(kms, '{}', { signingDate: new Date(Date.now() - 16 * 60_000) }),
      '{}',
    );
    assert.equal(stale.body['__type'], 'InvalidSignatureException');
    assert.match(String(stale.body['message']), /^Signature expired/);
    const future = await postRaw(
      kms.url,
      await signedHeaders(kms, '{}', { signingDate: new Date(Date.now() + 16 * 60_000) }),
      '{}',
    );
    assert.equal(future.body['__type'], 'InvalidSignatureException');
  });

  it('through the SDK: a wrong secret, an unknown key, another region; each named, client-side, not retried', async () => {
    const cases = [
      {
        credentials: { ...KMS_EMULATOR_TEST_CREDENTIALS, secretAccessKey: 'wrong' },
        expected: 'InvalidSignatureException',
      },
      { credentials: { accessKeyId: 'AKIDUNKNOWN', secretAccessKey: 'x' }, expected: 'UnrecognizedClientException' },
      {
        credentials: { ...KMS_EMULATOR_TEST_CREDENTIALS, sessionToken: 'unexpected' },
        expected: 'UnrecognizedClientException',
      },
      { region: 'eu-west-1', expected: 'InvalidSignatureException' },
    ];
    for (const c of cases) {
      const client = kmsClient(kms, {
        retries: 2,
        ...(c.credentials ? { credentials: c.credentials } : {}),
        ...(c.region ? { region: c.region } : {}),
      });
      const failure = await kmsFailure(client.send(new ListKeysCommand({})));
      client.destroy();
      assert.equal(failure.name, c.expected, JSON.stringify(c));
      assert.equal(failure.status, 400);
      assert.equal(failure.fault, 'client');
      assert.equal(failure.attempts, 1);
    }
  });

  it('session credentials: the signed x-amz-security-token must match; without it the key is unrecognized', async () => {
    const session = {
      accessKeyId: 'ASIAKMSEMULATORTEST',
      secretAccessKey: 'session-secret',
      sessionToken: 'session-token-for-tests',
    };
    const withSession = await startQuietKmsEmulator({ credentials: [session] });
    try {
      const good = kmsClient(withSession);
      assert.deepEqual((await good.send(new ListKeysCommand({}))).Keys, []);
      good.destroy();
      const { sessionToken: _dropped, ...noToken } = session;
      const missing = kmsClient(withSession, { credentials: noToken });
      assert.equal((await kmsFailure(missing.send(new ListKeysCommand({})))).name, 'UnrecognizedClientException');
      missing.destroy();
      const other = kmsClient(withSession, { credentials: { ...session, sessionToken: 'another' } });
      assert.equal((await kmsFailure(other.send(new ListKeysCommand({})))).name, 'UnrecognizedClientException');
      other.destroy();
    } finally {
      await withSession.close();
    }
  });

  it("credentials: 'any-signed' accepts any well-formed signature but still refuses an unsigned request", async () => {
    const lax = await startQuietKmsEmulator({ credentials: 'any-signed' });
    try {
      const client = kmsClient(lax, { credentials: { accessKeyId: 'AKIDANY', secretAccessKey: 'anything' } });
      assert.deepEqual((await client.send(new ListKeysCommand({}))).Keys, []);
      client.destroy();
      const unsigned = await postRaw(
        lax.url,
        { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'TrentService.ListKeys' },
        '{}',
      );
      assert.equal(unsigned.body['__type'], 'MissingAuthenticationTokenException');
    } finally {
      await lax.close();
    }
  });

  it("unknown operations and other services' targets are UnknownOperationException in the KMS shape", async () => {
    const unknown = await postRaw(kms.url, await signedHeaders(kms, '{}', { target: 'TrentService.Encrypt' }), '{}');
    assert.equal(unknown.body['__type'], 'UnknownOperationException');
    const other = await postRaw(
      kms.url,
      await signedHeaders(kms, '{}', { target: 'DynamoDB_20120810.ListTables' }),
      '{}',
    );
    assert.equal(other.body['__type'], 'UnknownOperationException');
  });
});
