import { ApiError } from '@/lib/errors';
import { errorResponse } from '@/lib/api/respond';

export const dynamic = 'force-dynamic';

/** Unknown /v1 paths answer JSON 404 (docs/contract.md §1.2), never Next's HTML page. */
async function notFound(): Promise<Response> {
  return errorResponse(new ApiError('not_found', 'Not Found'), 'preview');
}

export { notFound as GET, notFound as POST, notFound as PUT, notFound as PATCH, notFound as DELETE };
