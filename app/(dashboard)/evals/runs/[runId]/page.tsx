import type { Metadata } from 'next';
import { requirePrincipal } from '@/app/_lib/session';
import { EvalRunClient } from './client';

export const metadata: Metadata = { title: 'Eval run' };

/** One eval run: its chart, summary and per-example results load in the browser and follow the run while it is open. */
export default async function EvalRunPage({ params }: { params: Promise<{ runId: string }> }) {
  await requirePrincipal();
  const { runId } = await params;
  return <EvalRunClient runId={runId} />;
}
