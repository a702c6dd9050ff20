'use client';

import { useRouter } from 'next/navigation';
import { Button } from '@/components/ui/button';
import { hrefWithEntity } from '@/lib/client/navigation/entity';
import { useResubmitJob } from '@/lib/client/queries/mutations';

/**
 * Runs a failed or cancelled job again as a new job with the same data and settings, then opens it (issue 43: a
 * job whose worker died had no way back but building the same job again by hand).
 */
export function ResubmitJobButton({
  jobId,
  entity,
  defaultEntity,
}: {
  jobId: string;
  entity: string;
  defaultEntity: string;
}) {
  const router = useRouter();
  const resubmit = useResubmitJob(jobId);
  return (
    <div className="flex flex-col items-end gap-1">
      <Button
        variant="secondary"
        pending={resubmit.isPending}
        data-testid="resubmit-job"
        title="Queue a new job with the same data and settings"
        onClick={() =>
          resubmit.mutate(undefined, {
            onSuccess: (created) => router.push(hrefWithEntity(`/jobs/${created.id}`, entity, defaultEntity)),
          })
        }
      >
        Resubmit
      </Button>
      {resubmit.error ? (
        <p role="alert" className="max-w-80 text-right text-xs text-danger-text" data-testid="resubmit-error">
          {resubmit.error.message}
        </p>
      ) : null}
    </div>
  );
}
