import { methods, route } from '@/lib/api/route';
import { baseWeightsKey, JOB_NOT_FOUND } from '@/lib/jobs/server/queue';
import { weightsQuerySchema, workerJobParamsSchema } from '@/lib/schemas/workers';
import { artifactWebStream } from '@/lib/storage';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/workers/jobs/[training_job_id]/weights', {
  GET: route(
    {
      auth: 'worker',
      tag: 'workers',
      summary:
        "The weights to train from (safetensors; file=adapter_config.json for a LoRA checkpoint's config); 204 when the job starts from the base model",
      params: workerJobParamsSchema,
      notFound: JOB_NOT_FOUND,
      query: weightsQuerySchema,
    },
    async ({ params, query }) => {
      const key = await baseWeightsKey(params.training_job_id, query.worker_id, query.file);
      const artifact = key ? await artifactWebStream(key) : undefined;
      if (!artifact) return new Response(null, { status: 204 });
      return new Response(artifact.stream, {
        headers: { 'content-type': 'application/octet-stream', 'content-length': String(artifact.size) },
      });
    },
  ),
});
