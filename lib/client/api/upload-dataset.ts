import type { z } from 'zod';
import { datasetSchema, type DatasetDto } from '@/lib/schemas/datasets';
import { ApiClientError, errorFromResponseBody } from './api-fetch';

export interface DatasetTarget {
  entity: string;
  project: string;
  name: string;
}

/**
 * POST a JSONL file as the raw body. apiFetch only sends JSON; a dataset can be many megabytes, and handing the File
 * itself to fetch lets the browser stream it from disk instead of building a JSON string in memory. The answer and
 * errors go through the same parsing as apiFetch. Datasets and eval sets are both uploaded this way.
 */
export async function uploadJsonl<T extends z.ZodType>(
  path: string,
  file: Blob,
  schema: T,
  signal?: AbortSignal,
): Promise<z.infer<T>> {
  let response: Response;
  try {
    response = await fetch(path, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { accept: 'application/json', 'content-type': 'application/x-ndjson' },
      body: file,
      signal,
    });
  } catch (cause) {
    if (cause instanceof DOMException && cause.name === 'AbortError') throw cause;
    throw new ApiClientError(0, 'Could not reach the server. Check your connection and try again.', {}, { cause });
  }
  const payload: unknown = await response.json().catch(() => undefined);
  if (!response.ok) throw errorFromResponseBody(response.status, payload);
  const parsed = schema.safeParse(payload);
  if (!parsed.success) {
    throw new ApiClientError(
      response.status,
      'The server sent a response this page does not understand.',
      {},
      { cause: parsed.error },
    );
  }
  return parsed.data;
}

/** POST /v1/preview/datasets with the file as the raw body. */
export function uploadDataset(target: DatasetTarget, file: Blob, signal?: AbortSignal): Promise<DatasetDto> {
  const params = new URLSearchParams({ ...target, filename: 'train.jsonl' });
  return uploadJsonl(`/v1/preview/datasets?${params}`, file, datasetSchema, signal);
}
