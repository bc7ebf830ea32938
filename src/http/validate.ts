/** Parses a value with a zod schema or throws 400 `invalid_request` listing every issue (path + message). */
import type { z } from 'zod';
import { AppError } from '../errors/app-error.js';

export function validate<S extends z.ZodType>(schema: S, value: unknown, where: 'body' | 'path' | 'query' = 'body'): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.slice(0, 20).map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
  if (where === 'path') throw new AppError('invalid_path_parameter', { fields: { issues } });
  throw new AppError('invalid_request', { message: `The request ${where} is invalid: ${issues.map((i) => (i.path ? `${i.path}: ` : '') + i.message).join('; ')}`, fields: { issues } });
}
