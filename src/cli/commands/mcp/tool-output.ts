/**
 * The `outputSchema` every `xx mcp` tool declares: one JSON object that is either the tool's answer or a
 * refusal (./tool-results.ts) — `{ error_code, user_message, recovery?, status?, decision_id?, details? }`.
 * MCP wants an object at the root, and the SDK's client validates a refusal's `structuredContent` against the
 * same schema as an answer's, so the schema is built from the two zod objects: every field of both (the
 * answer's and the refusal's, optional), no other key (`additionalProperties: false`), and `anyOf` the answer's
 * required fields or the refusal's — a result with half an answer, or a refusal without its code, fails.
 *
 * Defends: a client (or a model) meeting a shape the schema does not announce; an answer and its schema
 * drifting apart (the tests call every tool through the SDK's validating client); an answer field shadowing a
 * refusal field (refused when the schema is built; `status` alone is shared, an integer in both). Does not
 * defend: the content's truth.
 */
import { z } from 'zod';

/** A refusal's structured content: the API's error fields (docs/api.md#errors), unchanged. */
export const refusalSchema = z.object({
  error_code: z.string(),
  user_message: z.string(),
  /** The API's recovery block, unknown keys kept; `kind` says what to do next. */
  recovery: z.record(z.string(), z.unknown()).optional(),
  status: z.number().int().optional(),
  decision_id: z.string().optional(),
  details: z.record(z.string(), z.unknown()).optional(),
});
export type Refusal = z.infer<typeof refusalSchema>;

type AnyObject = z.ZodObject<z.ZodRawShape>;

/** The keys a value must carry to be this object (those that do not accept `undefined`). */
function requiredKeys(object: AnyObject): string[] {
  return Object.entries(object.shape)
    .filter(([, field]) => !z.safeParse(field, undefined).success)
    .map(([key]) => key);
}

/** The tool's `outputSchema`: its answer, or a refusal (see the header). */
export function toolOutputSchema<A extends AnyObject>(answer: A) {
  for (const key of Object.keys(answer.shape)) {
    if (key in refusalSchema.shape && key !== 'status')
      throw new TypeError(`the answer's "${key}" would shadow the refusal's`); // status: an int in both
  }
  return answer
    .partial()
    .extend(refusalSchema.partial().shape)
    .superRefine((value, ctx) => {
      if (!answer.safeParse(value).success && !refusalSchema.safeParse(value).success)
        ctx.addIssue({ code: 'custom', message: 'neither the answer nor a refusal' });
    })
    .meta({ anyOf: [{ required: requiredKeys(answer) }, { required: requiredKeys(refusalSchema) }] });
}
