/**
 * Decodes the bytes of a Solana transaction message (legacy or v0) in @solana/kit's compiled-message layout
 * (../protocol/solana-message-codec.ts), and accepts them only in their one canonical encoding, with every
 * account named in the message itself.
 *
 * Defends: signing bytes the checks did not see — the message is re-encoded from what was decoded and must
 * equal the input byte for byte (no trailing bytes, no field missing at the end, no second spelling of a
 * length), and a v0 message that loads accounts from address lookup tables is refused (the accounts it
 * would touch are not in the message, so nothing could be checked about them). Hostile bytes (truncated,
 * random, oversized, unknown versions) are refused with a rule, never thrown as another error.
 * Does not defend: what the message does (./check-x402-exact-message.ts).
 */
import { equalBytes } from '@noble/curves/utils.js';
import {
  solanaMessageDecoder as decoder,
  solanaMessageEncoder as encoder,
  type SolanaMessage,
} from '../protocol/solana-message-codec.js';
import { solanaRule } from './solana-rule.js';

export type { SolanaMessage } from '../protocol/solana-message-codec.js';

function decodeOrUndefined(bytes: Uint8Array): SolanaMessage | undefined {
  try {
    return decoder.decode(bytes);
  } catch {
    return undefined;
  }
}

function encodeOrUndefined(message: SolanaMessage): Uint8Array | undefined {
  try {
    return encoder.encode(message) as Uint8Array;
  } catch {
    return undefined;
  }
}

export function decodeSolanaMessage(bytes: Uint8Array): SolanaMessage {
  const message = decodeOrUndefined(bytes);
  solanaRule(message !== undefined, 'message_undecodable', 'the bytes are not a Solana transaction message');
  const again = encodeOrUndefined(message);
  solanaRule(
    again !== undefined && equalBytes(again, bytes),
    'message_not_canonical',
    'the message is not in its canonical encoding (trailing or missing bytes)',
  );
  solanaRule(
    message.version === 'legacy' || (message.addressTableLookups ?? []).length === 0,
    'address_lookup_table',
    'the message loads accounts from address lookup tables',
  );
  return message;
}
