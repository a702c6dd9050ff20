import { z } from 'zod';

/*
 * A deliberately loose reading of an OpenAPI 3.1 document: the docs page renders whatever
 * /v1/openapi.json contains, so unknown keys pass through and only the fields it shows are typed.
 */

const refSchema = z.object({ $ref: z.string() });

const parameterSchema = z
  .object({
    name: z.string(),
    in: z.string(),
    required: z.boolean().optional(),
    description: z.string().optional(),
    deprecated: z.boolean().optional(),
    schema: z.unknown().optional(),
  })
  .loose();

const mediaTypeSchema = z.object({ schema: z.unknown().optional(), example: z.unknown().optional() }).loose();
const contentSchema = z.record(z.string(), mediaTypeSchema);

const requestBodySchema = z
  .object({ description: z.string().optional(), required: z.boolean().optional(), content: contentSchema.optional() })
  .loose();

const responseSchema = z.object({ description: z.string().optional(), content: contentSchema.optional() }).loose();

const operationSchema = z
  .object({
    tags: z.array(z.string()).optional(),
    summary: z.string().optional(),
    description: z.string().optional(),
    operationId: z.string().optional(),
    deprecated: z.boolean().optional(),
    parameters: z.array(z.union([refSchema, parameterSchema])).optional(),
    requestBody: z.union([refSchema, requestBodySchema]).optional(),
    responses: z.record(z.string(), z.union([refSchema, responseSchema])).optional(),
  })
  .loose();

export const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options', 'trace'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

const pathItemSchema = z
  .object({
    summary: z.string().optional(),
    description: z.string().optional(),
    parameters: z.array(z.union([refSchema, parameterSchema])).optional(),
    get: operationSchema.optional(),
    post: operationSchema.optional(),
    put: operationSchema.optional(),
    patch: operationSchema.optional(),
    delete: operationSchema.optional(),
    head: operationSchema.optional(),
    options: operationSchema.optional(),
    trace: operationSchema.optional(),
  })
  .loose();

export const openApiDocumentSchema = z
  .object({
    openapi: z.string(),
    info: z.object({ title: z.string(), version: z.string(), description: z.string().optional() }).loose(),
    servers: z.array(z.object({ url: z.string(), description: z.string().optional() }).loose()).optional(),
    paths: z.record(z.string(), pathItemSchema).optional(),
    components: z.record(z.string(), z.unknown()).optional(),
    tags: z.array(z.object({ name: z.string(), description: z.string().optional() }).loose()).optional(),
  })
  .loose();

export type OpenApiDocument = z.infer<typeof openApiDocumentSchema>;
type RawOperation = z.infer<typeof operationSchema>;
type RawParameter = z.infer<typeof parameterSchema>;

export interface OperationParameter {
  name: string;
  in: string;
  required: boolean;
  description?: string;
  deprecated: boolean;
  schema?: unknown;
}

export interface OperationBody {
  contentType: string;
  schema?: unknown;
}

export interface OperationResponse {
  status: string;
  description?: string;
  body?: OperationBody;
}

export interface Operation {
  /** Stable and unique within the document: used as the HTML anchor. */
  id: string;
  method: HttpMethod;
  path: string;
  summary?: string;
  description?: string;
  deprecated: boolean;
  parameters: OperationParameter[];
  requestBody?: OperationBody & { required: boolean; description?: string };
  responses: OperationResponse[];
}

export interface OperationGroup {
  tag: string;
  description?: string;
  operations: Operation[];
}

function decodePointerToken(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** Follows a local JSON pointer (`#/components/schemas/Model`); remote references are left unresolved. */
export function resolvePointer(doc: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = doc;
  for (const token of ref.slice(2).split('/').map(decodePointerToken)) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[token];
  }
  return node;
}

function follow<T>(doc: OpenApiDocument, value: { $ref: string } | T, schema: z.ZodType<T>): T | undefined {
  if (value && typeof value === 'object' && '$ref' in value && typeof value.$ref === 'string') {
    const parsed = schema.safeParse(resolvePointer(doc, value.$ref));
    return parsed.success ? parsed.data : undefined;
  }
  return value as T;
}

const MAX_INLINE_DEPTH = 12;

/**
 * Replaces local `$ref`s by their targets so a reader sees the whole shape in one block. A schema that
 * refers to itself keeps its `$ref` at the point of recursion, and very deep nesting stops inlining.
 */
export function inlineRefs(doc: unknown, schema: unknown, stack: readonly string[] = []): unknown {
  if (Array.isArray(schema)) return schema.map((item) => inlineRefs(doc, item, stack));
  if (schema === null || typeof schema !== 'object') return schema;
  const record = schema as Record<string, unknown>;
  const ref = record.$ref;
  if (typeof ref === 'string') {
    if (stack.includes(ref) || stack.length >= MAX_INLINE_DEPTH) return schema;
    const target = resolvePointer(doc, ref);
    if (target === undefined) return schema;
    const { $ref: _ref, ...siblings } = record;
    const inlined = inlineRefs(doc, target, [...stack, ref]);
    return Object.keys(siblings).length > 0 && inlined && typeof inlined === 'object'
      ? { ...(inlined as Record<string, unknown>), ...(inlineRefs(doc, siblings, stack) as Record<string, unknown>) }
      : inlined;
  }
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, inlineRefs(doc, value, stack)]));
}

