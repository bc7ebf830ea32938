/**
 * Tokens (/dashboard/settings/pats and /dashboard/settings/pats/{id}, the `settings_url` of 429 MGMT_6014):
 * the account's PATs with scope, label, daily cap, last use and expiry; the one in the URL is opened for
 * editing, where the owner raises, lowers or removes its daily cap (PATCH /v1/pats/{id}) or revokes it.
 * PATs and caps are money controls: the API takes them from an owner's sign-in session only, so a session
 * handed over by the CLI (which acts as the agent) is asked to sign in with the wallet first.
 */
import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import type { PatPage, PatView } from '../../../src/shared/api-responses/pat-responses';
import { api, reply } from '../api/client';
import { SessionPage } from '../ui/session-page';
import { paths, to } from '../ui/paths';
import { Empty, ErrorBox, Loaded, Outcome, useLoad } from '../ui/states';
import { usd } from '../ui/money';
import { usdInputError, when } from '../ui/format';
import { DataTable, LinkedRowHeader } from '../ui/data-table';
import { useAction } from '../ui/use-action';
import { CardForm } from '../ui/card-form';
import { TextField } from '../ui/text-field';
import { useField } from '../ui/use-field';
import { Card } from '../ui/card';

async function allPats(): Promise<PatView[]> {
  const pats: PatView[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page++) {
    const res = await reply<PatPage>(api.GET('/v1/pats', { params: { query: { limit: 100, cursor } } }));
    pats.push(...res.pats);
    if (!res.next_cursor) break;
    cursor = res.next_cursor;
  }
  return pats;
}

function CapEditor({ pat, onChanged }: { pat: PatView; onChanged: (p: PatView) => void }) {
  const [cap, setCap] = useField(pat.daily_cap_usd ?? '', { trim: true });
  const [saved, setSaved] = useState<string | null>(null);
  const { busy, error, run } = useAction();
  const invalid = cap.value === '' ? null : usdInputError(cap.value);
  const save = (dailyCap: string | null) =>
    run(async () => {
      setSaved(null);
      const updated = await reply<PatView>(
        api.PATCH('/v1/pats/{id}', { params: { path: { id: pat.id } }, body: { daily_cap_usd: dailyCap } }),
      );
      onChanged(updated);
      setCap(updated.daily_cap_usd ?? '');
      setSaved(updated.daily_cap_usd ? `Daily cap set to $${updated.daily_cap_usd}.` : 'Daily cap removed.');
    });
  return (
    <CardForm
      labelledBy="cap-title"
      onSubmit={() => {
        if (!invalid && cap.value !== '') void save(cap.value);
      }}
    >
      <h2 id="cap-title">
        Daily cap of <code>{pat.id}</code>
      </h2>
      <p class="hint">
        {pat.label ?? 'Unlabelled'} · the cap spans every wallet of the agent and resets at 00:00 UTC. Current:{' '}
        <strong data-testid="current-cap">{pat.daily_cap_usd ? `$${pat.daily_cap_usd}` : 'no cap'}</strong>.
      </p>
      <TextField
        id="cap"
        label="Daily cap (USD)"
        {...cap}
        name="cap"
        inputMode="decimal"
        autoComplete="off"
        aria-invalid={invalid ? 'true' : 'false'}
        aria-describedby="cap-hint"
      >
        <span id="cap-hint" class="hint">
          {invalid ?? 'Up to 6 decimals, e.g. 25 or 0.50.'}
        </span>
      </TextField>
      <div class="row">
        <button type="submit" class="primary" disabled={busy || cap.value === '' || !!invalid}>
          Save cap
        </button>
        <button type="button" disabled={busy || pat.daily_cap_usd === null} onClick={() => void save(null)}>
          Remove cap
        </button>
      </div>
      <Outcome notice={saved} error={error} />
    </CardForm>
  );
}

/** The account's PATs in their card, the one opened from the URL marked. */
function PatsCard({ pats, selected }: { pats: PatView[]; selected?: string }) {
  return (
    <Card titleId="pats-title" title="Personal access tokens">
      {pats.length === 0 ? (
        <Empty>No PATs yet: `xx pat create` or `xx init` makes one.</Empty>
      ) : (
        <DataTable
          caption="Personal access tokens"
          columns={['PAT', 'Scope', 'Daily cap', 'Last used', 'Expires', 'State']}
        >
          {pats.map((p) => (
            <tr key={p.id} aria-current={p.id === selected ? 'true' : undefined} data-testid="pat-row">
              <LinkedRowHeader href={to(paths.token(p.id))} label={p.label ?? p.id} id={p.id} />
              <td>
                {p.scope_type}
                <div class="meta">
                  <code>{p.scope_id}</code>
                </div>
              </td>
              <td>{p.scope_type === 'agent' ? (p.daily_cap_usd ? usd(p.daily_cap_usd) : 'none') : '—'}</td>
              <td>{when(p.used_at)}</td>
              <td>{when(p.expires_at)}</td>
              <td>
                {p.revoked_at ? (
                  <span class="badge bad">revoked</span>
                ) : p.single_use && p.used_at ? (
                  <span class="badge">used</span>
                ) : (
                  <span class="badge ok">active</span>
                )}
                {p.single_use ? <span class="badge">single use</span> : null}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </Card>
  );
}

function Tokens({ selected }: { selected?: string }) {
  const [load, reload] = useLoad(allPats, []);
  const [revokeError, setRevokeError] = useState<unknown>(null);
  const [overrides, setOverrides] = useState<Record<string, PatView>>({});
  return (
    <Loaded load={load} what="tokens">
      {(fetched) => {
        const pats = fetched.map((p) => overrides[p.id] ?? p);
        const pat = selected ? pats.find((p) => p.id === selected) : undefined;
        return (
          <>
            {selected && !pat ? (
              <ErrorBox error={new Error(`No PAT ${selected} in this account.`)} />
            ) : pat && !pat.revoked_at ? (
              <div class="grid">
                {pat.scope_type === 'agent' ? (
                  <CapEditor pat={pat} onChanged={(p) => setOverrides({ ...overrides, [p.id]: p })} />
                ) : null}
                <Card titleId="revoke-title" title="Revoke">
                  <p class="hint">Revoking ends this PAT and every session exchanged from it, at once.</p>
                  <button
                    type="button"
                    class="danger"
                    onClick={() => {
                      setRevokeError(null);
                      reply(api.DELETE('/v1/pats/{id}', { params: { path: { id: pat.id } } })).then(
                        reload,
                        setRevokeError,
                      );
                    }}
                  >
                    Revoke {pat.id}
                  </button>
                  {revokeError ? <ErrorBox error={revokeError} /> : null}
                </Card>
              </div>
            ) : null}
            <PatsCard pats={pats} selected={selected} />
          </>
        );
      }}
    </Loaded>
  );
}

export function TokensPage() {
  const { params } = useRoute();
  return (
    <SessionPage
      title="Tokens"
      owner
      reason="PATs and their daily caps are money controls: sign in with the wallet that owns this account (a session handed over by the CLI acts as the agent and cannot change them)."
    >
      {() => <Tokens selected={params.id} />}
    </SessionPage>
  );
}
