/**
 * Where `xx login` takes a PAT from: stdin — `--token -`, or no `--token` — when piped, else a prompt that
 * does not echo (no terminal: exit 2 naming `--token`); or the flag's own value, which still works but is
 * warned about on stderr (a line at once in text mode; under `--json`, where stderr is an error's one JSON
 * object, `{warning: "token_in_argv", user_message}` once the command succeeded). The warning never repeats
 * the PAT.
 *
 * Defends: a long-lived PAT left in argv, where every local user reads it (`ps`, /proc/<pid>/cmdline) —
 * the recommended ways keep it out. Does not defend: a PAT in the shell's history or environment, or a
 * script that keeps passing it on the flag.
 */
import type { CliContext } from './cli-context.js';

export const TOKEN_IN_ARGV =
  '--token put the PAT in the command line, where other users of this machine can read it (ps, /proc/*/cmdline). ' +
  'Pass it on stdin instead: `xx login --token -` (piped, or typed at the prompt).';

export interface PatInput {
  token: string;
  /** Call once the command succeeded: the `--json` warning, when the PAT came on the flag. */
  warnOnSuccess(): void;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8').trim();
}

/** The PAT from `--token` (`flag`): its value (warned about), or stdin / a prompt for `-` or none. */
export async function readPatInput(ctx: CliContext, flag: string | undefined): Promise<PatInput> {
  const inArgv = !!flag && flag !== '-';
  if (inArgv && !ctx.json) process.stderr.write(`Warning: ${TOKEN_IN_ARGV}\n`);
  let token = inArgv ? flag : undefined;
  if (!token && !process.stdin.isTTY) token = await readStdin();
  if (!token) token = await ctx.prompt.password({ message: 'PAT (xx_pat_…)', flag: '--token' });
  return {
    token,
    warnOnSuccess() {
      if (inArgv && ctx.json)
        process.stderr.write(`${JSON.stringify({ warning: 'token_in_argv', user_message: TOKEN_IN_ARGV })}\n`);
    },
  };
}
