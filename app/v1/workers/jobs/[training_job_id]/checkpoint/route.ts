import { methods, route } from '@/lib/api/route';
import { withUploadedFiles } from '@/lib/api/uploads';
import { config } from '@/lib/config';
import { JOB_NOT_FOUND, storeCheckpointUpload } from '@/lib/jobs/server/queue';
import {
  checkpointUploadQuerySchema,
  workerJobParamsSchema,
  checkpointUploadResponseSchema,
} from '@/lib/schemas/workers';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/workers/jobs/[training_job_id]/checkpoint', {
  PUT: route(
    {
      auth: 'worker',
      tag: 'workers',
      summary:
        "Upload a checkpoint file (raw body): model.safetensors, or a LoRA adapter's adapter_config.json and adapter_model.safetensors; pass the weights' key to complete; limited by TUNEBOARD_MAX_CHECKPOINT_MB",
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
      response: checkpointUploadResponseSchema,
    },
    // Limited by TUNEBOARD_MAX_CHECKPOINT_MB, declared length included (a LoRA adapter of rank 64 on an 8B model is
    // past the 256 MiB body limit), and streamed to the store without large-body admission: nothing is parsed or
    // held in memory, and a refused upload would cost a worker a retry loop.
    async ({ req, params, query }) =>
      withUploadedFiles(
        req,
        query.file,
        { limitBytes: config.maxCheckpointBytes, limitSetting: 'TUNEBOARD_MAX_CHECKPOINT_MB', largeAdmission: false },
        async (files) => {
          for await (const file of files) {
            return {
              artifact_key: await storeCheckpointUpload(
                params.training_job_id,
                query.worker_id,
                file.stream,
                query.file,
              ),
            };
          }
          throw new Error('unreachable: uploadedFiles yields the raw body');
        },
      ),
  ),
});
