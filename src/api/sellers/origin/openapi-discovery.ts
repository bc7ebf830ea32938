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
 * description is still kept). Each schema also stops at 10,000 nodes of its own. What is stored is bounded per
 * document too: the discovery of all its operations together takes at most MAX_DISCOVERY_BYTES_PER_DOCUMENT
 * bytes as stored (jsonb text, ./jsonb-text-bytes.ts), counted as each schema is built — a string costs its
 * length, not only one node — and a schema past what is left (less DESCRIPTION_RESERVE_BYTES, kept for the
 * descriptions of later operations) is left out like one past the node budget, a description past all of it
 * too; the document itself is never refused for it, so the seller stays sellable.
 *
 * Defends: one document holding the API's event loop — references inlined over and over, across thousands of
 * operations, were 25 s or more of CPU per refresh (a whole 1 MiB document within the budget: ~0.2 s); one
 * document filling the database — a 100 KB document whose 1,000 operations each name one 16 KiB schema twice
 * stored ~32 MB per seller, read back by every refresh (now at most 1 MiB); a schema the catalogue could not
 * serve or the database could not hold — one with a reference that is not local or does not resolve, a
 * reference cycle, nesting past 32 levels or 10,000 nodes once references are inlined, more than 16 KiB as
 * stored, or any key or string that is not storable text (a NUL, a lone surrogate, a control or bidi-override
 * character) is left out, not cut; the description is cut to 512 characters and left out unless storable.
 * Does not defend: what the schemas say (they are the seller's words, served as data); which of a document's
 * operations keep their schemas when the document is past a budget (document order decides).
 */
import { isStorableText } from '../../http/schemas/common-schemas.js';
import { SEPARATOR_BYTES, scalarBytes, stringBytes } from './jsonb-text-bytes.js';

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
/**
 * Bytes the discovery of all the operations of one document may take as stored (jsonb text, every row
 * together): a seller's ingested discovery is at most this, whatever its schemas' references expand to — the
 * 1 MiB a document may be (MAX_DOCUMENT_BYTES bounds what is fetched, not what inlining makes of it).
 */
export const MAX_DISCOVERY_BYTES_PER_DOCUMENT = 1024 * 1024;
/**
 * Bytes of MAX_DISCOVERY_BYTES_PER_DOCUMENT schemas leave to descriptions and framing: a document whose schemas
 * spend the rest still has its later operations described (1,000 summaries of ~200 bytes).
 */
const DESCRIPTION_RESERVE_BYTES = 256 * 1024;
/** Bytes one schema may take as stored (jsonb text). */
const MAX_SCHEMA_BYTES = 16 * 1024;
/**
 * The most an operation's stored object adds around its values: braces, keys and separators of
 * `{"description": …, "input_schema": …, "output_schema": …}`.
 */
const MAX_FRAMING_BYTES =
  2 + ['description', 'input_schema', 'output_schema'].reduce((n, k) => n + stringBytes(k) + 2 * SEPARATOR_BYTES, 0);
const MAX_DESCRIPTION = 512;
const QUERY_METHODS = new Set(['get', 'head', 'delete']);
const SCHEMA_REF = /^#\/components\/schemas\/([A-Za-z0-9._-]{1,128})$/;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Thrown inside the walk: the schema is left out. */
class Unusable extends Error {}

/**
 * What is left of one document's budgets: nodes to walk (MAX_DOCUMENT_NODES) and bytes to store
 * (MAX_DISCOVERY_BYTES_PER_DOCUMENT). One per document, shared by its operations.
 */
export interface DiscoveryBudget {
  left: number;
  bytesLeft: number;
}

export const documentBudget = (): DiscoveryBudget => ({
  left: MAX_DOCUMENT_NODES,
  bytesLeft: MAX_DISCOVERY_BYTES_PER_DOCUMENT,
});

/** One schema's walk: nodes and stored bytes it may still take. */
interface WalkBudget {
  left: number;
  bytes: number;
}

/** Takes `bytes` from the walk's allowance; throws Unusable once it is spent. */
function charge(budget: WalkBudget, bytes: number): void {
  budget.bytes -= bytes;
  if (budget.bytes < 0) throw new Unusable();
}

/** Nodes walked since the process started, every document together: the work the budget bounds, for tests. */
let nodesWalked = 0;
export const discoveryNodesWalked = (): number => nodesWalked;

/** A storable string's stored bytes, charged; its length is checked first, so a long one costs no more. */
function chargeString(value: string, budget: WalkBudget): void {
  if (value.length + 2 > budget.bytes || !isStorableText(value)) throw new Unusable();
  charge(budget, stringBytes(value));
}

/**
 * `node` with local schema references inlined and every string checked, its stored bytes (jsonb text)
 * charged as it is built; throws Unusable.
 */
function resolved(
  node: unknown,
  components: Json,
  depth: number,
  seen: readonly string[],
  budget: WalkBudget,
): unknown {
  if (depth > MAX_DEPTH || --budget.left < 0) throw new Unusable();
  if (typeof node === 'string') {
    chargeString(node, budget);
    return node;
  }
  if (Array.isArray(node)) {
    charge(budget, 2 + SEPARATOR_BYTES * Math.max(node.length - 1, 0));
    return node.map((item) => resolved(item, components, depth + 1, seen, budget));
  }
  if (!isObject(node)) {
    charge(budget, scalarBytes(node));
    return node;
  }
  if (typeof node.$ref === 'string') {
    const name = SCHEMA_REF.exec(node.$ref)?.[1];
    if (!name || seen.includes(name) || !Object.hasOwn(components, name)) throw new Unusable();
    return resolved(components[name], components, depth + 1, [...seen, name], budget);
  }
  const out: Json = {};
  const entries = Object.entries(node);
  charge(budget, 2 + SEPARATOR_BYTES * Math.max(entries.length - 1, 0));
  for (const [key, value] of entries) {
    chargeString(key, budget);
    charge(budget, SEPARATOR_BYTES);
    out[key] = resolved(value, components, depth + 1, seen, budget);
  }
  return out;
}

/**
 * The usable form of `schema` and its stored bytes, or undefined (see the header): it may take at most `room`
 * bytes; the nodes walked are taken from `document`.
 */
function usableSchema(
  schema: unknown,
  components: Json,
  document: DiscoveryBudget,
  room: number,
): { schema: Json; bytes: number } | undefined {
  if (!isObject(schema) || document.left <= 0 || room <= 0) return undefined;
  const allowed = Math.min(MAX_NODES, document.left);
  const allowedBytes = Math.min(MAX_SCHEMA_BYTES, room);
  const budget = { left: allowed, bytes: allowedBytes };
  try {
    const out = resolved(schema, components, 0, [], budget);
    return isObject(out) ? { schema: out, bytes: allowedBytes - budget.bytes } : undefined;
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
 * It draws on `budget`, the document's (`documentBudget()`): its schemas' nodes, and the bytes it is stored in
 * — description first, then the input and output schemas, each left out when it does not fit what is left.
 */
export function discoveryOfOperation(
  doc: Json,
  method: string,
  op: Json,
  budget: DiscoveryBudget,
): EndpointDiscovery | null {
  const components = isObject(doc.components) && isObject(doc.components.schemas) ? doc.components.schemas : {};
  // The values' bytes, once the framing around them is set aside; the framing actually used is charged last.
  // Schemas may not take the reserve kept for descriptions.
  let room = budget.bytesLeft - MAX_FRAMING_BYTES;
  let described = descriptionOf(op);
  const descriptionBytes = described === undefined ? 0 : stringBytes(described);
  if (descriptionBytes > room) described = undefined;
  else room -= descriptionBytes;
  room -= DESCRIPTION_RESERVE_BYTES;
  const input = usableSchema(
    QUERY_METHODS.has(method)
      ? querySchemaOf(op.parameters)
      : isObject(op.requestBody)
        ? jsonSchemaOf(op.requestBody.content)
        : undefined,
    components,
    budget,
    room,
  );
  if (input) room -= input.bytes;
  const output = usableSchema(outputSchemaOf(op.responses), components, budget, room);
  const out: EndpointDiscovery = {
    ...(described ? { description: described } : {}),
    ...(input ? { input_schema: input.schema } : {}),
    ...(output ? { output_schema: output.schema } : {}),
  };
  const keys = Object.keys(out);
  if (keys.length === 0) return null;
  budget.bytesLeft -=
    (described ? descriptionBytes : 0) +
    (input?.bytes ?? 0) +
    (output?.bytes ?? 0) +
    2 +
    keys.reduce((n, k, i) => n + (i > 0 ? SEPARATOR_BYTES : 0) + stringBytes(k) + SEPARATOR_BYTES, 0);
  return out;
}
