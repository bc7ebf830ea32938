/**
 * Loading, empty and error states every page shows the same way, and `useLoad`, which runs a page's reads
 * and re-runs them on demand. An error shows the API's user_message, its error_code and the request_id to
 * quote to an operator.
 */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api/client';

export type Load<T> = { state: 'loading' } | { state: 'error'; error: unknown } | { state: 'ok'; data: T };

export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): [Load<T>, () => void] {
  const [result, setResult] = useState<Load<T>>({ state: 'loading' });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let live = true;
    setResult({ state: 'loading' });
    load().then(
      (data) => live && setResult({ state: 'ok', data }),
      (error: unknown) => live && setResult({ state: 'error', error }),
    );
    return () => {
      live = false;
    };
  }, [...deps, round]);
  return [result, useCallback(() => setRound((r) => r + 1), [])];
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="loading" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

export function ErrorBox({ error }: { error: unknown }) {
  if (error instanceof ApiError) {
    return (
      <div class="error" role="alert">
        <p>
          <strong>{error.userMessage}</strong>
        </p>
        <p class="meta">
          <code>{error.code}</code>
          {error.requestId ? (
            <>
              {' '}
              · request id <code data-testid="request-id">{error.requestId}</code>
            </>
          ) : null}
        </p>
      </div>
    );
  }
  return (
    <div class="error" role="alert">
      <p>
        <strong>{error instanceof Error ? error.message : String(error)}</strong>
      </p>
    </div>
  );
}

/** Renders `ok` with the data, or the loading or error state. */
export function Loaded<T>({
  load,
  what,
  children,
}: {
  load: Load<T>;
  what: string;
  children: (data: T) => ComponentChildren;
}) {
  if (load.state === 'loading') return <Loading what={what} />;
  if (load.state === 'error') return <ErrorBox error={load.error} />;
  return <>{children(load.data)}</>;
}

/** Renders each item of a loaded list with `children` (keyed there), or `empty` when there is none. */
export function LoadedEach<T>({
  load,
  what,
  empty,
  children,
}: {
  load: Load<T[]>;
  what: string;
  empty?: ComponentChildren;
  children: (item: T) => ComponentChildren;
}) {
  return (
    <Loaded load={load} what={what}>
      {(list) => (list.length === 0 && empty !== undefined ? empty : <>{list.map(children)}</>)}
    </Loaded>
  );
}

/** What an action leaves to say under its buttons: its notice (role="status") if any, then its error if any. */
export function Outcome({ notice, error }: { notice?: ComponentChildren; error: unknown }) {
  return (
    <>
      {notice ? (
        <p class="notice" role="status">
          {notice}
        </p>
      ) : null}
      {error ? <ErrorBox error={error} /> : null}
    </>
  );
}
