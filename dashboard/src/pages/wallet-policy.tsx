/**
 * The wallet's policy editor and its live dry run. The draft is checked as it is typed with the schema the
 * API validates policies with (policy/policy-schema.ts), so a mistake is named with its field before
 * anything is sent. The editor says whether the signer holds the policy owner-signed, by whom, at which
 * version; saving asks the owner's browser wallet to sign the policy document and PUTs it to
 * /v1/wallets/{id}/policy/signed (../api/owner-policy.ts). An unsigned save (PUT /v1/wallets/{id}/policy) is
 * offered only for a wallet without a signed policy — the API refuses it on one that has. The dry run asks
 * POST /v1/wallets/{id}/policy/evaluate whether a payment would pass under the saved policy, which rule
 * refuses it and how much room each rule leaves; nothing is signed or counted. Beside an owner-signed policy it shows
 * the version and policy hash, with the command that checks them at the signer from any machine
 * (`xx wallet policy verify … --expect-version N --expect-hash 0x…`): after a save, those of the document signed in
 * this browser (the hash computed here), otherwise those the API reports.
 */
import { useEffect, useState } from 'preact/hooks';
import { walletPolicySchema } from '../../../policy/policy-schema';
import { policyDocumentHash } from '../../../policy/signed-policy';
import { api, bearer, reply } from '../api/client';
import { describeOwnerPolicy, readOwnerPolicy, saveSignedPolicy, type OwnerPolicy } from '../api/owner-policy';
import { dryRun, type DryRun } from '../api/spend';
import { canManageWallets } from '../api/wallet-access';
import { ErrorBox, Outcome, useLoad } from '../ui/states';
import { usdInputError } from '../ui/format';
import { isPayeeAddress, isSolanaNetwork } from '../ui/network';
import { useAction } from '../ui/use-action';
import { CardForm } from '../ui/card-form';
import { TextField } from '../ui/text-field';
import { SelectField } from '../ui/select-field';
import { PolicyField } from '../ui/policy-field';
import { useField } from '../ui/use-field';
import { Card } from '../ui/card';

type Policy = Record<string, unknown>;

export function policyIssues(text: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return [`Not JSON: ${err instanceof Error ? err.message : String(err)}`];
  }
  const result = walletPolicySchema.safeParse(parsed);
  if (result.success) return [];
  return result.error.issues.map((i) => `${i.path.length ? i.path.join('.') : 'policy'}: ${i.message}`);
}

/** Where the signer stands on the wallet's policy: owner-signed (by whom, which version), or ceilings only. */
function OwnerPolicyState({ owner }: { owner: OwnerPolicy | null }) {
  return (
    <p data-testid="owner-policy" class={owner?.state === 'owner_signed' ? 'signed' : 'hint'}>
      {owner ? describeOwnerPolicy(owner) : 'Reading whether the policy is owner-signed…'}
    </p>
  );
}

/** A signed document's version and policy hash, and the CLI command that checks them at the signer. */
export function verifyCommand(walletId: string, version: number, policyHash: string): string {
  return `xx wallet policy verify ${walletId} --expect-version ${version} --expect-hash ${policyHash}`;
}

function VerifyHint(props: { walletId: string; version: number; policyHash: string }) {
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);
  const command = verifyCommand(props.walletId, props.version, props.policyHash);
  // No clipboard outside a secure context: the command is then to be selected by hand.
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(command);
      setCopied('yes');
    } catch {
      setCopied('no');
    }
  };
  return (
    <div data-testid="policy-verify-hint">
      <p class="hint">
        Version <code data-testid="policy-version">{props.version}</code> · policy hash{' '}
        <code data-testid="policy-hash">{props.policyHash}</code>
      </p>
      <p class="hint">
        Check it from any machine: <code data-testid="policy-verify-command">{command}</code>{' '}
        <button type="button" onClick={() => void copy()} aria-label="Copy the verify command">
          Copy
        </button>{' '}
        <span aria-live="polite">
          {copied === 'yes' ? 'Copied.' : copied === 'no' ? 'Select the command to copy it.' : ''}
        </span>
      </p>
    </div>
  );
}

