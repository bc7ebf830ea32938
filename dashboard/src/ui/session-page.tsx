/**
 * The frame of a page that needs a session: its h1, an optional introduction, then its content under
 * RequireSession (the sign-in panel while there is no session, or no owner's sign-in where `owner` is set).
 */
import type { ComponentChildren } from 'preact';
import { RequireSession } from './sign-in-panel';

export function SessionPage({
  title,
  intro,
  owner,
  reason,
  children,
}: {
  title: string;
  intro?: ComponentChildren;
  owner?: boolean;
  /** What the sign-in panel says instead of its own words. */
  reason?: string;
  children: () => ComponentChildren;
}) {
  return (
    <>
      <h1>{title}</h1>
      {intro}
      <RequireSession owner={owner} reason={reason}>
        {children}
      </RequireSession>
    </>
  );
}
