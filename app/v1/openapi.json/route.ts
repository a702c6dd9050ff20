import { methods, route } from '@/lib/api/route';
import { buildOpenApiDocument } from '@/lib/openapi/build';
import packageJson from '@/package.json';
import { routeManifest } from '../route-manifest';

export const dynamic = 'force-dynamic';

let cached: string | undefined;

export const { GET, POST, PUT, PATCH, DELETE } = methods('/v1/openapi.json', {
  GET: route({ auth: 'public', summary: 'This OpenAPI 3.1 document', tag: 'meta' }, async () => {
    cached ??= JSON.stringify(buildOpenApiDocument(routeManifest, { version: packageJson.version }));
    return new Response(cached, {
      headers: { 'content-type': 'application/json', 'cache-control': 'public, max-age=60' },
    });
  }),
});
