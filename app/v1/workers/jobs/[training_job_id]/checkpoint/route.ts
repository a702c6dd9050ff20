import { z } from 'zod';
import { methods, route } from '@/lib/api/route';
import { uploadedFiles } from '@/lib/api/uploads';
import { JOB_NOT_FOUND, storeCheckpointUpload } from '@/lib/jobs/queue';
import { workerIdQuerySchema, workerJobParamsSchema } from '@/lib/schemas/workers';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods({
  PUT: route(
    {
      auth: 'worker',
      tag: 'workers',
      summary: 'Upload the trained weights (safetensors body); pass the returned key to complete',
      params: workerJobParamsSchema,
      notFound: JOB_NOT_FOUND,
      query: workerIdQuerySchema,
      streamedBody: {
        description: 'The trained weights as a safetensors file, streamed as the raw body',
        content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
      },
      response: z.object({ artifact_key: z.string() }),
    },
    async ({ req, params, query }) => {
      for await (const file of uploadedFiles(req, 'model.safetensors')) {
        return { artifact_key: await storeCheckpointUpload(params.training_job_id, query.worker_id, file.stream) };
      }
      throw new Error('unreachable: uploadedFiles yields the raw body');
    },
  ),
});
