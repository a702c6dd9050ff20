import { methods, route } from '@/lib/api/route';
import { createModelBodySchema, listModelsQuerySchema, modelListSchema, modelSchema } from '@/lib/schemas/models';
import { createModel, listModels } from '@/lib/services/models';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/models', {
  POST: route(
    {
      summary: 'Create a model (or return the existing one with return_existing)',
      tag: 'models',
      body: createModelBodySchema,
      response: modelSchema,
    },
    ({ principal, body }) => createModel(principal, body),
  ),
  /** Extension: the dashboard's model list. */
  GET: route(
    {
      summary: 'List models of the caller’s entities, newest first',
      tag: 'models',
      extension: true,
      query: listModelsQuerySchema,
      response: modelListSchema,
    },
    ({ principal, query }) => listModels(principal, query),
  ),
});
