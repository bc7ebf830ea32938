/**
 * `xx buy` error mapping (the buyer SDK's error names) and the CLI's error rendering: each SDK error becomes
 * a CliError with its stable code, exit code 1 and the fields a script needs; under --json stderr carries
 * exactly one JSON object; MGMT_6014 keeps the server's user_message unchanged and its settings_url.
 */
import assert from 'node:assert/strict';
import { mapBuyError } from '../../../src/cli/commands/buy/index.js';
import { CliError } from '../../../src/cli/core/cli-error.js';
import { renderError } from '../../../src/cli/core/run-command.js';
import {
  InsufficientBudgetError,
  InsufficientFundsError,
  X402PaymentFailedError,
  NoCompatibleAcceptError,
  PatCapReachedError,
  PaymentRejectedError,
  ReauthenticateError,
  TreasuryApiError,
} from '../../../src/sdk/index.js';
import { requirements } from '../x402/x402-fixtures.js';
import { captureStderr } from './capture-stderr.js';

describe('xx buy: error mapping and rendering', () => {
  const capBody = {
    error_code: 'MGMT_6014',
    user_message: 'Daily cap of 5 USD reached for this PAT.',
    recovery: {
      kind: 'raise_pat_cap',
      settings_url: 'https://dash.example/settings/pats/pat_1',
      current_cap_usd: '5',
      attempted_amount_usd: '0.01',
    },
  };
  const cases: Array<[string, unknown, (e: CliError) => void]> = [
    [
      'InsufficientBudgetError',
      new InsufficientBudgetError('0.01', '0.005', requirements()),
      (e) => {
        assert.deepEqual(e.details, { requested_usd: '0.01', cap_usd: '0.005' });
        assert.deepEqual(e.recovery, {
          kind: 'raise_max_amount',
          required_amount_usd: '0.01',
          current_max_amount_usd: '0.005',
        });
      },
    ],
    [
      'NoCompatibleAcceptError',
      new NoCompatibleAcceptError([
        requirements(),
        { ...requirements(), scheme: 'upto' },
        { ...requirements(), network: 'eip155:8453' },
      ]),
      (e) => {
        assert.equal((e.details!.accepts as unknown[]).length, 3);
        assert.deepEqual(e.recovery, {
          kind: 'use_alternate_scheme',
          offered_schemes: ['exact', 'upto'],
          offered_networks: ['eip155:84532', 'eip155:8453'],
          payable_networks: [],
        });
      },
    ],
    [
      'PaymentRejectedError',
      new PaymentRejectedError(500, 'boom', { success: true }),
      (e) => assert.equal(e.details!.status_code, 500),
    ],
    [
      'insufficient_funds',
      new InsufficientFundsError(
        new X402PaymentFailedError(402, 'invalid_transaction_state', ''),
        {
          address: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
          network: 'eip155:84532',
          asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
          balance_usd: '0.004',
        },
        { raw: 6000n, usd: '0.006' },
      ),
      (e) => {
        assert.deepEqual(e.recovery, {
          kind: 'fund_wallet',
          deposit_url: 'https://sepolia.basescan.org/address/0x857b06519E91e3A54538791bDbb0E22373e36b66',
          deposit_uri:
            'ethereum:0x036CbD53842c5426634e7929541eC2318f3dCF7e@84532/transfer?address=0x857b06519E91e3A54538791bDbb0E22373e36b66&uint256=6000',
          shortfall_usd: '0.006',
          chain: 'eip155:84532',
          cli_command: 'xx fund --testnet',
        });
        assert.equal(e.details!.seller_reason, 'invalid_transaction_state');
      },
    ],
    [
      'MGMT_6014',
      new PatCapReachedError(new TreasuryApiError(429, capBody)),
      (e) => {
        assert.equal(e.userMessage, capBody.user_message);
        assert.equal(e.recovery!.settings_url, capBody.recovery.settings_url);
      },
    ],
    [
      'MGMT_6014',
      new PatCapReachedError(
        new TreasuryApiError(429, {
          ...capBody,
          recovery: { ...capBody.recovery, settings_url: `https://dash.example/settings/pats/pat_${'a1'.repeat(12)}` },
        }),
      ),
      (e) => {
        assert.equal(e.recovery!.cli_command, `xx pat update pat_${'a1'.repeat(12)} --daily-cap <usd>`);
        assert.equal(e.recovery!.kind, 'raise_pat_cap');
      },
    ],
    [
      'reauthenticate',
      new ReauthenticateError(
        new TreasuryApiError(401, {
          error_code: 'invalid_token',
          user_message: 'Unknown token.',
          recovery: { kind: 'reauthenticate' },
        }),
      ),
      (e) => assert.equal(e.recovery!.kind, 'reauthenticate'),
    ],
    [
      'policy_denied',
      new TreasuryApiError(403, {
        error_code: 'policy_denied',
        reason: 'policy_denied',
        decision_id: 'pd_1',
        user_message: 'Denied by policy.',
      }),
      (e) => assert.equal(e.details!.decision_id, 'pd_1'),
    ],
  ];
  for (const [code, sdkError, check] of cases) {
    it(`${code}: exit 1, structured stderr under --json`, () => {
      const mapped = mapBuyError(sdkError);
      assert.ok(mapped instanceof CliError);
      assert.equal(mapped.code, code);
      assert.equal(mapped.exitCode, 1);
      check(mapped);
      const { code: exit, text } = captureStderr(() => renderError(mapped, true));
      assert.equal(exit, 1);
      const lines = text.trim().split('\n');
      assert.equal(lines.length, 1, 'one JSON object');
      const parsed = JSON.parse(lines[0]!);
      assert.equal(parsed.error_code, code);
      assert.equal(parsed.user_message, mapped.userMessage);
    });
  }

  it('human rendering shows the server message unchanged and links settings_url; a prompt interrupted is 130', () => {
    const mapped = mapBuyError(new PatCapReachedError(new TreasuryApiError(429, capBody))) as CliError;
    const { text } = captureStderr(() => renderError(mapped, false));
    assert.ok(text.includes(capBody.user_message));
    assert.ok(text.includes(`Settings: ${capBody.recovery.settings_url}`));
    const interrupted = Object.assign(new Error('User force closed the prompt'), { name: 'ExitPromptError' });
    assert.equal(captureStderr(() => renderError(interrupted, true)).code, 130);
  });
});
