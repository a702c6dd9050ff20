import { z } from 'zod';
import { methods, route } from '@/lib/api/route';
import { withUploadedFiles } from '@/lib/api/uploads';
import { config } from '@/lib/config';
import { datasetListSchema, datasetSchema, uploadDatasetQuerySchema } from '@/lib/schemas/datasets';
import { listDatasets, uploadDataset } from '@/lib/services/datasets';

export const dynamic = 'force-dynamic';

const EXAMPLE_JSONL =
  '{"messages":[{"role":"user","content":"2+2?"},{"role":"assistant","content":"4"}]}\n' +
  '{"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Capital of France?"},{"role":"assistant","content":"Paris"}]}\n';

const datasetUploadBody = {
  description:
    'Either the JSONL itself (any content type other than multipart; stored under the `filename` query parameter, ' +
    'default train.jsonl), or multipart/form-data with one `file` part per file: a `.jsonl` file (train.jsonl or ' +
    'trajectories.jsonl) and optionally `metadata.json`. Each line is one `{"messages":[…],"tools"?:[…]}` object whose ' +
    'last message comes from the assistant.',
  content: {
    'application/jsonl': {
      schema: { type: 'string', description: 'One JSON object per line' },
      example: EXAMPLE_JSONL,
    },
    'multipart/form-data': {
      schema: {
        type: 'object',
        required: ['file'],
        properties: {
          file: {
            type: 'array',
            description:
              'The files, each part named by its filename (train.jsonl or trajectories.jsonl, metadata.json)',
            items: { type: 'string', contentMediaType: 'application/octet-stream' },
          },
        },
      },
      example: { file: ['trajectories.jsonl: ' + EXAMPLE_JSONL.split('\n')[0], 'metadata.json: {"format":"jsonl"}'] },
    },
  },
};

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/datasets', {
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
      streamedBody: datasetUploadBody,
      response: datasetSchema,
      status: 201,
    },
    // Admitted like any other large body (TUNEBOARD_MAX_LARGE_REQUESTS), and the slot is held until the files are
    // validated, which costs what reading them did.
    ({ principal, req, query }) =>
      withUploadedFiles(
        req,
        query.filename,
        { limitBytes: config.largeBodyLimitBytes, limitSetting: 'TUNEBOARD_MAX_BODY_MB', largeAdmission: true },
        (files) => uploadDataset(principal, query, files),
      ),
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
