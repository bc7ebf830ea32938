/**
 * The TLS certificate and key treasury-api serves HTTPS with (TREASURY_TLS_CERT_FILE, TREASURY_TLS_KEY_FILE),
 * read once at configuration time. Defends: a start with only one of the two files, or an unreadable one (the
 * start stops naming the variable). Does not defend: a certificate that does not match the key (TLS refuses it
 * when the server starts).
 */
import fs from 'node:fs';
import { ConfigError } from '../../../base/config-error.js';

/** Both TLS files read once (a missing or unreadable one stops the start naming its variable), or neither set. */
export function readTls(
  certFile: string | undefined,
  keyFile: string | undefined,
): Readonly<{ cert: Buffer; key: Buffer }> | undefined {
  if (certFile === undefined && keyFile === undefined) return undefined;
  if (certFile === undefined || keyFile === undefined)
    throw new ConfigError(
      'api',
      `${certFile === undefined ? 'TREASURY_TLS_CERT_FILE' : 'TREASURY_TLS_KEY_FILE'}: required with the other TLS file`,
    );
  const read = (name: string, file: string) => {
    try {
      return fs.readFileSync(file);
    } catch (err) {
      throw new ConfigError('api', `${name}: cannot read ${file} (${(err as NodeJS.ErrnoException).code})`, {
        cause: err,
      });
    }
  };
  return Object.freeze({
    cert: read('TREASURY_TLS_CERT_FILE', certFile),
    key: read('TREASURY_TLS_KEY_FILE', keyFile),
  });
}
