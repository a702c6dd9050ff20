import { RelativeTime } from '@/components/ui/relative-time';
import { Table, Td, Th, Tr } from '@/components/ui/table';
import type { JobOutcome } from '@/lib/client/rl-guardrails';
import type { TrainingJobDto } from '@/lib/schemas/training-jobs';
import { JobProgress } from './job-progress';
import { JobLink } from './job-link';
import { JobStatusBadge } from './job-status-badge';

export function ModelJobsTable({
  jobs,
  hrefFor,
  outcomeFor,
}: {
  jobs: TrainingJobDto[];
  hrefFor: (job: TrainingJobDto) => string;
  /** What a finished job did to the weights (jobOutcome); a "No update" job says why under its badge. */
  outcomeFor?: (job: TrainingJobDto) => JobOutcome;
}) {
  return (
    <Table stacked data-testid="model-jobs-table">
      <caption className="sr-only">Training jobs</caption>
      <thead>
        <tr>
          <Th>Job</Th>
          <Th>Status</Th>
          <Th>Progress</Th>
          <Th className="text-right">Steps</Th>
          <Th className="text-right">Created</Th>
        </tr>
      </thead>
      <tbody>
        {jobs.map((job) => {
          const outcome = outcomeFor?.(job);
          return (
            <Tr key={job.id} data-testid="model-job-row" className="transition-colors hover:bg-surface-muted/50">
              <Td label="Job">
                <JobLink job={job} href={hrefFor(job)} />
              </Td>
              <Td label="Status">
                <JobStatusBadge status={job.status} outcome={outcome} cancelled={job.cancelled} />
                {outcome?.kind === 'no-update' ? (
                  <div className="mt-1 max-w-56 text-xs text-fg-muted" data-testid="job-no-update">
                    {outcome.label.replace(/^No update: /, '')}
                  </div>
                ) : null}
              </Td>
              <Td label="Progress">
                <JobProgress job={job} outcome={outcome} compact />
              </Td>
              <Td label="Steps" className="text-right whitespace-nowrap text-fg-muted tabular-nums">
                {job.base_step ?? '—'} → {job.step ?? '…'}
              </Td>
              <Td label="Created" className="text-right whitespace-nowrap text-fg-muted">
                <RelativeTime iso={job.created_at} />
              </Td>
            </Tr>
          );
        })}
      </tbody>
    </Table>
  );
}