function SaveHint({ canManage, unsignedAllowed }: { canManage: boolean; unsignedAllowed: boolean }) {
  if (!canManage)
    return (
      <p class="hint">Changing a policy needs the owner: sign out and sign in with the wallet that owns the account.</p>
    );
  return (
    <p class="hint">
      Saving asks your browser wallet to sign the policy; the signer then enforces it on every payment.
      {unsignedAllowed ? ' Without a signature only the API enforces it.' : ''}
    </p>
  );
}

/** A signed document's version and policy hash (after a save here: the hash computed here, not the API's word). */
type SignedDocument = { version: number; policyHash: string };

function ownerSignedDocument(owner: OwnerPolicy | null): SignedDocument | null {
  if (owner?.state !== 'owner_signed' || owner.version === null || !owner.policy_hash) return null;
  return { version: owner.version, policyHash: owner.policy_hash.toLowerCase() };
}

interface EditorProps {
  walletId: string;
  walletAddress: string;
  token: string;
  policy: Policy;
  onSaved: (p: Policy) => void;
}

export function PolicyEditor(props: EditorProps) {
  const [text, setText] = useState(JSON.stringify(props.policy, null, 2));
  const [saved, setSaved] = useState(false);
  // Read again after a rotation: the new address holds no signed policy until it is signed again.
  const [signedView] = useLoad(
    () => readOwnerPolicy(props.walletId, props.token),
    [props.walletId, props.token, props.walletAddress],
  );
  const [owner, setOwner] = useState<OwnerPolicy | null>(null);
  const [signedHere, setSignedHere] = useState<SignedDocument | null>(null);
  useEffect(() => {
    if (signedView.state === 'ok') setOwner(signedView.data.owner_policy);
    setSignedHere(null);
  }, [signedView]);
  const { busy, error, run } = useAction();
  const issues = policyIssues(text);
  const canManage = canManageWallets();
  const done = (res: { policy: Policy; owner_policy?: OwnerPolicy }) => {
    setText(JSON.stringify(res.policy, null, 2));
    if (res.owner_policy) setOwner(res.owner_policy);
    setSaved(true);
    props.onSaved(res.policy);
  };
  const save = (signed: boolean) =>
    run(async () => {
      setSaved(false);
      const path = { params: { path: { id: props.walletId } }, headers: bearer(props.token) };
      if (signed) {
        if (!owner) throw new Error('The wallet’s signed policy state is not known yet.');
        const policy = walletPolicySchema.parse(JSON.parse(text));
        const common = { walletId: props.walletId, walletAddress: props.walletAddress, token: props.token };
        done(await saveSignedPolicy({ ...common, policy, version: owner.next_version }));
        setSignedHere({ version: owner.next_version, policyHash: policyDocumentHash(policy) });
      } else {
        done(
          await reply<{ policy: Policy }>(
            api.PUT('/v1/wallets/{id}/policy', { ...path, body: JSON.parse(text) as never }),
          ),
        );
      }
    });
  const unsignedAllowed = owner?.state === 'ceilings_only';
  const shown = signedHere ?? ownerSignedDocument(owner);
  return (
    <CardForm
      labelledBy="policy-title"
      onSubmit={() => {
        if (issues.length === 0 && canManage && owner) void save(true);
      }}
    >
      <h2 id="policy-title">Policy</h2>
      <OwnerPolicyState owner={owner} />
      {shown ? <VerifyHint walletId={props.walletId} {...shown} /> : null}
      {signedView.state === 'error' ? <ErrorBox error={signedView.error} /> : null}
      <PolicyField
        id="policy"
        label="Policy (JSON)"
        spellcheck={false}
        value={text}
        onValue={(v) => {
          setText(v);
          setSaved(false);
        }}
        issues={issues}
        hint="Fields: per_tx_cap_usd, daily_cap_usd, weekly_cap_usd, monthly_cap_usd, velocity_cap {max_count, window_seconds}, counterparty_allowlist, counterparty_blocklist, cooling_off (s), capability_cap_usd, capability_required (true: a payment must name its capability), allow_key_destruction (true: a rotation or revocation may destroy the wallet's key; an owner-signed policy without it keeps the key)."
      />
      <div class="row">
        <button type="submit" class="primary" disabled={busy || issues.length > 0 || !canManage || !owner}>
          Save policy
        </button>
        {unsignedAllowed ? (
          <button type="button" disabled={busy || issues.length > 0 || !canManage} onClick={() => void save(false)}>
            Save without signing
          </button>
        ) : null}
      </div>
      <SaveHint canManage={canManage} unsignedAllowed={unsignedAllowed} />
      <Outcome notice={saved ? 'Policy saved.' : null} error={error} />
    </CardForm>
  );
}

