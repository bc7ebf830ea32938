/**
 * Runs one command and turns its failure into the CLI contract: the message (and recovery hint) on stderr,
 * or under `--json` exactly one JSON object `{error_code, user_message, recovery?, status?, details?}`; exit
 * codes 1 generic, 2 bad arguments, 130 interrupted (Ctrl-C at a prompt). Text mode prints the next step the
 * recovery block carries (`Next: xx fund --testnet`), so it tells a person what `--json` tells a script.
 */
import type { CliContext } from './cli-context.js';
import { CliError } from './cli-error.js';

/**
 * A server- or seller-sent value as one printable line (no control characters: no terminal escapes, no line
 * breaks, Unicode's line and paragraph separators included). Commands pass such values through it before printing
 * them (e.g. `xx buy`), and the MCP tools before handing them to the model.
 */
// eslint-disable-next-line no-control-regex
export const printable = (v: string) => v.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ');

/**
 * The next step the recovery block carries (what `--json` prints as `recovery`), for text mode: the settings
 * page, and the command to run (`cli_command`; for `reauthenticate` also `login_command`, headless).
 */
export function nextStepLines(r: Record<string, unknown> | undefined): string[] {
  if (!r) return [];
  const lines: string[] = [];
  const str = (k: string) => (typeof r[k] === 'string' && r[k] !== '' ? printable(r[k]) : undefined);
  const settings = str('settings_url');
  if (settings) lines.push(`Settings: ${settings}`);
  const command = str('cli_command');
  const login = str('login_command');
  if (r.kind === 'reauthenticate')
    lines.push(`Sign in again with \`${command ?? 'xx init'}\`${login ? ` (or, with a PAT: \`${login}\`)` : ''}.`);
  else if (command) lines.push(`Next: ${command}`);
  return lines;
}

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
    for (const line of nextStepLines(e.recovery)) process.stderr.write(`${line}\n`);
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
