/**
 * What an OpenAPI operation declares for buyers, kept for the public catalogue (src/api/discovery/): its
 * description (`summary`, else `description`), the JSON Schema of its input — its query parameters as one object
 * schema for GET, HEAD and DELETE, its `application/json` request body otherwise — and of its output (the
 * `application/json` answer of 200, 201, 2XX or default). Local `#/components/schemas/…` references are
 * inlined. Pure.
 *
 * Work is bounded per document, not only per schema: every schema of one document draws on one budget of
 * MAX_DOCUMENT_NODES nodes (`DiscoveryBudget`, created once per document by ./openapi-ingest.ts), nodes of
 * schemas left out included; once it is spent the document's remaining operations get no schemas (their
 * description is still kept). Each schema also stops at 10,000 nodes of its own.
 *
 * Defends: one document holding the API's event loop — references inlined over and over, across thousands of
 * operations, were 25 s or more of CPU per refresh (a whole 1 MiB document within the budget: ~0.2 s); a
 * schema the catalogue could not serve or the database could not hold — one with a reference that is not local
 * or does not resolve, a reference cycle, nesting past 32 levels or 10,000 nodes once references are inlined, more than
 * 16 KiB of JSON, or any key or string that is not storable text (a NUL, a lone surrogate, a control or
 * bidi-override character) is left out, not cut; the description is cut to 512 characters and left out unless
 * storable. Does not defend: what the schemas say (they are the seller's words, served as data); which of a
 * document's operations keep their schemas when the document is past its budget (document order decides).
 */
import { isStorableText } from '../../http/schemas/common-schemas.js';

export interface EndpointDiscovery {
  description?: string;
  input_schema?: Record<string, unknown>;
  output_schema?: Record<string, unknown>;
}

const MAX_DEPTH = 32;
/** Nodes one schema may expand to: references inlined twice at every level would otherwise grow exponentially. */
const MAX_NODES = 10_000;
/**
 * Nodes all the schemas of one document may expand to together: a hostile 1 MiB document then costs ~0.2 s in
 * all (parse included, on a loaded 2-core machine), and plain specs of up to 1 MiB use well under half of it.
 */
export const MAX_DOCUMENT_NODES = 200_000;
const MAX_SCHEMA_BYTES = 16 * 1024;
const MAX_DESCRIPTION = 512;
const QUERY_METHODS = new Set(['get', 'head', 'delete']);
const SCHEMA_REF = /^#\/components\/schemas\/([A-Za-z0-9._-]{1,128})$/;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Thrown inside the walk: the schema is left out. */
class Unusable extends Error {}

/** What is left of one document's node budget (MAX_DOCUMENT_NODES): one per document, shared by its schemas. */
export interface DiscoveryBudget {
  left: number;
}

export const documentBudget = (): DiscoveryBudget => ({ left: MAX_DOCUMENT_NODES });

/** Nodes walked since the process started, every document together: the work the budget bounds, for tests. */
let nodesWalked = 0;
export const discoveryNodesWalked = (): number => nodesWalked;

/** `node` with local schema references inlined and every string checked; throws Unusable. */
function resolved(
  node: unknown,
  components: Json,
  depth: number,
  seen: readonly string[],
  budget: { left: number },
): unknown {
  if (depth > MAX_DEPTH || --budget.left < 0) throw new Unusable();
  if (typeof node === 'string') {
    if (!isStorableText(node)) throw new Unusable();
    return node;
  }
  if (Array.isArray(node)) return node.map((item) => resolved(item, components, depth + 1, seen, budget));
  if (!isObject(node)) return node;
  if (typeof node.$ref === 'string') {
    const name = SCHEMA_REF.exec(node.$ref)?.[1];
    if (!name || seen.includes(name) || !Object.hasOwn(components, name)) throw new Unusable();
    return resolved(components[name], components, depth + 1, [...seen, name], budget);
  }
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (!isStorableText(key)) throw new Unusable();
    out[key] = resolved(value, components, depth + 1, seen, budget);
  }
  return out;
}

/** The usable form of `schema`, or undefined (see the header); the nodes walked are taken from `document`. */
function usableSchema(schema: unknown, components: Json, document: DiscoveryBudget): Json | undefined {
  if (!isObject(schema) || document.left <= 0) return undefined;
  const allowed = Math.min(MAX_NODES, document.left);
  const budget = { left: allowed };
  try {
    const out = resolved(schema, components, 0, [], budget);
    if (!isObject(out) || Buffer.byteLength(JSON.stringify(out)) > MAX_SCHEMA_BYTES) return undefined;
    return out;
  } catch (err) {
    if (err instanceof Unusable) return undefined;
    throw err;
  } finally {
    // The node that overran the budget was not walked: at most `allowed` nodes are charged.
    const walked = allowed - Math.max(budget.left, 0);
    document.left -= walked;
    nodesWalked += walked;
  }
}

const jsonSchemaOf = (content: unknown): unknown =>
  isObject(content) && isObject(content['application/json']) ? content['application/json'].schema : undefined;

/** The query parameters as one object schema (`required` listing the required ones). */
function querySchemaOf(parameters: unknown): Json | undefined {
  if (!Array.isArray(parameters)) return undefined;
  const properties: Json = {};
  const required: string[] = [];
  for (const p of parameters) {
    if (!isObject(p) || p.in !== 'query' || typeof p.name !== 'string') continue;
    properties[p.name] = isObject(p.schema) ? p.schema : {};
    if (p.required === true) required.push(p.name);
  }
  if (Object.keys(properties).length === 0) return undefined;
  return { type: 'object', properties, ...(required.length ? { required } : {}) };
}

function outputSchemaOf(responses: unknown): unknown {
  if (!isObject(responses)) return undefined;
  for (const status of ['200', '201', '2XX', 'default']) {
    const reply = responses[status];
    if (isObject(reply)) return jsonSchemaOf(reply.content);
  }
  return undefined;
}

function descriptionOf(op: Json): string | undefined {
  const text = typeof op.summary === 'string' ? op.summary : typeof op.description === 'string' ? op.description : '';
  const cut = text.trim().slice(0, MAX_DESCRIPTION);
  return cut !== '' && isStorableText(cut) ? cut : undefined;
}

/**
 * What the operation (`method` lower-case) of `doc` declares for buyers; null when it declares nothing usable.
 * Its schemas draw on `budget`, the document's (`documentBudget()`).
 */
export function discoveryOfOperation(
  doc: Json,
  method: string,
  op: Json,
  budget: DiscoveryBudget,
): EndpointDiscovery | null {
  const components = isObject(doc.components) && isObject(doc.components.schemas) ? doc.components.schemas : {};
  const input = usableSchema(
    QUERY_METHODS.has(method)
      ? querySchemaOf(op.parameters)
      : isObject(op.requestBody)
        ? jsonSchemaOf(op.requestBody.content)
        : undefined,
    components,
    budget,
  );
  const output = usableSchema(outputSchemaOf(op.responses), components, budget);
  const description = descriptionOf(op);
  const out: EndpointDiscovery = {
    ...(description ? { description } : {}),
    ...(input ? { input_schema: input } : {}),
    ...(output ? { output_schema: output } : {}),
  };
  return Object.keys(out).length > 0 ? out : null;
}

/** JSON text of `value` with object keys sorted: equal for equal values, whatever order PostgreSQL gave them. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isObject(value))
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}
