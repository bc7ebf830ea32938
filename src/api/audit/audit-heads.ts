/**
 * The audit chains' heads as a file: one JSON line per chain, `{"chain_key","seq","hash"}`, in the order the
 * verification reads the chains. `audit:verify --heads-out` writes it after a verification that held (to a
 * temporary file renamed into place, so a failed run never leaves half a file); `--heads-in` reads it back as
 * anchors that the next verification checks (./audit-ledger.ts).
 *
 * Defends: a copy of the heads kept where the database's owners cannot rewrite it lets a later run catch a
 * ledger rewritten with recomputed hashes, or a chain cut short. Does not defend: a heads file rewritten too —
 * where it is stored is the operator's choice; a file that is not one of ours is refused whole, line named.
 */
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { z } from 'zod';
import type { ChainHead } from './audit-ledger.js';

const headSchema = z
  .object({
    chain_key: z.string().min(1).max(64),
    seq: z.number().int().min(1),
    hash: z.string().regex(/^[0-9a-f]{64}$/),
  })
  .strict();

/** The heads file is not one `--heads-out` wrote. */
export class AuditHeadsFileError extends Error {
  constructor(file: string, detail: string) {
    super(`${file}: ${detail}`);
    this.name = 'AuditHeadsFileError';
  }
}

/** Reads a heads file into anchors by chain key; any malformed or repeated line refuses the whole file. */
export async function readAuditHeads(file: string): Promise<Map<string, { seq: number; hash: string }>> {
  const anchors = new Map<string, { seq: number; hash: string }>();
  let stream: fs.ReadStream;
  try {
    stream = fs.createReadStream(file, { encoding: 'utf8' });
    await new Promise<void>((resolve, reject) => stream.once('open', () => resolve()).once('error', reject));
  } catch (err) {
    throw new AuditHeadsFileError(file, `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let line = 0;
  for await (const text of readline.createInterface({ input: stream, crlfDelay: Infinity })) {
    line++;
    if (text.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new AuditHeadsFileError(file, `line ${line} is not JSON`);
    }
    const head = headSchema.safeParse(parsed);
    if (!head.success)
      throw new AuditHeadsFileError(
        file,
        `line ${line} is not a chain head (${head.error.issues.map((i) => i.path.join('.') || 'line').join(', ')})`,
      );
    if (anchors.has(head.data.chain_key))
      throw new AuditHeadsFileError(file, `line ${line} repeats chain ${head.data.chain_key}`);
    anchors.set(head.data.chain_key, { seq: head.data.seq, hash: head.data.hash });
  }
  return anchors;
}

/** Writes heads as they come to a temporary file beside `file`; `commit` renames it into place, `discard` removes it. */
export class AuditHeadsWriter {
  private readonly temporary: string;
  private readonly fd: number;
  private pending: string[] = [];
  private closed = false;
  written = 0;

  constructor(private readonly file: string) {
    this.temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
    this.fd = fs.openSync(this.temporary, 'wx', 0o644);
  }

  add(head: ChainHead): void {
    this.pending.push(JSON.stringify({ chain_key: head.chain_key, seq: head.seq, hash: head.hash }));
    this.written++;
    if (this.pending.length >= 1_000) this.drain();
  }

  commit(): void {
    this.drain();
    fs.fsyncSync(this.fd);
    this.close();
    fs.renameSync(this.temporary, this.file);
  }

  /** Removes the temporary file (also after a commit that failed part-way). */
  discard(): void {
    this.close();
    fs.rmSync(this.temporary, { force: true });
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    fs.closeSync(this.fd);
  }

  private drain(): void {
    if (this.pending.length === 0) return;
    fs.writeSync(this.fd, `${this.pending.join('\n')}\n`);
    this.pending = [];
  }
}