function pickBody(content: z.infer<typeof contentSchema> | undefined): OperationBody | undefined {
  if (!content) return undefined;
  const types = Object.keys(content);
  const contentType = types.find((t) => t.includes('json')) ?? types[0];
  if (!contentType) return undefined;
  return { contentType, schema: content[contentType]?.schema };
}

function toParameters(doc: OpenApiDocument, raw: RawOperation['parameters']): OperationParameter[] {
  return (raw ?? [])
    .map((p) => follow<RawParameter>(doc, p, parameterSchema))
    .filter((p): p is RawParameter => p !== undefined)
    .map((p) => ({
      name: p.name,
      in: p.in,
      required: p.required ?? p.in === 'path',
      description: p.description,
      deprecated: p.deprecated ?? false,
      schema: p.schema,
    }));
}

function operationId(method: string, path: string): string {
  return `${method}-${path}`
    .replace(/[^a-zA-Z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .toLowerCase();
}

/** Every operation of the document, in path order, with path-level parameters merged in. */
export function listOperations(doc: OpenApiDocument): (Operation & { tags: string[] })[] {
  const out: (Operation & { tags: string[] })[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    const shared = toParameters(doc, item.parameters);
    for (const method of HTTP_METHODS) {
      const op: RawOperation | undefined = item[method];
      if (!op) continue;
      const own = toParameters(doc, op.parameters);
      // An operation-level parameter overrides the path-level one with the same name and location.
      const parameters = [...shared.filter((s) => !own.some((o) => o.name === s.name && o.in === s.in)), ...own];
      const body = op.requestBody ? follow(doc, op.requestBody, requestBodySchema) : undefined;
      const bodyContent = pickBody(body?.content);
      out.push({
        id: operationId(method, path),
        method,
        path,
        tags: op.tags ?? [],
        summary: op.summary ?? item.summary,
        description: op.description,
        deprecated: op.deprecated ?? false,
        parameters,
        requestBody: bodyContent
          ? { ...bodyContent, required: body?.required ?? false, description: body?.description }
          : undefined,
        responses: Object.entries(op.responses ?? {}).map(([status, value]) => {
          const response = follow(doc, value, responseSchema);
          return { status, description: response?.description, body: pickBody(response?.content) };
        }),
      });
    }
  }
  return out;
}

export const UNTAGGED = 'Other';

/**
 * Operations grouped by their first tag: tags declared at the top of the document come first, in their
 * order, then undeclared tags alphabetically, then untagged operations.
 */
export function groupOperationsByTag(doc: OpenApiDocument): OperationGroup[] {
  const declared = doc.tags ?? [];
  const groups = new Map<string, OperationGroup>();
  for (const tag of declared) groups.set(tag.name, { tag: tag.name, description: tag.description, operations: [] });
  const extra: OperationGroup[] = [];
  let untagged: OperationGroup | undefined;
  for (const { tags, ...op } of listOperations(doc)) {
    const tag = tags[0];
    if (tag === undefined) {
      untagged ??= { tag: UNTAGGED, operations: [] };
      untagged.operations.push(op);
      continue;
    }
    let group = groups.get(tag);
    if (!group) {
      group = { tag, operations: [] };
      groups.set(tag, group);
      extra.push(group);
    }
    group.operations.push(op);
  }
  const ordered = [
    ...declared.map((t) => groups.get(t.name)!),
    ...extra.sort((a, b) => a.tag.localeCompare(b.tag)),
    ...(untagged ? [untagged] : []),
  ];
  return ordered.filter((g) => g.operations.length > 0);
}

/** A short type label for a parameter table: `string`, `integer (int32)`, `array of string`, `a | b`. */
export function schemaTypeLabel(schema: unknown): string {
  if (schema === null || typeof schema !== 'object') return 'any';
  const s = schema as Record<string, unknown>;
  if (typeof s.$ref === 'string') return s.$ref.split('/').at(-1) ?? 'object';
  if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  if ('const' in s) return JSON.stringify(s.const);
  const variants = (Array.isArray(s.anyOf) && s.anyOf) || (Array.isArray(s.oneOf) && s.oneOf);
  if (variants) return variants.map(schemaTypeLabel).join(' | ');
  const type = Array.isArray(s.type) ? s.type.join(' | ') : typeof s.type === 'string' ? s.type : undefined;
  if (type === 'array') return `array of ${schemaTypeLabel(s.items)}`;
  if (type) return typeof s.format === 'string' ? `${type} (${s.format})` : type;
  return s.properties ? 'object' : 'any';
}
