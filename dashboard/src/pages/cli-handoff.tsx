/**
 * /dashboard/cli-handoff: where `xx dashboard` lands. The fragment was already read and removed
 * (../api/handoff.ts); this exchanges the single-use PAT for a session and goes where the CLI meant.
 */
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { takeHandoff } from '../api/handoff';
import { exchangeHandoffPat } from '../api/sign-in';
import { useSession } from '../api/session';
import { to } from '../ui/paths';
import { ErrorBox, Loading } from '../ui/states';

export function CliHandoffPage() {
  const { route } = useLocation();
  const session = useSession();
  const [error, setError] = useState<unknown>(null);
  const [none, setNone] = useState(false);
  useEffect(() => {
    const handoff = takeHandoff();
    if (!handoff) {
      setNone(true);
      return;
    }
    exchangeHandoffPat(handoff.pat).then(() => route(to(handoff.next), true), setError);
  }, []);
  return (
    <>
      <h1>Signing in from the CLI</h1>
      {error ? (
        <ErrorBox error={error} />
      ) : none ? (
        <p>
          {session ? 'You are signed in. ' : 'This link carries no token (it can be used once). '}
          Run <code>xx dashboard</code> again for a new one, or <a href={to('/')}>go to the overview</a>.
        </p>
      ) : (
        <Loading what="your session" />
      )}
    </>
  );
}
