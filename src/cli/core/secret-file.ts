/**
 * Files the CLI writes: created 0600 in 0700 directories, written to a temporary name then renamed (a
 * crash never leaves half a credential), and read back as JSON validated by the caller's schema.
 *
 * Defends against: other local users reading sessions, PATs and keystores (modes), torn writes.
 * Does not defend against: the same user or root reading them — the keystore's passphrase protects the
 * seed; sessions and PATs are bearer tokens by nature (revoke with `xx pat revoke`).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import { CliError } from './cli-error.js';

export function writeSecretFile(file: string, content: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  fs.writeFileSync(tmp, content, { mode: 0o600 });
  fs.chmodSync(tmp, 0o600);
  fs.renameSync(tmp, file);
}

export function writeSecretJson(file: string, value: unknown): void {
  writeSecretFile(file, `${JSON.stringify(value, null, 2)}\n`);
}

/** The file's JSON, or undefined when it does not exist; a corrupt file is an error naming it. */
export function readJsonFile<S extends z.ZodType>(file: string, schema: S): z.output<S> | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new CliError({ code: 'corrupt_file', userMessage: `${file} is not valid JSON; fix or delete it.` });
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success)
    throw new CliError({
      code: 'corrupt_file',
      userMessage: `${file} does not have the expected fields; fix or delete it.`,
    });
  return parsed.data;
}

export function readTextFile(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
