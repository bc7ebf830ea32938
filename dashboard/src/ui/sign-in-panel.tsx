/**
 * The sign-in prompt a page shows when it needs a session, or an owner's sign-in where an exchanged session
 * is not enough (caps, PATs, policies: the API's `owner_session` routes). SIWE with the browser wallet.
 */
import { signInWithWallet } from '../api/sign-in';
import { useSession } from '../api/session';
import { ErrorBox } from './states';
import { useAction } from './use-action';

export function SignInPanel({ reason }: { reason?: string }) {
  const session = useSession();
  const { busy, error, run } = useAction();
  const signIn = () => run(signInWithWallet);
  return (
    <section class="card sign-in" aria-labelledby="sign-in-title">
      <h2 id="sign-in-title">{session ? 'Sign in as the owner' : 'Sign in'}</h2>
      <p>
        {reason ??
          (session
            ? 'This session was handed over by the CLI and acts as the agent; this needs the owner, signed in with the wallet that owns the account.'
            : 'Sign in with the wallet that owns this Treasury account, or run `xx dashboard` in a terminal.')}
      </p>
      <button type="button" class="primary" onClick={signIn} disabled={busy}>
        {busy ? 'Waiting for the wallet…' : 'Sign in with a browser wallet'}
      </button>
      {error ? <ErrorBox error={error} /> : null}
    </section>
  );
}

/** Children when a session (or, with `owner`, a sign-in session) is present; else the sign-in panel. */
export function RequireSession({
  owner,
  reason,
  children,
}: {
  owner?: boolean;
  reason?: string;
  children: () => preact.ComponentChildren;
}) {
  const session = useSession();
  if (!session || (owner && session.origin !== 'sign_in')) return <SignInPanel reason={reason} />;
  return <>{children()}</>;
}
