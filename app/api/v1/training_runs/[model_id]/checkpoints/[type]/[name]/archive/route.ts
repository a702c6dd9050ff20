import { z } from 'zod';
import { methods, route } from '@/lib/api/route';
import { requestOrigin } from '@/lib/api/tinker-headers';
import { archiveLink } from '@/lib/services/tinker/weights';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods(
  '/api/v1/training_runs/[model_id]/checkpoints/[type]/[name]/archive',
  {
    GET: route(
      {
        auth: 'tinker',
        tag: 'tinker',
        summary:
          "A download link for saved weights (a tar of PEFT's adapter files, plus optimizer.safetensors for a training state): a 302 to a URL valid for 15 minutes that needs no API key",
        params: z.object({
          model_id: z.string().min(1).max(256),
          type: z.string().min(1).max(32),
          name: z.string().min(1).max(256),
        }),
        notFound: 'Saved weights not found',
      },
      async ({ req, principal, params }) => {
        const link = await archiveLink(principal, params.model_id, params.type, params.name, requestOrigin(req));
        return new Response(null, {
          status: 302,
          headers: { location: link.url, expires: link.expires.toUTCString(), 'cache-control': 'no-store' },
        });
      },
    ),
  },
);
