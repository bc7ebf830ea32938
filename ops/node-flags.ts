/** Node flags the API and the signer start with (placeholder). */
export const API_NODE_FLAGS: readonly string[] = [];
export const SIGNER_NODE_FLAGS: readonly string[] = [];
