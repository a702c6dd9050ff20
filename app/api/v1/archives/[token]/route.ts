import { z } from 'zod';
import { methods, route } from '@/lib/api/route';
import { openArchive } from '@/lib/services/tinker/weights';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/api/v1/archives/[token]', {
  GET: route(
    {
      // The link is the credential (15 minutes, from the archive route): the SDK downloads it with plain urllib.
      auth: 'public',
      tag: 'tinker',
      summary:
        'Download saved weights as a tar through a link from the archive route (no API key: the link is the credential)',
      params: z.object({ token: z.string().regex(/^[A-Za-z0-9_-]{16,64}$/) }),
      notFound: 'This download link is unknown or has expired (links last 15 minutes)',
    },
    async ({ params }) => {
      const archive = await openArchive(params.token);
      return new Response(archive.body as BodyInit, {
        headers: {
          'content-type': 'application/x-tar',
          'content-length': String(archive.size),
          'content-disposition': `attachment; filename="${archive.filename.replace(/[^\w.-]/g, '_')}"`,
        },
      });
    },
  ),
});
