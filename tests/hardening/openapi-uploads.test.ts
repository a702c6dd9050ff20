import { describe, expect, it } from 'vitest';
import * as openapiRoute from '@/app/v1/openapi.json/route';
import { call } from '../support/helpers';

/** A client generated from /v1/openapi.json must be able to upload a dataset (both bodies, with examples). */
describe('OpenAPI: streamed upload bodies', () => {
  it('documents the dataset upload as raw JSONL and as multipart, each with an example', async () => {
    const doc = (await call(openapiRoute, 'GET', '/v1/openapi.json')).body;
    const upload = doc.paths['/v1/preview/datasets'].post;
    expect(upload.requestBody.required).toBe(true);
    const content = upload.requestBody.content;
    expect(Object.keys(content).sort()).toEqual(['application/jsonl', 'multipart/form-data']);
    expect(content['application/jsonl'].schema).toMatchObject({ type: 'string' });
    const line = String(content['application/jsonl'].example).split('\n')[0];
    expect(JSON.parse(line).messages.at(-1).role).toBe('assistant');
    const multipart = content['multipart/form-data'];
    expect(multipart.schema.properties.file).toMatchObject({
      type: 'array',
      items: { type: 'string', contentMediaType: 'application/octet-stream' },
    });
    expect(multipart.example).toBeDefined();
    expect(upload.responses['413']).toBeDefined();
    expect(upload.responses['422']).toBeDefined();
  });

  it('documents the worker checkpoint upload body', async () => {
    const doc = (await call(openapiRoute, 'GET', '/v1/openapi.json')).body;
    const put = doc.paths['/v1/workers/jobs/{training_job_id}/checkpoint'].put;
    expect(Object.keys(put.requestBody.content)).toEqual(['application/octet-stream']);
  });
});
