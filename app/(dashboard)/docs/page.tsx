import type { Metadata } from 'next';
import { requestOrigin, requirePrincipal } from '@/app/_lib/session';
import { DocsClient } from './client';

export const metadata: Metadata = { title: 'API docs' };

// The OpenAPI document is fetched in the browser: it is public, cached there for the session, and
// rendering it needs nothing from the server beyond the origin for the examples.
export default async function DocsPage() {
  await requirePrincipal();
  return <DocsClient origin={await requestOrigin()} />;
}
