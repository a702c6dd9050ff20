import { ApiError } from '@/lib/errors';
import { errorResponse } from '@/lib/api/respond';

export const dynamic = 'force-dynamic';

/** Unknown Tinker API paths answer a JSON 404 like unknown /v1 paths (docs/tinker.md §2.1), never Next's HTML page. */
async function notFound(): Promise<Response> {
  return errorResponse(new ApiError('not_found', 'Not Found: this server has no such Tinker API route'), 'preview');
}

export { notFound as GET, notFound as POST, notFound as PUT, notFound as PATCH, notFound as DELETE };
