import { queryOptions } from '@tanstack/react-query';
import { apiFetch } from '../api/api-fetch';
import { openApiDocumentSchema } from '../api/openapi-document';

export const openApiKeys = {
  document: () => ['openapi', 'document'] as const,
};

export const openApiDocumentQuery = () =>
  queryOptions({
    queryKey: openApiKeys.document(),
    queryFn: ({ signal }) => apiFetch('/v1/openapi.json', openApiDocumentSchema, { signal }),
    // The document only changes with a deploy.
    staleTime: Infinity,
  });
