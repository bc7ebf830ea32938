/**
 * The legacy master-key config (docs/cli.md, "Seller"): CLIs from before 2026-04-27 kept a master key
 * (`xx_live_sk_…`, `xx_treasury_sk_…`) in the config file. Those keys were removed; the platform answers them
 * 401. A command that needs credentials and finds none, on a machine whose config still holds one, gets the
 * migration prompt (`master_key_removed`, exit 1) instead of a bare "no session".
 * Defends against: the key being sent anywhere or shown — it is only recognised by its prefix, and neither
 * the key nor the field holding it is ever printed. The file is left as it is (the user's to remove).
 */
import { CliError, REAUTHENTICATE_RECOVERY } from './cli-error.js';

const MASTER_KEY = /^xx_(live|treasury)_sk_/;

/** Whether `token` is shaped like a removed master key. */
export function isMasterKey(token: string): boolean {
  return MASTER_KEY.test(token);
}

export const MASTER_KEY_HINT =
  'Master keys were removed on 2026-04-27. Use `xx service pat create` for seller calls and `xx pat create` for buyer calls.';

/** Whether any string value of the config (at any depth) is shaped like a removed master key. */
export function holdsMasterKey(config: unknown): boolean {
  if (typeof config === 'string') return isMasterKey(config);
  if (Array.isArray(config)) return config.some(holdsMasterKey);
  if (config && typeof config === 'object') return Object.values(config).some(holdsMasterKey);
  return false;
}

/** The migration prompt for a machine that only has a legacy master key. */
export function masterKeyMigration(configPath: string): CliError {
  return new CliError({
    code: 'master_key_removed',
    userMessage: `${configPath} holds a master key, and master keys were removed on 2026-04-27. Run \`xx init\` to sign in, then \`xx pat create\` (buyer calls) or \`xx service pat create\` (seller calls); remove the key from that file afterwards.`,
    exitCode: 1,
    recovery: { ...REAUTHENTICATE_RECOVERY },
    details: { config: configPath, seller_command: 'xx service pat create', buyer_command: 'xx pat create' },
  });
}
