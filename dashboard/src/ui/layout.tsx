/** The frame of every page: a skip link, the navigation, who is signed in, sign-out, and the main region. */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { signOut } from '../api/sign-in';
import { useSession } from '../api/session';
import { paths, to } from './paths';
import { ErrorBox } from './states';

const NAV = [
  { href: paths.overview, label: 'Overview' },
  { href: paths.tokens, label: 'Tokens' },
  { href: paths.sellers, label: 'Sellers' },
  { href: paths.newWallet, label: 'Create wallet' },
  { href: paths.claim, label: 'Claim api key' },
];

export function Layout({ children }: { children: ComponentChildren }) {
  const session = useSession();
  const { path } = useLocation();
  const [error, setError] = useState<unknown>(null);
  const current = (href: string) =>
    href === '/' ? path === to('/') : path === to(href) || path.startsWith(`${to(href)}/`);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={to('/')}>
          Treasury
        </a>
        <nav aria-label="Main">
          <ul>
            {NAV.map((item) => (
              <li key={item.href}>
                <a href={to(item.href)} aria-current={current(item.href) ? 'page' : undefined}>
                  {item.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          {session ? (
            <>
              <span data-testid="signed-in-as">
                {session.origin === 'sign_in' ? 'Owner' : 'Agent (from the CLI)'} · <code>{session.agentId}</code>
              </span>
              <button
                type="button"
                onClick={() => {
                  setError(null);
                  signOut().catch(setError);
                }}
              >
                Sign out
              </button>
            </>
          ) : (
            <span>Not signed in</span>
          )}
        </div>
      </header>
      {error ? <ErrorBox error={error} /> : null}
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
