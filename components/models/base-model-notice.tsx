'use client';

import { useQuery } from '@tanstack/react-query';
import { Alert } from '@/components/ui/alert';
import { baseModelsQuery } from '@/lib/client/queries/models';
import { downloadProgressText } from '@/lib/schemas/base-models';

/**
 * Says on the model page when its base model cannot be served now, and why (issue 43): a Hub-named base the server
 * is still downloading (with its progress, followed live), a download that failed, or any other reason the server
 * gives (a vLLM server that is down). Draws nothing when the base is served. Loaded after hydration, like the page's
 * other optional cards, to keep the model page within its first-load budget (bench:ui).
 */
export function BaseModelNotice({ baseModel }: { baseModel: string }) {
  const list = useQuery({
    ...baseModelsQuery(),
    // While a download runs the list is read every 2 s, so the bar moves and the notice goes when it is done.
    refetchInterval: (query) =>
      query.state.data?.data.some((m) => m.id === baseModel && m.download?.status === 'downloading') ? 2000 : false,
    staleTime: 0,
  });
  const base = list.data?.data.find((m) => m.id === baseModel);
  if (!base || base.available) return null;
  const download = base.download;
  if (download?.status === 'downloading') {
    const share = download.total_bytes ? (download.done_bytes ?? 0) / download.total_bytes : null;
    return (
      <Alert tone="info" title={`Downloading ${baseModel}`} role="status">
        <p data-testid="base-model-download">
          The server is fetching the base model from the Hugging Face Hub:{' '}
          {downloadProgressText(download.done_bytes, download.total_bytes)}. Chat and the playground answer once it is
          here; training does not wait for it.
        </p>
        {share !== null ? (
          <div
            className="mt-2 h-1.5 w-full overflow-hidden rounded-full bg-surface-muted"
            role="progressbar"
            aria-label="Download progress"
            aria-valuemin={0}
            aria-valuemax={100}
            aria-valuenow={Math.floor(share * 100)}
          >
            <div className="h-full bg-accent" style={{ width: `${(share * 100).toFixed(1)}%` }} />
          </div>
        ) : null}
      </Alert>
    );
  }
  return (
    <Alert
      tone={download?.status === 'failed' ? 'danger' : 'warning'}
      title={`${baseModel} cannot be served right now`}
      role="status"
    >
      <p data-testid="base-model-unavailable" className="break-words">
        {base.unavailable_reason}
      </p>
    </Alert>
  );
}
