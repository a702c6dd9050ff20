import { methods, route } from '@/lib/api/route';
import { withUploadedFiles } from '@/lib/api/uploads';
import { config } from '@/lib/config';
import {
  evalSetListSchema,
  evalSetSchema,
  listEvalSetsQuerySchema,
  uploadEvalSetQuerySchema,
} from '@/lib/schemas/evals';
import { listEvalSets, uploadEvalSet } from '@/lib/services/evals';

export const dynamic = 'force-dynamic';

const EXAMPLE_JSONL =
  '{"messages":[{"role":"user","content":"What is 2+2?"}],"reference":"4","metadata":{"topic":"math"}}\n' +
  '{"messages":[{"role":"user","content":"Capital of France?"},{"role":"assistant","content":"Paris"}]}\n';

const evalSetUploadBody = {
  description:
    'The JSONL itself (any content type other than multipart), or multipart/form-data with one `file` part. Each ' +
    'line is `{"messages":[…],"reference"?:any,"metadata"?:{…}}`; a trailing assistant message is the reference ' +
    'when there is none. At most 10,000 examples.',
  content: {
    'application/jsonl': {
      schema: { type: 'string', description: 'One JSON object per line' },
      example: EXAMPLE_JSONL,
    },
    'multipart/form-data': {
      schema: {
        type: 'object',
        required: ['file'],
        properties: { file: { type: 'string', contentMediaType: 'application/octet-stream' } },
      },
    },
  },
};

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/preview/eval-sets', {
  POST: route(
    {
      summary: 'Upload an eval set (JSONL of examples) as the next version of its name',
      description:
        'Every line is checked (422 naming each bad line and why). Uploading the same name again in the same ' +
        'project adds a version; versions never change. Limit: TUNEBOARD_MAX_BODY_MB, lines TUNEBOARD_MAX_DATASET_LINE_MB.',
      tag: 'evals',
      extension: true,
      query: uploadEvalSetQuerySchema,
      streamedBody: evalSetUploadBody,
      response: evalSetSchema,
      status: 201,
    },
    ({ principal, req, query }) =>
      withUploadedFiles(
        req,
        'eval.jsonl',
        { limitBytes: config.largeBodyLimitBytes, limitSetting: 'TUNEBOARD_MAX_BODY_MB', largeAdmission: true },
        (files) => uploadEvalSet(principal, query, files),
      ),
  ),
  GET: route(
    {
      summary: 'Eval sets of the caller’s entities, every version, newest first',
      tag: 'evals',
      extension: true,
      query: listEvalSetsQuerySchema,
      response: evalSetListSchema,
    },
    ({ principal, query }) => listEvalSets(principal, query),
  ),
});