const KINDS = [
  { value: 'pay', label: 'x402 payment' },
  { value: 'transfer', label: 'transfer' },
] as const;

export function DryRunPanel(props: { walletId: string; network: string; token: string; policyVersion: number }) {
  const [to] = useField('', { trim: true });
  const [amount] = useField('', { trim: true });
  const [kind] = useField<'pay' | 'transfer'>('pay');
  const [capability] = useField('', { trim: true });
  const [result, setResult] = useState<{ decision?: DryRun; error?: unknown } | null>(null);
  const ready = isPayeeAddress(props.network, to.value) && amount.value !== '' && !usdInputError(amount.value);
  useEffect(() => {
    if (!ready) {
      setResult(null);
      return;
    }
    let live = true;
    const timer = setTimeout(() => {
      dryRun(props.walletId, props.token, {
        to: to.value,
        amount_usd: amount.value,
        kind: kind.value,
        ...(capability.value ? { capability: capability.value } : {}),
      }).then(
        (decision) => live && setResult({ decision }),
        (error: unknown) => live && setResult({ error }),
      );
    }, 250);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [to.value, amount.value, kind.value, capability.value, ready, props.policyVersion]);
  return (
    <Card titleId="dry-run-title" title="Would this payment pass?">
      <p class="hint">A dry run under the saved policy: nothing is signed or counted.</p>
      <TextField
        id="dr-to"
        label="Recipient address"
        {...to}
        autoComplete="off"
        placeholder={isSolanaNetwork(props.network) ? 'base58…' : '0x…'}
      />
      <div class="row">
        <TextField id="dr-amount" label="Amount (USD)" {...amount} inputMode="decimal" />
        <SelectField id="dr-kind" label="Kind" {...kind} options={KINDS} />
        <TextField id="dr-capability" label="Capability (optional)" {...capability} />
      </div>
      <div aria-live="polite" data-testid="dry-run-result">
        {!ready ? (
          <p class="hint">Enter a recipient and an amount.</p>
        ) : !result ? (
          <p class="loading">Checking…</p>
        ) : result.error ? (
          <ErrorBox error={result.error} />
        ) : result.decision ? (
          <Decision decision={result.decision} />
        ) : null}
      </div>
    </Card>
  );
}

function Decision({ decision }: { decision: DryRun }) {
  const headroom = Object.entries(decision.headroom);
  return (
    <div>
      <p class={`decision ${decision.allowed ? 'allowed' : 'denied'}`}>
        <strong>{decision.allowed ? 'Would pass.' : 'Would be refused.'}</strong>
      </p>
      {decision.violations.length ? (
        <ul data-testid="violations">
          {decision.violations.map((v) => (
            <li key={v.rule}>
              <code>{v.rule}</code>: {v.message}
              {v.limit !== undefined ? ` (limit ${v.limit}` : ''}
              {v.limit !== undefined && v.attempted !== undefined
                ? `, asked ${v.attempted})`
                : v.limit !== undefined
                  ? ')'
                  : ''}
            </li>
          ))}
        </ul>
      ) : null}
      {headroom.length ? (
        <>
          <h3>Headroom {decision.allowed ? 'after this payment' : 'as it stands'}</h3>
          <dl class="headroom">
            {headroom.map(([k, v]) => (
              <div key={k}>
                <dt>{k}</dt>
                <dd>{String(v)}</dd>
              </div>
            ))}
          </dl>
        </>
      ) : (
        <p class="hint">The policy sets no limit with headroom.</p>
      )}
    </div>
  );
}
