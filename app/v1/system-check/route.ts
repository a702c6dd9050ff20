import { json } from '@/lib/api/respond';
import { methods, route } from '@/lib/api/route';
import { systemCheck } from '@/lib/services/health';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/system-check', {
  GET: route(
    {
      summary: 'Checks the database and both job queues; 503 when any check fails; public',
      tag: 'health',
      auth: 'public',
    },
    async () => {
      const { ok, body } = await systemCheck();
      return json(body, { status: ok ? 200 : 503, headers: ok ? {} : { 'retry-after': '5' } });
    },
  ),
});
