/** Any other /dashboard/ path. */
import { to } from '../ui/paths';

export function NotFoundPage() {
  return (
    <>
      <h1>No such page</h1>
      <p>
        <a href={to('/')}>Go to the overview</a>.
      </p>
    </>
  );
}
