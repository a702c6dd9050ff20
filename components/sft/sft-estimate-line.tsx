import { formatDuration } from '@/lib/client/format/format-time';
import { sftEstimate } from '@/lib/client/sft/sft-estimate';
import type { SftEstimateInputs } from '@/lib/client/sft/state';
import type { SftTimingDto } from '@/lib/schemas/sft-timing';

/**
 * What the SFT job will cost: the steps exactly as the trainer batches them, and the time only when this server has
 * measured a job on the base model (issue 41): the base model's past SFT jobs on the worker that trained the latest.
 */
export function SftEstimateLine({
  plan,
  timing,
}: {
  plan: NonNullable<SftEstimateInputs['plan']>;
  timing: SftTimingDto | undefined;
}) {
  const { examples, heldOut, epochs, batch, steps } = plan;
  const estimate = sftEstimate(timing, steps);
  return (
    <p className="text-sm text-fg-muted" data-testid="sft-estimate" aria-live="polite">
      {examples} example{examples === 1 ? '' : 's'}
      {heldOut > 0 ? ` (${heldOut} held out)` : ''} × {epochs} epoch{epochs === 1 ? '' : 's'} ÷ batch {batch} = {steps}{' '}
      step{steps === 1 ? '' : 's'}
      {estimate !== null
        ? `, about ${formatDuration(estimate.seconds * 1000)} as ${estimate.jobs} earlier job${estimate.jobs === 1 ? '' : 's'} on this base model ran${estimate.workerId ? ` on ${estimate.workerId}` : ''}`
        : ' (no job on this base model has been timed yet: time depends on the worker that trains it)'}
      .
    </p>
  );
}
