import { z } from 'zod';
import { methods, route } from '@/lib/api/route';
import { uploadedFiles } from '@/lib/api/uploads';
import { datasetListSchema, datasetSchema, uploadDatasetQuerySchema } from '@/lib/schemas/datasets';
import { listDatasets, uploadDataset } from '@/lib/services/datasets';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods({
  POST: route(
    {
      summary: 'Upload an SFT dataset (train.jsonl, or trajectories.jsonl + metadata.json) as a new version',
      description:
        'Send multipart/form-data with one part per file, or the raw JSONL as the body (named by `filename`). ' +
        'Files are streamed to the artifact store, every line is validated (422 naming the file and line), and the ' +
        'answer carries the `training_data_url` to pass to POST /v1/preview/sft-training-jobs. Limit: TUNEBOARD_MAX_BODY_MB.',
      tag: 'datasets',
      extension: true,
      query: uploadDatasetQuerySchema,
      response: datasetSchema,
      status: 201,
    },
    ({ principal, req, query }) => uploadDataset(principal, query, uploadedFiles(req, query.filename)),
  ),
  GET: route(
    {
      summary: 'Datasets of the caller’s entities, newest first',
      tag: 'datasets',
      extension: true,
      query: z.object({ entity: z.string().optional(), project: z.string().optional() }),
      response: datasetListSchema,
    },
    ({ principal, query }) => listDatasets(principal, query),
  ),
});
