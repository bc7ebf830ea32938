/**
 * Parses a value with a zod schema or throws 400 `invalid_request` listing every issue (path + message).
 * Paths and messages may quote the request (an unknown key, a record key): they are cut to 200 characters
 * and any character a stored field may not hold (src/api/http/schemas/common-schemas.ts) becomes U+FFFD, so
 * the error body and the logs never carry control characters or lone surrogates from the request.
 */
import type { z } from 'zod';
import { AppError } from '../errors/app-error.js';
import { toStorableText } from './schemas/common-schemas.js';

/** `text` as it may be shown and logged: storable characters only, at most 200 of them. */
const displayable = (text: string): string => toStorableText(text.length > 200 ? `${text.slice(0, 200)}…` : text);

export function validate<S extends z.ZodType>(
  schema: S,
  value: unknown,
  where: 'body' | 'path' | 'query' = 'body',
): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues
    .slice(0, 20)
    .map((i) => ({ path: displayable(i.path.map(String).join('.')), message: displayable(i.message) }));
  if (where === 'path') throw new AppError('invalid_path_parameter', { fields: { issues } });
  throw new AppError('invalid_request', {
    message: `The request ${where} is invalid: ${issues.map((i) => (i.path ? `${i.path}: ` : '') + i.message).join('; ')}`,
    fields: { issues },
  });
}

/**
 * A body whose every field is optional: no body at all is `{}`; a JSON `null` (or any other value) is a body, and
 * left for the schema to refuse — never read as "no body" and answered with the defaults.
 */
export const bodyOrEmpty = (body: unknown): unknown => (body === undefined ? {} : body);
