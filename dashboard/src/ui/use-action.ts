/**
 * `useAction`, the state of a button's request: `busy` while it runs (to disable the button), and the
 * error it ended with (shown with ErrorBox, which names user_message, error_code and request_id), cleared
 * when it runs again. It reports nothing itself and does not retry.
 */
import { useCallback, useState } from 'preact/hooks';

export interface Action {
  busy: boolean;
  error: unknown;
  /** Runs `work` with busy set and the last error cleared; a throw becomes `error`. */
  run(work: () => Promise<void>): Promise<void>;
}

export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run };
}
