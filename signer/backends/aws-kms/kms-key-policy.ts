/**
 * The key policy each wallet key is created with when TREASURY_KMS_SIGNER_PRINCIPAL_ARN is set (without
 * it, KMS's default policy applies and IAM policies alone decide; docs/aws-kms.md). One policy per
 * Treasury account, attached to each of its wallet keys:
 *   - the AWS account root may administer the key (KMS's default statement; without it the key could
 *     become unmanageable, and CreateKey's lockout check refuses the policy);
 *   - the signer's principal may Sign, read the public key, describe, name it (CreateAlias), disable it
 *     and schedule its deletion — no more;
 *   - a secp256k1 key: nobody may Sign with `MessageType` RAW (KMS would hash again: the signer only signs
 *     digests it computed); an Ed25519 key: nobody may Sign but `ED25519_SHA_512` over a RAW message
 *     (PureEdDSA, what Solana verifies; never the prehashed variant), and nobody but the break-glass administrator (TREASURY_KMS_ADMIN_PRINCIPAL_ARN, when set)
 *     may EnableKey or CancelKeyDeletion: a destroyed wallet key stays destroyed.
 *
 * Protects against: another principal with broad IAM rights re-enabling a revoked key, or signing raw
 * messages. Known limits: the root statement keeps IAM in charge for everything not denied here; an
 * explicit deny cannot stop the account root user itself from changing the policy.
 */
import type { WalletKeyCurve } from '../key-backend.js';

/** The Deny statements that keep Sign to the curve's one algorithm and message type (./kms-curves.ts). */
function signOnlyAsIntended(curve: WalletKeyCurve): object[] {
  const denySignUnless = (Sid: string, key: string, value: string) => ({
    Sid,
    Effect: 'Deny',
    Principal: '*',
    Action: 'kms:Sign',
    Resource: '*',
    Condition: { StringNotEquals: { [key]: value } },
  });
  if (curve === 'ed25519')
    return [
      denySignUnless('RawMessagesOnly', 'kms:MessageType', 'RAW'),
      denySignUnless('PureEd25519Only', 'kms:SigningAlgorithm', 'ED25519_SHA_512'),
    ];
  return [denySignUnless('DigestsOnly', 'kms:MessageType', 'DIGEST')];
}

export interface KeyPolicyInputs {
  /** The wallet key's curve (default secp256k1): decides which Sign requests the policy allows. */
  curve?: WalletKeyCurve;
  awsAccountId: string;
  signerPrincipalArn: string;
  adminPrincipalArn: string | undefined;
  treasuryAccountId: string;
}

export function walletKeyPolicy(p: KeyPolicyInputs): string {
  const exceptAdmin = p.adminPrincipalArn ? { ArnNotEquals: { 'aws:PrincipalArn': p.adminPrincipalArn } } : undefined;
  return JSON.stringify({
    Version: '2012-10-17',
    Id: `treasury-account-${p.treasuryAccountId}`,
    Statement: [
      {
        Sid: 'AccountRootAdministers',
        Effect: 'Allow',
        Principal: { AWS: `arn:aws:iam::${p.awsAccountId}:root` },
        Action: 'kms:*',
        Resource: '*',
      },
      {
        Sid: 'TreasurySignerUses',
        Effect: 'Allow',
        Principal: { AWS: p.signerPrincipalArn },
        Action: [
          'kms:Sign',
          'kms:GetPublicKey',
          'kms:DescribeKey',
          'kms:CreateAlias',
          'kms:DisableKey',
          'kms:ScheduleKeyDeletion',
        ],
        Resource: '*',
      },
      ...signOnlyAsIntended(p.curve ?? 'secp256k1'),
      {
        Sid: 'DestroyedStaysDestroyed',
        Effect: 'Deny',
        Principal: '*',
        Action: ['kms:EnableKey', 'kms:CancelKeyDeletion'],
        Resource: '*',
        ...(exceptAdmin ? { Condition: exceptAdmin } : {}),
      },
    ],
  });
}

/** The 12-digit AWS account id of an IAM principal ARN (`arn:aws:iam::123456789012:role/x`), or undefined. */
export function awsAccountOfArn(arn: string): string | undefined {
  const m = /^arn:aws[a-z-]*:(?:iam|sts)::([0-9]{12}):/.exec(arn);
  return m?.[1];
}
