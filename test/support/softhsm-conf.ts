/**
 * Points SoftHSM at a test token's configuration for this process (SOFTHSM2_CONF, which SoftHSM reads at
 * C_Initialize), for the suites that load the PKCS#11 module in-process rather than in a signer child.
 * What it defends: the process's environment as it was before the suite — the function returned puts back
 * the previous value, or removes the variable if there was none.
 * What it does not: re-initialise a module already loaded under the previous configuration.
 */
export function pointSoftHsmAt(softhsm2Conf: string): () => void {
  const previous = process.env.SOFTHSM2_CONF;
  process.env.SOFTHSM2_CONF = softhsm2Conf;
  return () => {
    if (previous === undefined) delete process.env.SOFTHSM2_CONF;
    else process.env.SOFTHSM2_CONF = previous;
  };
}
