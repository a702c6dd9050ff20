import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import type { Metadata } from 'next';
import { Suspense } from 'react';
import { preload } from 'react-dom';
import { requirePrincipal } from '@/app/_lib/session';
import { compareCurvesUrl } from '@/lib/client/queries/compare';
import { compareRuns } from '@/lib/services/run-comparison';
import { CompareClient } from './client';
import { compareQueryKey, compareSelection, parseCompareSearchParams } from './search-params';

export const metadata: Metadata = { title: 'Compare runs' };

interface ComparePageProps {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}

/**
 * Run comparison: the selection lives in the URL (search-params.ts). The run table comes with the HTML, and the
 * browser is told to fetch every run's curve at once, in parallel with the scripts: after hydration the page
 * would otherwise ask for the comparison, wait, then ask for the curves (two round trips after the scripts, 1–2 s
 * of the 8 × 20 × 10,000 comparison's time in bench:ui).
 */
export default async function ComparePage({ searchParams }: ComparePageProps) {
  const principal = await requirePrincipal();
  const url = await parseCompareSearchParams(searchParams);
  const selection = compareSelection(url);
  // Models named in the URL are the comparison's runs in that order (when the API accepts them): their curves can be
  // asked for before the run table is read, and the page's shell (which carries the hint) goes out without waiting
  // for it; the table streams in behind the Suspense boundary.
  if (selection && 'model_ids' in selection)
    preload(compareCurvesUrl(url.models), { as: 'fetch', crossOrigin: 'anonymous' });
  return (
    <Suspense>
      <ComparedRuns
        principal={principal}
        selection={selection}
        preloaded={selection !== null && 'model_ids' in selection}
      />
    </Suspense>
  );
}

async function ComparedRuns({
  principal,
  selection,
  preloaded,
}: {
  principal: Awaited<ReturnType<typeof requirePrincipal>>;
  selection: ReturnType<typeof compareSelection>;
  preloaded: boolean;
}) {
  const queryClient = new QueryClient();
  if (selection) {
    // A selection the API refuses (an id of a model the user cannot see) is left to the browser, which shows the
    // API's error with a retry: the page itself still renders.
    const comparison = await queryClient
      .fetchQuery({ queryKey: compareQueryKey(selection), queryFn: () => compareRuns(principal, selection) })
      .catch(() => null);
    const ids = comparison?.runs.map((r) => r.model_id) ?? [];
    if (ids.length > 0 && !preloaded) preload(compareCurvesUrl(ids), { as: 'fetch', crossOrigin: 'anonymous' });
  }
  return (
    <HydrationBoundary state={dehydrate(queryClient)}>
      <CompareClient />
    </HydrationBoundary>
  );
}
