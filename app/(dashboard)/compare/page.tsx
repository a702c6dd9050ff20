import type { Metadata } from 'next';
import { requirePrincipal } from '@/app/_lib/session';
import { CompareClient } from './client';

export const metadata: Metadata = { title: 'Compare runs' };

/** Run comparison: the selection lives in the URL (search-params.ts); the data loads in the browser, per run. */
export default async function ComparePage() {
  await requirePrincipal();
  return <CompareClient />;
}
