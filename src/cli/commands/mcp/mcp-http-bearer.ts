/**
 * The bearer `xx mcp --http` asks of every request: `Authorization: Bearer <token>`, where the token is 32
 * random bytes (node:crypto, base64url) made at each launch and shown only to whoever started it, or the
 * stable one the user gives in XX_MCP_HTTP_TOKEN (32 to 1024 printable ASCII characters, no spaces; else
 * `invalid_argument`, exit 2, naming the variable — its value is never echoed).
 *
 * Defends: another local user or process reaching the loopback port and spending with the agent's PAT — it
 * cannot guess the token, and the comparison (SHA-256 digests through timingSafeEqual) tells nothing by its
 * timing, not even the length. Does not: protect a token that leaks (a shell history, a client config file
 * others can read, a captured stderr), encrypt the traffic (plain HTTP: on a non-loopback bind the token
 * crosses the network in clear), nor limit how many guesses are made.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { CliError } from '../../core/cli-error.js';

export const MCP_HTTP_TOKEN_VARIABLE = 'XX_MCP_HTTP_TOKEN';

/** What the user may supply: long enough not to be guessed, and fits an HTTP header unchanged. */
const suppliedToken = z
  .string()
  .min(32)
  .max(1024)
  .regex(/^[\x21-\x7e]+$/);

export interface McpHttpBearer {
  /** The token itself: for the user who started the server (never for a log). */
  token: string;
  /** `generated` at this launch, or taken from XX_MCP_HTTP_TOKEN (then not printed back). */
  source: 'generated' | typeof MCP_HTTP_TOKEN_VARIABLE;
}

/** XX_MCP_HTTP_TOKEN when set (checked), else a fresh random token. */
export function mcpHttpBearer(env: NodeJS.ProcessEnv = process.env): McpHttpBearer {
  const supplied = env[MCP_HTTP_TOKEN_VARIABLE];
  if (supplied === undefined || supplied === '')
    return { token: randomBytes(32).toString('base64url'), source: 'generated' };
  if (!suppliedToken.safeParse(supplied).success)
    throw new CliError({
      code: 'invalid_argument',
      userMessage: `${MCP_HTTP_TOKEN_VARIABLE} must be 32 to 1024 printable ASCII characters without spaces (e.g. the output of \`openssl rand -hex 32\`); unset it to get a random token at each launch.`,
      exitCode: 2,
      details: { variable: MCP_HTTP_TOKEN_VARIABLE },
    });
  return { token: supplied, source: MCP_HTTP_TOKEN_VARIABLE };
}

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/** A check of the `Authorization` header against `token`, in constant time whatever the header holds. */
export function bearerCheck(token: string): (authorization: string | undefined) => boolean {
  const expected = digest(token);
  return (authorization) => {
    const presented = /^Bearer +(\S+) *$/i.exec(authorization ?? '')?.[1] ?? '';
    // Always compare, even when nothing usable was sent: the time taken says nothing about the token.
    return timingSafeEqual(digest(presented), expected) && presented !== '';
  };
}
