/**
 * The local sandbox `npm start` runs, as the account commands meet it: its description file (sandbox.json in
 * TREASURY_DATA_DIR, default ./.treasury), taken only when it names the API URL the CLI talks to, and its
 * faucets — the EVM one (`faucet_url`) and the Solana one (`solana_faucet_url`) — asked only on loopback
 * (POST JSON; a refusal becomes `faucet_failed` with the faucet's own message; a faucet URL off loopback is
 * `faucet_not_loopback` and is not called).
 *
 * Without such a file (a run from another folder), the API itself says where its faucets are
 * (`sandboxFaucetsFromApi`, GET /v1/sandbox/faucets); a faucet is still called only on loopback.
 *
 * Defends against: funding or reading through another API's sandbox (the file must name this API URL); an edited
 * sandbox.json sending the wallet's address to a faucet off the machine; a sandbox.json of another user, or
 * writable by group or others, in the folder the CLI runs from (`sandbox_file_untrusted`, exit 2).
 * Does not defend against: a faucet that answers 200 without sending (its answer is reported as it came); a
 * sandbox.json the user's own account wrote — a cloned repository's ./.treasury is the user's: what such a file
 * may name is bounded by its readers (local-chain.ts: the sandbox's chain and loopback URLs only;
 * self-custody-solana.ts: a loopback Solana RPC).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import type { CliContext } from '../../core/cli-context.js';
import { CliError } from '../../core/cli-error.js';
import { sandboxFaucetsSchema, type SandboxFaucets } from '../../../shared/api-responses/sandbox-responses.js';
import { isLoopbackHttpUrl } from '../../../shared/loopback-host.js';

/** The file's text and its status, read through one descriptor (what was checked is what was read); else undefined. */
function readWithStat(file: string): { text: string; stat: fs.Stats } | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    return { stat: fs.fstatSync(fd), text: fs.readFileSync(fd, 'utf8') };
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** Refuses a description another user owns or others may write (the sandbox writes it 0600, sandbox-file.ts). */
function assertOwnFile(file: string, stat: fs.Stats): void {
  const uid = process.getuid?.();
  if (uid === undefined) return;
  if (stat.uid !== uid || (stat.mode & 0o022) !== 0)
    throw new CliError({
      code: 'sandbox_file_untrusted',
      userMessage: `${file} is ${stat.uid !== uid ? 'owned by another user' : 'writable by group or others'}; the CLI reads a sandbox description only from a file of its own user that only it can write (the sandbox writes it 0600).`,
      exitCode: 2,
      details: { file },
    });
}

/**
 * The sandbox description, parsed with the caller's `schema`, when it names `apiUrl`; else undefined. One that
 * names it in a file of another user, or writable by group or others, is `sandbox_file_untrusted` (exit 2).
 */
export function readLocalSandbox<S extends z.ZodType<{ api_url: string }>>(
  apiUrl: string,
  schema: S,
): z.infer<S> | undefined {
  const file = path.join(process.env.TREASURY_DATA_DIR || path.resolve('.treasury'), 'sandbox.json');
  const read = readWithStat(file);
  if (!read) return undefined;
  let parsed;
  try {
    parsed = schema.safeParse(JSON.parse(read.text));
  } catch {
    return undefined;
  }
  if (!parsed.success || parsed.data.api_url.replace(/\/+$/, '') !== apiUrl) return undefined;
  assertOwnFile(file, read.stat);
  return parsed.data;
}

/** A sandbox faucet is on this machine: an http(s) URL on loopback (the shared rule, src/shared/loopback-host.ts). */
function assertLoopbackFaucet(faucetUrl: string): void {
  if (!isLoopbackHttpUrl(faucetUrl))
    throw new CliError({
      code: 'faucet_not_loopback',
      userMessage:
        'The sandbox faucet in sandbox.json is not a loopback URL; the sandbox faucets run on this machine only.',
    });
}

/** Asks the sandbox faucet for `body` (address, amount_usd, …) under a spinner; its JSON answer. */
export async function requestSandboxFaucet(
  ctx: CliContext,
  faucetUrl: string,
  body: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  assertLoopbackFaucet(faucetUrl);
  return ctx.spin('Funding from the sandbox faucet', async () => {
    const r = await fetch(faucetUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const answer = (await r.json().catch(() => ({}))) as Record<string, unknown>;
    if (!r.ok)
      throw new CliError({
        code: 'faucet_failed',
        userMessage: `The sandbox faucet answered HTTP ${r.status}: ${String(answer.error ?? answer.user_message ?? '')}`,
      });
    return answer;
  });
}

/**
 * The sandbox's faucets as its API names them (GET /v1/sandbox/faucets): for a CLI run where no sandbox.json
 * names this API (another folder, another user). Undefined when the API is no sandbox (404).
 */
export async function sandboxFaucetsFromApi(ctx: CliContext, apiUrl: string): Promise<SandboxFaucets | undefined> {
  try {
    return await ctx.client(undefined, apiUrl).request('GET', '/v1/sandbox/faucets', { reply: sandboxFaucetsSchema });
  } catch (err) {
    if (err instanceof CliError && err.status === 404) return undefined;
    throw err;
  }
}
