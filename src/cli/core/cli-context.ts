/**
 * What every command gets: the paths (their home refused when another user could write it: ./home-dir.ts),
 * the env (XX_ENV and its env file), the API base URL, output that honours `--json`, prompts that refuse to
 * block without a TTY (exit 2 naming the flag), a spinner on stderr only for a terminal, and clients for the
 * three kinds of bearer — the account session (with the silent PAT exchange of docs/cli.md, "Sessions": such a
 * session acts as the agent and no more: `xx whoami --session`), the active service's PAT and the active agent's
 * PAT. Money-control commands and reads of the account's sellers sign the owner in again instead
 * (commands/account/owner-sign-in.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { ApiClient } from './api-client.js';
import { CliError, missingFlag, REAUTHENTICATE_RECOVERY } from './cli-error.js';
import { holdsMasterKey, masterKeyMigration } from './legacy-master-key.js';
import { resolveCliPaths, type CliPaths } from './cli-paths.js';
import { checkHomeDir } from './home-dir.js';
import {
  loadActiveAgent,
  loadActiveService,
  loadSession,
  saveSession,
  type AgentRecord,
  type ServiceRecord,
} from './cli-state.js';
import { z } from 'zod';
import { readJsonFile } from './secret-file.js';
import { sessionGrantSchema } from '../../shared/api-responses/identity-responses.js';

export const ENV_NAMES = ['dev', 'prod', 'qa', 'preprod'] as const;
export const DEFAULT_API_URL = 'http://127.0.0.1:8402';

const configSchema = z.object({ api_url: z.string().optional(), dashboard_url: z.string().optional() }).loose();

export interface PromptSpec {
  message: string;
  /** The flag that would have answered it; named in the exit-2 error without a TTY. */
  flag: string;
  default?: string;
}

export interface CliPrompt {
  input(spec: PromptSpec): Promise<string>;
  password(spec: PromptSpec): Promise<string>;
  confirm(spec: PromptSpec & { defaultYes?: boolean }): Promise<boolean>;
  select<T extends string>(spec: PromptSpec & { choices: readonly T[] }): Promise<T>;
}

export interface CliContext {
  paths: CliPaths;
  env: { name: string; file: string | undefined };
  json: boolean;
  interactive: boolean;
  apiUrl(): string;
  dashboardUrl(): string;
  out(data: unknown, human: string): void;
  info(line: string): void;
  prompt: CliPrompt;
  spin<T>(label: string, fn: () => Promise<T>): Promise<T>;
  session(): Promise<ApiClient>;
  service(): Promise<{ client: ApiClient; service: ServiceRecord }>;
  agent(): { client: ApiClient; agent: AgentRecord };
  /** An ApiClient bearing the active agent's PAT (exit 1 with the reauthenticate recovery when there is none). */
  agentClient(): ApiClient;
  /** The error for a command that finds no way to sign in: the master-key migration on a legacy machine, else `code` (default `no_session`; reauthenticate). */
  missingSession(userMessage: string, code?: 'no_session' | 'no_active_agent'): Error;
  client(token: string | undefined, baseUrl?: string): ApiClient;
}

/** KEY=VALUE lines (comments and blanks ignored); only XX_* keys not already set are applied. */
function loadEnvFile(file: string, env: NodeJS.ProcessEnv): boolean {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return false;
  }
  for (const line of text.split('\n')) {
    const m = /^\s*(XX_[A-Z0-9_]+)\s*=\s*(.*?)\s*$/.exec(line);
    if (m && env[m[1]!] === undefined) env[m[1]!] = m[2]!.replace(/^"(.*)"$/, '$1');
  }
  return true;
}

