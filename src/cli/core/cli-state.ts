/**
 * The CLI's records on disk (docs/cli.md, "Files"): the `as_` session, the credentials file (PAT profiles), one record
 * per service (its service PAT) and per agent (its PAT, addresses and managed wallets), and the
 * active-service / active-agent pointers. Every record holding a token is written 0600 (secret-file.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { CliError, REAUTHENTICATE_RECOVERY } from './cli-error.js';
import type { CliPaths } from './cli-paths.js';
import { readJsonFile, readTextFile, writeSecretFile, writeSecretJson } from './secret-file.js';

const idSchema = z.string().regex(/^[a-z]{3,4}_[0-9a-f]{24}$/);

export const sessionRecordSchema = z.object({
  session: z.string().min(1),
  account_id: z.string(),
  agent_id: z.string().optional(),
  expires_at: z.string(),
  server: z.string(),
});
export type SessionRecord = z.infer<typeof sessionRecordSchema>;

/** The PAT a service or agent record carries: the secret and its id. */
const patFields = { pat: z.string(), pat_id: z.string() };

export const serviceRecordSchema = z.object({
  seller_id: idSchema,
  slug: z.string(),
  name: z.string(),
  ...patFields,
  server: z.string(),
});
export type ServiceRecord = z.infer<typeof serviceRecordSchema>;

export const managedWalletSchema = z.object({
  id: z.string(),
  address: z.string(),
  chain: z.string(),
  network: z.string(),
  label: z.string().nullable(),
});
export type ManagedWallet = z.infer<typeof managedWalletSchema>;

export const agentRecordSchema = z.object({
  agent_id: idSchema,
  account_id: z.string(),
  label: z.string(),
  server: z.string(),
  ...patFields,
  addresses: z.object({ base: z.string().optional(), solana: z.string().optional() }),
  keystore: z.string().optional(),
  wallets: z.array(managedWalletSchema),
  created_at: z.string(),
});
export type AgentRecord = z.infer<typeof agentRecordSchema>;

export const credentialsSchema = z.object({
  active: z.string().optional(),
  profiles: z.record(
    z.string(),
    z.object({
      token: z.string(),
      server: z.string(),
      label: z.string().optional(),
      added_at: z.string(),
      /** `xx buy`'s ceiling when `--max` is not given (../commands/buy/buy-ceiling.ts). */
      buy_max_usd: z.string().optional(),
    }),
  ),
});
export type Credentials = z.infer<typeof credentialsSchema>;

// Session
export function loadSession(paths: CliPaths): SessionRecord | undefined {
  return readJsonFile(paths.session, sessionRecordSchema);
}
export function saveSession(paths: CliPaths, record: SessionRecord): void {
  writeSecretJson(paths.session, record);
}

// Services
const serviceFile = (paths: CliPaths, sellerId: string) =>
  path.join(paths.servicesDir, `${idSchema.parse(sellerId)}.json`);

export async function saveService(paths: CliPaths, record: ServiceRecord): Promise<void> {
  writeSecretJson(serviceFile(paths, record.seller_id), serviceRecordSchema.parse(record));
}
export async function listServices(paths: CliPaths): Promise<ServiceRecord[]> {
  return listRecords(paths.servicesDir, serviceRecordSchema);
}
export async function setActiveService(paths: CliPaths, sellerId: string): Promise<void> {
  writeSecretFile(paths.activeService, `${idSchema.parse(sellerId)}\n`);
}
export async function loadActiveService(paths: CliPaths): Promise<ServiceRecord> {
  const id = readTextFile(paths.activeService);
  const record =
    id && idSchema.safeParse(id).success ? readJsonFile(serviceFile(paths, id), serviceRecordSchema) : undefined;
  if (!record) {
    throw new CliError({
      code: 'no_active_service',
      userMessage:
        'No active service. Register one with `xx service init --name <name>` (needs a session from `xx init`).',
    });
  }
  return record;
}

// Agents
const agentFile = (paths: CliPaths, agentId: string) => path.join(paths.agentsDir, `${idSchema.parse(agentId)}.json`);

export function saveAgent(paths: CliPaths, record: AgentRecord): void {
  writeSecretJson(agentFile(paths, record.agent_id), agentRecordSchema.parse(record));
}
export function listAgents(paths: CliPaths): AgentRecord[] {
  return listRecords(paths.agentsDir, agentRecordSchema);
}
export function loadAgent(paths: CliPaths, agentId: string): AgentRecord | undefined {
  return idSchema.safeParse(agentId).success ? readJsonFile(agentFile(paths, agentId), agentRecordSchema) : undefined;
}
export function deleteAgent(paths: CliPaths, agentId: string): void {
  fs.rmSync(agentFile(paths, agentId), { force: true });
  if (readTextFile(paths.activeAgent) === agentId) fs.rmSync(paths.activeAgent, { force: true });
}
export function setActiveAgent(paths: CliPaths, agentId: string): void {
  writeSecretFile(paths.activeAgent, `${idSchema.parse(agentId)}\n`);
}
export function loadActiveAgent(paths: CliPaths): AgentRecord {
  const id = readTextFile(paths.activeAgent);
  const record = id ? loadAgent(paths, id) : undefined;
  if (!record)
    throw new CliError({
      code: 'no_active_agent',
      userMessage: 'No active agent. Run `xx init` first (or `xx agent switch <id>`).',
      recovery: { ...REAUTHENTICATE_RECOVERY },
    });
  return record;
}

// Credentials (PAT profiles)
/** The credentials file; its profiles in a record with no prototype (look one up with `profileOf`). */
export function loadCredentials(paths: CliPaths): Credentials {
  const creds = readJsonFile(paths.credentials, credentialsSchema) ?? { profiles: {} };
  // A record with no prototype (./profile-names.ts): any name stays an own entry, read or written.
  return { ...creds, profiles: Object.assign(Object.create(null) as typeof creds.profiles, creds.profiles) };
}
export function saveCredentials(paths: CliPaths, credentials: Credentials): void {
  writeSecretJson(paths.credentials, credentials);
}

function listRecords<S extends z.ZodType>(dir: string, schema: S): Array<z.output<S>> {
  let names: string[];
  try {
    names = fs
      .readdirSync(dir)
      .filter((n) => n.endsWith('.json'))
      .sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names.map((n) => readJsonFile(path.join(dir, n), schema)).filter((r): r is z.output<S> => r !== undefined);
}
