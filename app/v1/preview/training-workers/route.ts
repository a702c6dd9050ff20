import { methods, route } from '@/lib/api/route';
import { trainingWorkerListSchema } from '@/lib/schemas/workers';
import { listConnectedWorkers } from '@/lib/services/training-workers';

export const dynamic = 'force-dynamic';

/** Extension: the training workers connected to this server, what they can train and what they run. */
export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/training-workers', {
  GET: route(
    {
      summary: 'Connected training workers: capabilities, status and (when visible to you) the job each runs',
      tag: 'training-jobs',
      extension: true,
      response: trainingWorkerListSchema,
    },
    ({ principal }) => listConnectedWorkers(principal),
  ),
});
