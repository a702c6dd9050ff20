import { Readable } from 'node:stream';
import type { ReadableStream as NodeWebReadableStream } from 'node:stream/web';
import { z } from 'zod';
import { methods, route } from '@/lib/api/route';
import { ApiError } from '@/lib/errors';
import { fileToLoad, putFile } from '@/lib/services/tinker/worker-queue';
import { tinkerFileParamsSchema, workerIdQuerySchema } from '@/lib/schemas/workers';
import { artifactWebStream } from '@/lib/storage';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/workers/tinker/requests/[request_id]/files/[file]', {
  PUT: route(
    {
      auth: 'worker',
      tag: 'workers',
      summary:
        'Upload a file of a Tinker save (raw body): adapter_config.json, adapter_model.safetensors, optimizer.safetensors; limited by TUNEBOARD_MAX_CHECKPOINT_MB',
      params: tinkerFileParamsSchema,
      notFound: 'Tinker request not found',
      query: workerIdQuerySchema,
      streamedBody: {
        description: 'The file, as the raw body',
        content: {
          'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } },
        },
      },
      response: z.object({ size: z.int() }),
    },
    async ({ req, params, query }) => {
      if (!req.body) throw ApiError.validation([{ loc: ['body'], msg: 'Field required', type: 'missing' }]);
      // Streamed with the checkpoint limit, not the body limit: an optimizer state is twice its adapter's size.
      const stream = Readable.fromWeb(req.body as unknown as NodeWebReadableStream<Uint8Array>);
      return putFile(query.worker_id, params.request_id, params.file, stream);
    },
  ),
  GET: route(
    {
      auth: 'worker',
      tag: 'workers',
      summary: 'A file of the weights a Tinker load_weights request restores',
      params: tinkerFileParamsSchema,
      notFound: 'Tinker request not found',
      query: workerIdQuerySchema,
    },
    async ({ params, query }) => {
      const key = await fileToLoad(query.worker_id, params.request_id, params.file);
      const artifact = await artifactWebStream(key);
      if (!artifact) throw ApiError.notFound(`${params.file} is missing from the artifact store`);
      return new Response(artifact.stream, {
        headers: { 'content-type': 'application/octet-stream', 'content-length': String(artifact.size) },
      });
    },
  ),
});
