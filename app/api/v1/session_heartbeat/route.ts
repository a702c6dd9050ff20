import { methods, route } from '@/lib/api/route';
import { sessionHeartbeatRequestSchema, sessionHeartbeatResponseSchema } from '@/lib/schemas/tinker';
import { sessionHeartbeat } from '@/lib/services/tinker/training';

export const dynamic = 'force-dynamic';

export const { GET, POST, PUT, PATCH, DELETE } = methods('/api/v1/session_heartbeat', {
  POST: route(
    {
      auth: 'tinker',
      tag: 'tinker',
      summary:
        'Keep a Tinker session alive (the SDK sends one every 10 s; silent sessions end after TUNEBOARD_TINKER_SESSION_MINUTES)',
      body: sessionHeartbeatRequestSchema,
      response: sessionHeartbeatResponseSchema,
    },
    async ({ principal, body }) => sessionHeartbeat(principal, body.session_id),
  ),
});
