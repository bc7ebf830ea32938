/**
 * The shape of one entry of the route catalogue (src/api/api-catalog.ts): who may call the route, what it takes and
 * what it answers. The entries themselves live by route family in ./*-catalog.ts.
 *
 * Defends: an entry without an operationId, an auth kind or its replies (it does not compile). Does not
 * defend: an entry that describes its route wrongly (the OpenAPI tests compare them with the app).
 */
import type { z } from 'zod';
import type { ErrorCode } from '../../../shared/error-codes.js';

/**
 * Who may call a route. `session` is any account session, including one exchanged from an agent PAT (its own
 * logout); `owner_session` is money control and the account's sellers and takes only a session from a SIWE /
 * SIWS sign-in (an exchanged one gets 403 `fresh_sign_in_required`: it holds no more than the agent PAT it was
 * exchanged from; src/api/auth/session-powers.ts); `owner_session_or_service` reads or manages one seller:
 * that sign-in session or the seller's service PAT. `treasury_or_agent` and `session_or_agent` admit an agent
 * PAT and the sessions exchanged from it, acting as that agent; `treasury_or_operator` the account's own
 * Treasury bearer or the operator token.
 */
export type Auth =
  | 'none'
  | 'operator'
  | 'treasury'
  | 'treasury_or_operator'
  | 'treasury_or_agent'
  | 'session'
  | 'owner_session'
  | 'owner_session_or_service'
  | 'session_or_agent'
  | 'service'
  | 'gate'
  | 'agent'
  | 'any';

/** A reply that is not JSON: its media type and what it holds. */
export interface RawReply {
  mediaTypes: string[];
  description: string;
}

/** A success reply: a JSON body's schema, a non-JSON body, or `null` for no body (204). */
export type Reply = z.ZodType | RawReply | null;

export interface CatalogEntry {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  /** Stable camelCase; clients generated from the document name their methods after it. */
  operationId: string;
  summary: string;
  auth: Auth;
  body?: z.ZodType;
  /** The body may be left out (it defaults to `{}`). */
  bodyOptional?: true;
  query?: z.ZodType;
  /** The route honours an `Idempotency-Key` header (a retry with the same key and body is the same operation). */
  idempotencyKey?: true;
  /** Success replies by status. */
  replies: Partial<Record<200 | 201 | 204 | 503, Reply>>;
  /** Error codes this route answers beyond those every route of its kind answers (./openapi-errors.ts). */
  errors?: ErrorCode[];
}
