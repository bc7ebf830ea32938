/**
 * The KMS emulator's key, alias and tag operations through the real @aws-sdk/client-kms: CreateKey with
 * tags and a policy, aliases resolving like real KMS (key id, key ARN, alias name, alias ARN), ListKeys
 * and ListAliases paginating to the end with the SDK's own paginators, tags listed and overwritten,
 * ScheduleKeyDeletion's 7–30 day window, state changes refused on a key pending deletion, well-formed
 * ARNs and epoch-second timestamps, and the test-double header on every answer.
 */
import assert from 'node:assert/strict';
import {
  CancelKeyDeletionCommand,
  CreateAliasCommand,
  CreateKeyCommand,
  DescribeKeyCommand,
  DisableKeyCommand,
  GetKeyPolicyCommand,
  ListResourceTagsCommand,
  ScheduleKeyDeletionCommand,
  TagResourceCommand,
  UpdateAliasCommand,
  paginateListAliases,
  paginateListKeys,
} from '@aws-sdk/client-kms';
import { createSigningKey, kmsClient, kmsFailure, useKmsEmulatorClient } from './kms-emulator-test-client.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('KMS emulator: keys, aliases and tags through the real AWS SDK', function () {
  const { kms, client } = useKmsEmulatorClient();

  it('CreateKey: an ECC_SECG_P256K1 SIGN_VERIFY key with tags and a stored policy; metadata as DescribeKey gives it', async () => {
    const policy = JSON.stringify({
      Version: '2012-10-17',
      Statement: [
        {
          Sid: 'account',
          Effect: 'Allow',
          Principal: { AWS: 'arn:aws:iam::111122223333:root' },
          Action: 'kms:*',
          Resource: '*',
        },
      ],
    });
    const before = Date.now();
    const out = await client.send(
      new CreateKeyCommand({
        KeySpec: 'ECC_SECG_P256K1',
        KeyUsage: 'SIGN_VERIFY',
        Description: 'wallet',
        Policy: policy,
        Tags: [{ TagKey: 'treasury:account', TagValue: 'acc_1' }],
      }),
    );
    const meta = out.KeyMetadata!;
    assert.match(meta.KeyId!, UUID);
    assert.equal(meta.Arn, `arn:aws:kms:us-east-1:111122223333:key/${meta.KeyId}`);
    assert.equal(meta.AWSAccountId, '111122223333');
    assert.equal(meta.KeyState, 'Enabled');
    assert.equal(meta.Enabled, true);
    assert.equal(meta.KeySpec, 'ECC_SECG_P256K1');
    assert.equal(meta.KeyUsage, 'SIGN_VERIFY');
    assert.deepEqual(meta.SigningAlgorithms, ['ECDSA_SHA_256']);
    assert.ok(
      meta.CreationDate instanceof Date && meta.CreationDate.getTime() >= before - 1000,
      'CreationDate arrives as epoch seconds the SDK turns into a Date',
    );
    const policyOut = await client.send(new GetKeyPolicyCommand({ KeyId: meta.KeyId!, PolicyName: 'default' }));
    assert.equal(policyOut.Policy, policy);
    const tags = await client.send(new ListResourceTagsCommand({ KeyId: meta.Arn! }));
    assert.deepEqual(tags.Tags, [{ TagKey: 'treasury:account', TagValue: 'acc_1' }]);
  });

  it('refuses key kinds it does not emulate, and a policy that is not JSON', async () => {
    assert.equal((await kmsFailure(client.send(new CreateKeyCommand({})))).name, 'UnsupportedOperationException');
    assert.equal(
      (await kmsFailure(client.send(new CreateKeyCommand({ KeySpec: 'ECC_SECG_P256K1', KeyUsage: 'ENCRYPT_DECRYPT' }))))
        .name,
      'ValidationException',
    );
    assert.equal(
      (
        await kmsFailure(
          client.send(
            new CreateKeyCommand({ KeySpec: 'ECC_SECG_P256K1', KeyUsage: 'SIGN_VERIFY', Policy: '{not json' }),
          ),
        )
      ).name,
      'MalformedPolicyDocumentException',
    );
  });

  it('a key is reached by key id, key ARN, alias name and alias ARN; unknown ones are NotFoundException (400)', async () => {
    const key = await createSigningKey(client);
    await client.send(new CreateAliasCommand({ AliasName: 'alias/treasury/wallet-1', TargetKeyId: key.arn }));
    for (const id of [
      key.keyId,
      key.arn,
      'alias/treasury/wallet-1',
      `arn:aws:kms:us-east-1:111122223333:alias/treasury/wallet-1`,
    ]) {
      const out = await client.send(new DescribeKeyCommand({ KeyId: id }));
      assert.equal(out.KeyMetadata?.KeyId, key.keyId, id);
    }
    for (const id of [
      'alias/none',
      '00000000-0000-4000-8000-000000000000',
      'arn:aws:kms:eu-west-1:111122223333:key/' + key.keyId,
      'arn:aws:kms:us-east-1:444455556666:key/' + key.keyId,
    ]) {
      const failure = await kmsFailure(client.send(new DescribeKeyCommand({ KeyId: id })));
      assert.equal(failure.name, 'NotFoundException', id);
      assert.equal(failure.status, 400);
    }
    const taken = await kmsFailure(
      client.send(new CreateAliasCommand({ AliasName: 'alias/treasury/wallet-1', TargetKeyId: key.keyId })),
    );
    assert.equal(taken.name, 'AlreadyExistsException');
    for (const bad of ['wallet', 'alias/aws/reserved', 'alias/has space']) {
      assert.equal(
        (await kmsFailure(client.send(new CreateAliasCommand({ AliasName: bad, TargetKeyId: key.keyId })))).name,
        'InvalidAliasNameException',
        bad,
      );
    }
    const next = await createSigningKey(client);
    await client.send(new UpdateAliasCommand({ AliasName: 'alias/treasury/wallet-1', TargetKeyId: next.keyId }));
    assert.equal(
      (await client.send(new DescribeKeyCommand({ KeyId: 'alias/treasury/wallet-1' }))).KeyMetadata?.KeyId,
      next.keyId,
    );
  });

  it('ListKeys and ListAliases page through everything with the SDK paginators (NextMarker left out on the last page)', async () => {
    const created = new Set<string>();
    for (let i = 0; i < 7; i++) {
      const key = await createSigningKey(client);
      created.add(key.keyId);
      await client.send(new CreateAliasCommand({ AliasName: `alias/page/${i}`, TargetKeyId: key.keyId }));
    }
    const listed: string[] = [];
    let pages = 0;
    for await (const page of paginateListKeys({ client, pageSize: 3 }, {})) {
      pages++;
      for (const k of page.Keys ?? []) {
        listed.push(k.KeyId!);
        assert.equal(k.KeyArn, `arn:aws:kms:us-east-1:111122223333:key/${k.KeyId}`);
      }
    }
    assert.equal(new Set(listed).size, listed.length, 'no key listed twice');
    for (const id of created) assert.ok(listed.includes(id));
    assert.ok(pages >= 3);
    const aliases: string[] = [];
    for await (const page of paginateListAliases({ client, pageSize: 2 }, {}))
      for (const a of page.Aliases ?? []) aliases.push(a.AliasName!);
    for (let i = 0; i < 7; i++) assert.ok(aliases.includes(`alias/page/${i}`));
  });

  it('TagResource adds and overwrites tags; a key id or ARN is required (not an alias)', async () => {
    const key = await createSigningKey(client, { 'treasury:account': 'acc_2' });
    await client.send(
      new TagResourceCommand({
        KeyId: key.keyId,
        Tags: [
          { TagKey: 'treasury:wallet', TagValue: 'w_1' },
          { TagKey: 'treasury:account', TagValue: 'acc_3' },
        ],
      }),
    );
    const tags = await client.send(new ListResourceTagsCommand({ KeyId: key.keyId }));
    assert.deepEqual((tags.Tags ?? []).map((t) => `${t.TagKey}=${t.TagValue}`).sort(), [
      'treasury:account=acc_3',
      'treasury:wallet=w_1',
    ]);
    await client.send(new CreateAliasCommand({ AliasName: 'alias/tags', TargetKeyId: key.keyId }));
    assert.equal(
      (
        await kmsFailure(
          client.send(new TagResourceCommand({ KeyId: 'alias/tags', Tags: [{ TagKey: 'a', TagValue: 'b' }] })),
        )
      ).name,
      'ValidationException',
    );
  });

  it('ScheduleKeyDeletion: 7–30 days only; DescribeKey then says PendingDeletion with its DeletionDate; state changes are KMSInvalidStateException; cancel makes it Disabled', async () => {
    const key = await createSigningKey(client);
    for (const days of [6, 31, 0]) {
      const failure = await kmsFailure(
        client.send(new ScheduleKeyDeletionCommand({ KeyId: key.keyId, PendingWindowInDays: days })),
      );
      assert.equal(failure.name, 'ValidationException', `${days} days`);
    }
    const now = Date.now();
    const out = await client.send(new ScheduleKeyDeletionCommand({ KeyId: key.keyId, PendingWindowInDays: 7 }));
    assert.equal(out.KeyId, key.arn);
    assert.equal(out.PendingWindowInDays, 7);
    const days7 = 7 * 86_400_000;
    assert.ok(Math.abs(out.DeletionDate!.getTime() - (now + days7)) < 10_000);
    const meta = (await client.send(new DescribeKeyCommand({ KeyId: key.keyId }))).KeyMetadata!;
    assert.equal(meta.KeyState, 'PendingDeletion');
    assert.equal(meta.Enabled, false);
    assert.ok(meta.DeletionDate instanceof Date);
    assert.equal(meta.PendingDeletionWindowInDays, 7);
    for (const call of [
      client.send(new DisableKeyCommand({ KeyId: key.keyId })),
      client.send(new ScheduleKeyDeletionCommand({ KeyId: key.keyId, PendingWindowInDays: 7 })),
      client.send(new TagResourceCommand({ KeyId: key.keyId, Tags: [{ TagKey: 'a', TagValue: 'b' }] })),
      client.send(new CreateAliasCommand({ AliasName: 'alias/too-late', TargetKeyId: key.keyId })),
    ]) {
      assert.equal((await kmsFailure(call)).name, 'KMSInvalidStateException');
    }
    await client.send(new CancelKeyDeletionCommand({ KeyId: key.keyId }));
    assert.equal((await client.send(new DescribeKeyCommand({ KeyId: key.keyId }))).KeyMetadata?.KeyState, 'Disabled');
  });

  it('every answer, success or error, carries x-treasury-kms-emulator: test-double and a request id', async () => {
    const seen: Array<Record<string, string>> = [];
    const observed = kmsClient(kms);
    observed.middlewareStack.add(
      (next) => async (args) => {
        const result = await next(args);
        seen.push((result.response as { headers: Record<string, string> }).headers);
        return result;
      },
      { step: 'deserialize', name: 'captureHeaders' },
    );
    const key = await createSigningKey(observed);
    await kmsFailure(observed.send(new DescribeKeyCommand({ KeyId: 'alias/missing' })));
    const health = await fetch(`${kms.url}/__emulator/health`);
    observed.destroy();
    assert.equal(seen.length, 2, 'the CreateKey success and the DescribeKey NotFoundException');
    for (const headers of seen) {
      assert.equal(headers['x-treasury-kms-emulator'], 'test-double');
      assert.match(headers['x-amzn-requestid'] ?? '', UUID);
    }
    assert.equal(health.headers.get('x-treasury-kms-emulator'), 'test-double');
    assert.equal(((await health.json()) as { testDouble: boolean }).testDouble, true);
    assert.ok(key.keyId);
  });
});
