import { describe, expect, it } from 'vitest';
import {
  groupOperationsByTag,
  inlineRefs,
  listOperations,
  openApiDocumentSchema,
  schemaTypeLabel,
} from './openapi-document';

const doc = openApiDocumentSchema.parse({
  openapi: '3.1.0',
  info: { title: 'T', version: '1' },
  tags: [{ name: 'models', description: 'Models' }, { name: 'unused' }],
  paths: {
    '/v1/models/{id}': {
      parameters: [{ name: 'id', in: 'path', schema: { type: 'string' } }],
      get: {
        tags: ['models'],
        summary: 'Get one',
        parameters: [{ $ref: '#/components/parameters/Verbose' }],
        responses: {
          '200': {
            description: 'OK',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Model' } } },
          },
        },
      },
      delete: { tags: ['zeta'], responses: { '404': { $ref: '#/components/responses/NotFound' } } },
    },
    '/v1/health': { get: { summary: 'Health' } },
    '/v1/models': {
      post: {
        tags: ['models', 'other'],
        requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
      },
    },
  },
  components: {
    parameters: { Verbose: { name: 'verbose', in: 'query', schema: { type: 'boolean' } } },
    responses: { NotFound: { description: 'Missing' } },
    schemas: {
      Model: { type: 'object', properties: { id: { type: 'string' }, parent: { $ref: '#/components/schemas/Model' } } },
    },
  },
});

describe('listOperations', () => {
  it('merges path-level parameters and follows $refs', () => {
    const get = listOperations(doc).find((op) => op.id === 'get-v1-models-id')!;
    expect(get.parameters.map((p) => [p.name, p.in, p.required])).toEqual([
      ['id', 'path', true],
      ['verbose', 'query', false],
    ]);
    expect(get.summary).toBe('Get one');
    const del = listOperations(doc).find((op) => op.method === 'delete')!;
    expect(del.responses).toEqual([{ status: '404', description: 'Missing', body: undefined }]);
    const post = listOperations(doc).find((op) => op.method === 'post')!;
    expect(post.requestBody).toMatchObject({ contentType: 'application/json', required: true });
  });
});

describe('groupOperationsByTag', () => {
  it('orders declared tags first, then the others, then untagged; empty tags are dropped', () => {
    const groups = groupOperationsByTag(doc);
    expect(groups.map((g) => [g.tag, g.operations.length])).toEqual([
      ['models', 2],
      ['zeta', 1],
      ['Other', 1],
    ]);
    expect(groups[0].description).toBe('Models');
  });
});

describe('inlineRefs', () => {
  it('inlines local references and stops at recursion', () => {
    expect(inlineRefs(doc, { $ref: '#/components/schemas/Model' })).toEqual({
      type: 'object',
      properties: { id: { type: 'string' }, parent: { $ref: '#/components/schemas/Model' } },
    });
  });

  it('leaves unknown references alone', () => {
    expect(inlineRefs(doc, { $ref: '#/components/schemas/Nope' })).toEqual({ $ref: '#/components/schemas/Nope' });
  });
});

describe('schemaTypeLabel', () => {
  it.each([
    [{ type: 'string' }, 'string'],
    [{ type: 'integer', format: 'int32' }, 'integer (int32)'],
    [{ type: 'array', items: { type: 'number' } }, 'array of number'],
    [{ anyOf: [{ type: 'string' }, { type: 'null' }] }, 'string | null'],
    [{ enum: ['a', 'b'] }, '"a" | "b"'],
    [undefined, 'any'],
  ])('%j → %s', (schema, label) => {
    expect(schemaTypeLabel(schema)).toBe(label);
  });
});
