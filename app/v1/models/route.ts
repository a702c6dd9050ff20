import { methods, route } from '@/lib/api/route';
import { openAiModelListSchema } from '@/lib/schemas/openai-models';
import { listServableModels } from '@/lib/services/chat-models';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods(
  '/v1/models',
  {
    GET: route(
      {
        flavor: 'chat',
        summary:
          'Models that chat completions can use: built-in base models and your trained models (OpenAI list format)',
        tag: 'chat',
        response: openAiModelListSchema,
      },
      ({ principal }) => listServableModels(principal),
    ),
  },
  'chat',
);
