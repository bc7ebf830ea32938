/**
 * The key policy each wallet key is created with when TREASURY_KMS_SIGNER_PRINCIPAL_ARN is set (without
 * it, KMS's default policy applies and IAM policies alone decide; docs/aws-kms.md). One policy per
 * Treasury account, attached to each of its wallet keys:
 *   - the AWS account root may administer the key (KMS's default statement; without it the key could
 *     become unmanageable, and CreateKey's lockout check refuses the policy);
 *   - the signer's principal may Sign, read the public key, describe, name it (CreateAlias), disable it
 *     and schedule its deletion — no more;
 *   - nobody may Sign with `MessageType` RAW (KMS would hash again: the signer only signs digests it
 *     computed), and nobody but the break-glass administrator (TREASURY_KMS_ADMIN_PRINCIPAL_ARN, when set)
 *     may EnableKey or CancelKeyDeletion: a destroyed wallet key stays destroyed.
 *
 * Protects against: another principal with broad IAM rights re-enabling a revoked key, or signing raw
 * messages. Known limits: the root statement keeps IAM in charge for everything not denied here; an
 * explicit deny cannot stop the account root user itself from changing the policy.
 */

export interface KeyPolicyInputs {
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
      {
        Sid: 'DigestsOnly',
        Effect: 'Deny',
        Principal: '*',
        Action: 'kms:Sign',
        Resource: '*',
        Condition: { StringNotEquals: { 'kms:MessageType': 'DIGEST' } },
      },
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
