/**
 * A reply's body as UTF-8 text, read to at most `maxBytes`: the one size cap of ./bounded-fetch.ts, whichever
 * transport answered (a caller's `fetch` Response stream, or undici's body in ./pooled-request.ts).
 *
 * Defends: a huge or endless reply held in memory — the read stops at the first chunk past the cap and leaving the
 * loop closes the body (a web stream is cancelled, a Node stream destroyed); no more than the cap and one chunk is
 * ever held. Returns undefined past the cap.
 */
export async function readCappedText(body: AsyncIterable<Uint8Array>, maxBytes: number): Promise<string | undefined> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (total > maxBytes) return undefined;
    chunks.push(chunk);
  }
  const only = chunks.length === 1 ? chunks[0]! : undefined;
  return only
    ? Buffer.from(only.buffer, only.byteOffset, only.byteLength).toString('utf8')
    : Buffer.concat(chunks).toString('utf8');
}