export function createCliContext(options: { json: boolean; env?: NodeJS.ProcessEnv }): CliContext {
  const env = options.env ?? process.env;
  const envName = envNameOf(env);
  let paths = resolveCliPaths(env);
  checkHomeDir(paths.root, Boolean(env.XX_HOME)); // before its env file is read
  const envFile = path.join(paths.envDir, `${envName}.env`);
  const loaded = loadEnvFile(envFile, env);
  if (loaded) {
    paths = resolveCliPaths(env);
    checkHomeDir(paths.root, Boolean(env.XX_HOME)); // the env file may name another home
  }
  const json = options.json;
  const interactive = !json && !!process.stdin.isTTY && !!process.stdout.isTTY;
  const config = () => readJsonFile(paths.config, configSchema) ?? {};

  const apiUrl = () =>
    (env.XX_API_URL || config().api_url || loadSession(paths)?.server || DEFAULT_API_URL).replace(/\/+$/, '');

  const prompt = cliPrompt(interactive);

  const client = (token: string | undefined, baseUrl = apiUrl()) => new ApiClient({ baseUrl, token });

  const orMigration = (err: unknown) => orMasterKeyMigration(paths, err);
  const withMigration = async <T>(load: () => Promise<T>): Promise<T> => {
    try {
      return await load();
    } catch (err) {
      throw orMigration(err);
    }
  };

  const ctx: CliContext = {
    paths,
    env: { name: envName, file: loaded ? envFile : undefined },
    json,
    interactive,
    apiUrl,
    dashboardUrl: () =>
      (env.XX_DASHBOARD_URL || config().dashboard_url || `${apiUrl().replace(/\/+$/, '')}/dashboard`).replace(
        /\/+$/,
        '',
      ),
    out(data, human) {
      process.stdout.write(json ? `${JSON.stringify(data, null, 2)}\n` : human.endsWith('\n') ? human : `${human}\n`);
    },
    info(line) {
      if (!json) process.stderr.write(`${line}\n`);
    },
    prompt,
    spin: (label, fn) => spin(json, label, fn),
    session: () => sessionClient(paths, env),
    async service() {
      const service = await withMigration(() => loadActiveService(paths));
      return { service, client: client(service.pat, env.XX_API_URL || service.server) };
    },
    agent() {
      let agent: AgentRecord;
      try {
        agent = loadActiveAgent(paths);
      } catch (err) {
        throw orMigration(err);
      }
      return { agent, client: client(agent.pat, env.XX_API_URL || agent.server) };
    },
    agentClient() {
      return ctx.agent().client;
    },
    missingSession(userMessage, code = 'no_session') {
      return orMigration(new CliError({ code, userMessage, recovery: { ...REAUTHENTICATE_RECOVERY } })) as Error;
    },
    client,
  };
  return ctx;
}

/** XX_ENV: which environment file (~/.xx/env/<name>.env) the CLI reads; `dev` by default. */
function envNameOf(env: NodeJS.ProcessEnv): string {
  const envName = env.XX_ENV ?? 'dev';
  if (!(ENV_NAMES as readonly string[]).includes(envName)) {
    throw new CliError({
      code: 'invalid_env',
      userMessage: `XX_ENV must be one of ${ENV_NAMES.join(', ')}, got "${envName}".`,
      exitCode: 2,
    });
  }
  return envName;
}

/**
 * The account session's client: the stored session, or — none on disk, one past its expiry, or one of another
 * account than the active agent's — a new one exchanged for the agent's PAT.
 */
async function sessionClient(paths: CliPaths, env: NodeJS.ProcessEnv): Promise<ApiClient> {
  const record = loadSession(paths);
  const agent = activeAgentOf(paths);
  if (!record && !agent) {
    throw orMasterKeyMigration(
      paths,
      new CliError({
        code: 'no_session',
        userMessage: 'No account session. Run `xx init` first.',
        recovery: { ...REAUTHENTICATE_RECOVERY },
      }),
    );
  }
  // No session on disk, one past its expiry, or one of another account than the active agent's (after
  // `xx agent switch`): exchange the agent PAT first instead of waiting for the 401.
  const stale =
    !record ||
    Date.parse(record.expires_at) <= Date.now() ||
    (agent !== undefined && (record.account_id !== agent.account_id || record.server !== agent.server));
  const token = stale && agent ? await exchangeAgentPatFor(paths, env, agent) : record!.session;
  return new ApiClient({
    baseUrl: env.XX_API_URL || (loadSession(paths) ?? record)!.server,
    token,
    // A session the server refuses is exchanged for a new one with the active agent's PAT, silently, once.
    onUnauthorized: () => exchangeAgentPatFor(paths, env, activeAgentOf(paths)),
  });
}

