/**
 * Runs one command and turns its failure into the CLI contract: the message (and recovery hint) on stderr,
 * or under `--json` exactly one JSON object `{error_code, user_message, recovery?, status?, details?}`; exit
 * codes 1 generic, 2 bad arguments, 130 interrupted (Ctrl-C at a prompt).
 */
import type { CliContext } from './cli-context.js';
import { CliError } from './cli-error.js';

export function renderError(err: unknown, json: boolean): number {
  const e =
    err instanceof CliError
      ? err
      : err instanceof Error && (err.name === 'ExitPromptError' || err.name === 'AbortPromptError')
        ? new CliError({ code: 'interrupted', userMessage: 'Interrupted.', exitCode: 130 })
        : new CliError({ code: 'internal_error', userMessage: err instanceof Error ? err.message : String(err) });
  if (json) process.stderr.write(`${JSON.stringify(e.toJSON())}\n`);
  else {
    process.stderr.write(
      `Error: ${e.userMessage}${e.status ? ` (${e.code}, HTTP ${e.status})` : e.code === 'internal_error' ? '' : ` (${e.code})`}\n`,
    );
    const r = e.recovery;
    if (r && typeof r.settings_url === 'string') process.stderr.write(`Settings: ${r.settings_url}\n`);
    if (r && r.kind === 'reauthenticate') process.stderr.write('Sign in again with `xx init`.\n');
  }
  return e.exitCode;
}

export async function runCommand(ctx: Pick<CliContext, 'json'>, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    process.exitCode = renderError(err, ctx.json);
  }
}
