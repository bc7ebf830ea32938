/**
 * The typed client of the public API: openapi-fetch over the path types openapi-typescript generated from
 * the server's own OpenAPI document (ops/dashboard/build-dashboard.ts → .build/dashboard-api/openapi.d.ts).
 * Paths, path parameters, queries and request bodies are checked against the document at compile time.
 * The document does not describe answers yet, so each call names the reply type it reads (the shared
 * response types of src/shared/api-responses/, type-only). The session's bearer is added here and nowhere else.
 * An answer outside 2xx becomes an ApiError carrying the API's error_code, user_message and request_id.
 */
import createClient from 'openapi-fetch';
import type { paths } from '../../../.build/dashboard-api/openapi';
import { getSession } from './session';

export const api = createClient<paths>({ baseUrl: location.origin });

api.use({
  onRequest({ request }) {
    const session = getSession();
    if (session && !request.headers.has('authorization'))
      request.headers.set('authorization', `Bearer ${session.token}`);
    return request;
  },
});

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly userMessage: string,
    readonly requestId: string,
    readonly body: Record<string, unknown>,
  ) {
    super(userMessage);
  }
}

/** The reply of an openapi-fetch call as `T`, or an ApiError. */
export async function reply<T>(call: Promise<{ data?: unknown; error?: unknown; response: Response }>): Promise<T> {
  let result: { data?: unknown; error?: unknown; response: Response };
  try {
    result = await call;
  } catch (err) {
    throw new ApiError(0, 'network_error', 'The Treasury API could not be reached.', '', { cause: String(err) });
  }
  const { data, error, response } = result;
  if (response.ok) return data as T;
  const body = (error && typeof error === 'object' ? error : {}) as Record<string, unknown>;
  throw new ApiError(
    response.status,
    typeof body.error_code === 'string' ? body.error_code : `http_${response.status}`,
    typeof body.user_message === 'string' ? body.user_message : `The API answered ${response.status}.`,
    typeof body.request_id === 'string' ? body.request_id : (response.headers.get('x-request-id') ?? ''),
    body,
  );
}

/** Headers that send `token` instead of the session's own bearer. */
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
