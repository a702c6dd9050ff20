import 'server-only';
import { z } from 'zod';
import type { RouteHandler } from '@/lib/api/route';
import { errorDetailSchema, validationErrorSchema } from '@/lib/schemas/common';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export interface RouteEntry {
  /** OpenAPI path template, e.g. /v1/preview/models/{model_id}. */
  path: string;
  module: Partial<Record<Method, RouteHandler>>;
}

/**
 * Manifest entries for route modules, each under the path its `methods()` registered (`[model_id]` written as
 * OpenAPI's `{model_id}`): a route's path is written once, in its file, beside its folder, which a test compares.
 */
export function routeEntries(modules: Partial<Record<Method, RouteHandler>>[]): RouteEntry[] {
  return modules.map((module) => {
    const registered = Object.values(module).find((h) => h?.routePath)?.routePath;
    if (!registered) throw new Error('a route module in the manifest was not built with methods()');
    return { path: registered.replace(/\[(\w+)\]/g, '{$1}'), module };
  });
}

type JsonSchema = Record<string, unknown>;

function toJsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  // Query parsers transform strings into numbers: the wire type is their input side.
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  delete json.$schema;
  return json;
}

const chatErrorSchema = z.object({
  error: z.object({ message: z.string(), type: z.string(), param: z.string().nullable(), code: z.int() }),
});

const ERROR_TEXT: Record<number, string> = {
  401: 'Missing or invalid API key',
  403: 'Forbidden',
  404: 'Not found (also for resources outside the key’s entities)',
  405: 'Method not allowed',
  409: 'Conflict',
  413: 'Request body too large',
  422: 'Validation error',
};

/** Builds the OpenAPI 3.1 document from the route declarations themselves (ARCHITECTURE convention 1). */
export function buildOpenApiDocument(routes: RouteEntry[], info: { version: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const entry of routes) {
    for (const [method, handler] of Object.entries(entry.module) as [Method, RouteHandler][]) {
      const def = handler?.definition;
      if (!def) continue; // the generated 405 answers for unsupported methods
      const chat = def.flavor === 'chat';
      const errorBody = (status: number) => ({
        description: ERROR_TEXT[status] ?? 'Error',
        content: {
          'application/json': {
            schema: chat
              ? { $ref: '#/components/schemas/ChatError' }
              : status === 422
                ? { $ref: '#/components/schemas/ValidationError' }
                : { $ref: '#/components/schemas/ErrorDetail' },
          },
        },
      });
      const parameters: unknown[] = [];
      for (const name of [...entry.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1])) {
        parameters.push({ name, in: 'path', required: true, schema: { type: 'string' } });
      }
      if (def.query instanceof z.ZodObject) {
        for (const [name, field] of Object.entries(def.query.shape as Record<string, z.ZodType>)) {
          const schema = toJsonSchema(field, 'input');
          parameters.push({
            name,
            in: 'query',
            required: !field.safeParse(undefined).success,
            ...(typeof schema.description === 'string' ? { description: schema.description } : {}),
            schema,
          });
        }
      }
      const responses: Record<string, unknown> = {
        [String(def.status ?? 200)]: {
          description: 'Success',
          content: { 'application/json': { schema: def.response ? toJsonSchema(def.response, 'output') : {} } },
        },
      };
      if (def.auth !== 'public') responses['401'] = errorBody(401);
      if (def.params) responses['404'] = errorBody(404);
      if (def.query || def.body) responses[chat ? '400' : '422'] = errorBody(chat ? 400 : 422);
      if (def.body || def.streamedBody) responses['413'] = errorBody(413);
      if (def.streamedBody && !chat) responses['422'] = errorBody(422);

      const operation: Record<string, unknown> = {
        operationId: `${method.toLowerCase()}${entry.path.replace(/\{(\w+)\}/g, 'By_$1').replace(/[^a-zA-Z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
        tags: [def.tag ?? 'other'],
        summary: def.summary ?? `${method} ${entry.path}`,
        ...(def.description || def.extension
          ? {
              description: [
                def.extension ? '**Extension** of the interface, used by the dashboard.' : '',
                def.description ?? '',
              ]
                .filter(Boolean)
                .join('\n\n'),
            }
          : {}),
        ...(def.extension ? { 'x-extension': true } : {}),
        parameters,
        responses,
        security:
          def.auth === 'public'
            ? []
            : def.auth === 'worker'
              ? [{ workerToken: [] }]
              : def.auth === 'tinker'
                ? [{ tinkerApiKey: [] }, { bearerAuth: [] }]
                : [{ bearerAuth: [] }, { sessionCookie: [] }],
      };
      if (def.streamedBody) {
        operation.requestBody = { required: true, ...def.streamedBody };
      } else if (def.body) {
        operation.requestBody = {
          required: true,
          content: { 'application/json': { schema: toJsonSchema(def.body, 'input') } },
        };
      }
      (paths[entry.path] ??= {})[method.toLowerCase()] = operation;
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Tuneboard API',
      version: info.version,
      description:
        'Training and inference API compatible with the clients of the serverless training API (OpenPipe ART) and the OpenAI SDKs. ' +
        'Operations marked as extensions are specific to Tuneboard.',
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key from Settings → API keys (tb_…)' },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: 'tb_session', description: 'The dashboard session' },
        workerToken: { type: 'http', scheme: 'bearer', description: 'TUNEBOARD_WORKER_TOKEN, for training workers' },
        tinkerApiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-Key',
          description: 'The Tinker SDK: tml- followed by an API key (TINKER_API_KEY=tml-tb_…)',
        },
      },
      schemas: {
        ErrorDetail: toJsonSchema(errorDetailSchema, 'output'),
        ValidationError: toJsonSchema(validationErrorSchema, 'output'),
        ChatError: toJsonSchema(chatErrorSchema, 'output'),
      },
    },
  };
}
