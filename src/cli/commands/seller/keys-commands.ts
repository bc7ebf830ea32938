/**
 * `xx keys {list,create,revoke,rotate}`: master keys (`xx_live_sk_`, `xx_treasury_sk_`) were removed on
 * 2026-04-27. Every form, with any arguments, prints the migration hint and exits 1 (`master_key_removed`,
 * structured on stderr under --json). Nothing is sent to the platform.
 */
import type { Command } from 'commander';
import { CliError } from '../../core/cli-error.js';
import { MASTER_KEY_HINT } from '../../core/legacy-master-key.js';
import { act, type ContextOf } from './seller-kit.js';

function removed(): Promise<never> {
  return Promise.reject(
    new CliError({
      code: 'master_key_removed',
      userMessage: MASTER_KEY_HINT,
      exitCode: 1,
      details: { seller_command: 'xx service pat create', buyer_command: 'xx pat create' },
    }),
  );
}

export function registerKeysCommands(program: Command, contextOf: ContextOf): void {
  const keys = program
    .command('keys')
    .description('Deprecated: master keys were removed (use service PATs)')
    .allowUnknownOption()
    .allowExcessArguments()
    .action(act(contextOf, () => removed()));
  for (const name of ['list', 'create', 'revoke', 'rotate']) {
    keys
      .command(name)
      .description('Deprecated: prints the migration hint')
      .allowUnknownOption()
      .allowExcessArguments()
      .action(act(contextOf, () => removed()));
  }
}
