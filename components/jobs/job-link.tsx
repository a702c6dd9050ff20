import Link from 'next/link';
import type { TrainingJobDto } from '@/lib/schemas/training-jobs';
import { jobKindLabel } from './job-status-badge';

/** A job as the job tables name it: its kind, linking to its page, over the start of its id. */
export function JobLink({ job, href }: { job: Pick<TrainingJobDto, 'id' | 'type'>; href: string }) {
  return (
    <>
      <Link href={href} className="font-medium text-fg hover:text-accent-text hover:underline">
        {jobKindLabel(job.type)} job
      </Link>
      <div className="mt-0.5 font-mono text-xs text-fg-subtle">{job.id.slice(0, 8)}</div>
    </>
  );
}
