import { z } from 'zod';
import { methods, route } from '@/lib/api/route';
import { uploadedFiles } from '@/lib/api/uploads';
import { JOB_NOT_FOUND, storeCheckpointUpload } from '@/lib/jobs/server/queue';
import { checkpointUploadQuerySchema, workerJobParamsSchema } from '@/lib/schemas/workers';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/workers/jobs/[training_job_id]/checkpoint', {
  PUT: route(
    {
      auth: 'worker',
      tag: 'workers',
      summary:
        "Upload a checkpoint file (raw body): model.safetensors, or a LoRA adapter's adapter_config.json and adapter_model.safetensors; pass the weights' key to complete",
      params: workerJobParamsSchema,
      notFound: JOB_NOT_FOUND,
      query: checkpointUploadQuerySchema,
      streamedBody: {
        description:
          "The trained weights, streamed as the raw body: a safetensors file, or one of a LoRA adapter's two files (named by `file`)",
        content: {
          'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } },
        },
      },
      response: z.object({ artifact_key: z.string() }),
    },
    async ({ req, params, query }) => {
      for await (const file of uploadedFiles(req, query.file)) {
        return {
          artifact_key: await storeCheckpointUpload(params.training_job_id, query.worker_id, file.stream, query.file),
        };
      }
      throw new Error('unreachable: uploadedFiles yields the raw body');
    },
  ),
});
