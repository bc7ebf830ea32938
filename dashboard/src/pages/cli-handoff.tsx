/**
 * /dashboard/cli-handoff: where `xx dashboard` starts and lands. Without a fragment it shows the code this
 * browser asks with (../api/handoff.ts) for `xx dashboard --state`; with one whose code matches, it exchanges
 * the single-use PAT for a session and goes where the CLI meant; a PAT this browser did not ask for is
 * refused and left unused.
 */
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { startHandoff, takeHandoff } from '../api/handoff';
import { exchangeHandoffPat } from '../api/sign-in';
import { useSession } from '../api/session';
import { to } from '../ui/paths';
import { ErrorBox, Loading } from '../ui/states';

type Step =
  { kind: 'exchanging' } | { kind: 'ask'; state: string } | { kind: 'refused' } | { kind: 'failed'; error: unknown };

export function CliHandoffPage() {
  const { route } = useLocation();
  const session = useSession();
  const [step, setStep] = useState<Step>({ kind: 'exchanging' });
  useEffect(() => {
    const handoff = takeHandoff();
    if (!handoff) setStep({ kind: 'ask', state: startHandoff() });
    else if (handoff.kind === 'unrequested') setStep({ kind: 'refused' });
    else
      exchangeHandoffPat(handoff.pat).then(
        () => route(to(handoff.next), true),
        (error: unknown) => setStep({ kind: 'failed', error }),
      );
  }, []);
  return (
    <>
      <h1>Signing in from the CLI</h1>
      {step.kind === 'failed' ? (
        <ErrorBox error={step.error} />
      ) : step.kind === 'refused' ? (
        <p data-testid="handoff-refused">
          This link was not asked for by this browser, so it was not used: it could sign you in as someone else’s agent.
          To sign in from the CLI, open <a href={to('/cli-handoff')}>this page</a> and run the command it shows.
        </p>
      ) : step.kind === 'ask' ? (
        <>
          {session ? <p>You are signed in.</p> : null}
          <p>To open the dashboard as your agent, run in your terminal:</p>
          <pre>
            <code data-testid="handoff-command">xx dashboard --state {step.state}</code>
          </pre>
          <p>
            Or type the code <code data-testid="handoff-state">{step.state}</code> where <code>xx dashboard</code> asks
            for it. It is valid for ten minutes in this browser, for one sign-in. Or{' '}
            <a href={to('/')}>go to the overview</a>.
          </p>
        </>
      ) : (
        <Loading what="your session" />
      )}
    </>
  );
}
