/**
 * The one rule for stored text, for src/: the API's route schemas (src/api/http/schemas/common-schemas.ts) and the
 * CLI's tool inputs. The rule itself lives in base/storable-text.ts, the floor every process stands on, so that
 * the signer's own wire schemas apply the same rule whatever the API sent; re-exported here unchanged.
 */
export { isStorableProse, isStorableText, toStorableText } from '../../base/storable-text.js';
