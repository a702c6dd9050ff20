import { methods, route } from '@/lib/api/route';
import { createModelBodySchema, listModelsQuerySchema, modelListSchema, modelSchema } from '@/lib/schemas/models';
import { createModel, listModels } from '@/lib/services/models';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods({
  POST: route({ body: createModelBodySchema, response: modelSchema }, ({ principal, body }) => createModel(principal, body)),
  /** Extension: the dashboard's model list. */
  GET: route({ query: listModelsQuerySchema, response: modelListSchema }, ({ principal, query }) =>
    listModels(principal, query),
  ),
});
