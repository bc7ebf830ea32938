/**
 * Seller commands of the `xx` CLI (docs/cli.md, "Seller"): service, endpoints, ledger, status,
 * payout-mode, verify, refresh, and the deprecated keys. Seller calls use the active service's PAT;
 * what only the account owner may do (register a service, mint service PATs, flush payouts, list the
 * account's services) uses the `as_` session.
 */
import type { Command } from 'commander';
import { registerEndpointCommands } from './endpoint-commands.js';
import { registerKeysCommands } from './keys-commands.js';
import { registerLedgerCommands } from './ledger-commands.js';
import { registerPayoutModeCommands } from './payout-mode-commands.js';
import type { ContextOf } from './seller-kit.js';
import { registerServiceCommands } from './service-commands.js';
import { registerStatusCommand } from './status-command.js';
import { registerVerifyCommands } from './verify-commands.js';

export function registerSellerCommands(program: Command, ctx: ContextOf): void {
  registerServiceCommands(program, ctx);
  registerEndpointCommands(program, ctx);
  registerLedgerCommands(program, ctx);
  registerStatusCommand(program, ctx);
  registerPayoutModeCommands(program, ctx);
  registerVerifyCommands(program, ctx);
  registerKeysCommands(program, ctx);
}
