import { Alert } from '@/components/ui/alert';

/**
 * A refused launch: which of its two calls failed (useLaunchSftJob's `step`) and the server's word, or a pointer to
 * the fields it marked. After the upload, the dataset is stored: submitting again adds a version.
 */
export function LaunchError({ step, message }: { step: 'upload' | 'job'; message: string | null }) {
  return (
    <Alert
      tone="danger"
      role="alert"
      title={step === 'upload' ? 'The server rejected the dataset' : 'The job could not be started'}
    >
      <span data-testid="sft-server-error">{message ?? 'See the fields marked above.'}</span>
      {step === 'job' ? (
        <span className="block">The dataset was uploaded; submitting again adds a new version.</span>
      ) : null}
    </Alert>
  );
}