/** The active agent, or undefined when none is chosen (any other failure to read it stands). */
function activeAgentOf(paths: CliPaths): AgentRecord | undefined {
  try {
    return loadActiveAgent(paths);
  } catch (err) {
    if (err instanceof CliError && err.code === 'no_active_agent') return undefined;
    throw err;
  }
}

/** A missing credential on a machine whose config still holds a removed master key: the migration prompt instead. */
function orMasterKeyMigration(paths: CliPaths, err: unknown): unknown {
  if (!(err instanceof CliError) || !['no_session', 'no_active_agent', 'no_active_service'].includes(err.code))
    return err;
  try {
    return holdsMasterKey(readJsonFile(paths.config, configSchema)) ? masterKeyMigration(paths.config) : err;
  } catch {
    return err; // an unreadable config is not a legacy one: the original error stands
  }
}

/** The prompts, asked only on a terminal; elsewhere each names the flag that would have answered it. */
function cliPrompt(interactive: boolean): CliPrompt {
  const ask = async <T>(spec: PromptSpec, run: () => Promise<T>): Promise<T> => {
    if (!interactive) throw missingFlag(spec.flag, spec.message);
    return run();
  };
  return {
    input: (spec) =>
      ask(spec, async () =>
        (await import('@inquirer/prompts')).input({
          message: spec.message,
          ...(spec.default ? { default: spec.default } : {}),
          required: true,
        }),
      ),
    password: (spec) =>
      ask(spec, async () => (await import('@inquirer/prompts')).password({ message: spec.message, mask: '*' })),
    confirm: (spec) =>
      ask(spec, async () =>
        (await import('@inquirer/prompts')).confirm({ message: spec.message, default: spec.defaultYes ?? false }),
      ),
    select: (spec) =>
      ask(spec, async () =>
        (await import('@inquirer/prompts')).select({
          message: spec.message,
          choices: spec.choices.map((c) => ({ value: c, name: c })),
        }),
      ),
  };
}

/** POST /v1/identity/exchange-pat with the active agent's PAT; saves and returns the new session. */
async function exchangeAgentPatFor(
  paths: CliPaths,
  env: NodeJS.ProcessEnv,
  agent: AgentRecord | undefined,
): Promise<string> {
  if (!agent) throw reauthenticate('The session expired and no agent PAT is stored to renew it.');
  const server = env.XX_API_URL || agent.server;
  let grant: z.infer<typeof sessionGrantSchema>;
  try {
    grant = await new ApiClient({ baseUrl: server, token: agent.pat }).request('POST', '/v1/identity/exchange-pat', {
      reply: sessionGrantSchema,
    });
  } catch (err) {
    if (err instanceof CliError && (err.status === 401 || err.status === 403))
      throw reauthenticate("The session expired and the agent's PAT is no longer valid (revoked or expired).");
    throw err;
  }
  const { session, account_id, agent_id, expires_at } = grant;
  saveSession(paths, { session, account_id, agent_id, expires_at, server: agent.server });
  return session;
}

/** Runs `fn` behind a spinner on stderr (a terminal, not --json). */
async function spin<T>(json: boolean, label: string, fn: () => Promise<T>): Promise<T> {
  if (json || !process.stderr.isTTY) return fn();
  const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
  let i = 0;
  const timer = setInterval(() => process.stderr.write(`\r${frames[i++ % frames.length]} ${label}…`), 80);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
    process.stderr.write(`\r${' '.repeat(label.length + 4)}\r`);
  }
}

function reauthenticate(message: string): CliError {
  return new CliError({
    code: 'reauthenticate',
    userMessage: `${message} Sign in again with \`xx init\`.`,
    recovery: { ...REAUTHENTICATE_RECOVERY },
  });
}
