/** TREASURY_OUTBOUND_ALLOWED_PORTS: the ports tenant-supplied URLs may use; 80 and 443 unless configured. */
import assert from 'node:assert/strict';
import { loadAppConfig } from '../../../src/api/config/app-config.js';

describe('app config: outbound ports', () => {
  it('defaults to 80 and 443, reads a comma-separated list (deduplicated) and freezes it', () => {
    assert.deepEqual(loadAppConfig({}).outboundAllowedPorts, [80, 443]);
    const ports = loadAppConfig({ TREASURY_OUTBOUND_ALLOWED_PORTS: '443, 8443,443' }).outboundAllowedPorts;
    assert.deepEqual(ports, [443, 8443]);
    assert.ok(Object.isFrozen(ports));
  });

  it('refuses anything but ports 1-65535, naming the variable', () => {
    for (const value of ['', '0', '65536', '80,', 'http', '-1', '08', '80;443', '1e3']) {
      assert.throws(
        () => loadAppConfig({ TREASURY_OUTBOUND_ALLOWED_PORTS: value }),
        /invalid configuration: TREASURY_OUTBOUND_ALLOWED_PORTS/,
        value,
      );
    }
  });
});
