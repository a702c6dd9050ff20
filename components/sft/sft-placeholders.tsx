import Link from 'next/link';
import { buttonClassName } from '@/components/ui/button';
import { Card } from '@/components/ui/card';
import { CodeBlock } from '@/components/ui/code-block';
import { EmptyState } from '@/components/ui/empty-state';
import { BoxIcon } from '@/components/ui/icons';
import { PageHeader } from '@/components/ui/page-header';
import { Skeleton } from '@/components/ui/skeleton';

/** What the SFT page shows in place of its form: while the models load, and when there is none to train. */

function SftHeader() {
  return <PageHeader title="Fine-tune a model" description="Supervised fine-tuning on a chat dataset." />;
}

export function SftFormLoading() {
  return (
    <>
      <SftHeader />
      <Card>
        <div className="flex flex-col gap-4 p-5" aria-busy="true" aria-label="Loading models">
          <Skeleton className="h-9 w-full" />
          <Skeleton className="h-32 w-full" />
        </div>
      </Card>
    </>
  );
}

/** `modelsHref`: the Models page, with the selected entity. `origin`: this server, for the curl line. */
export function NoModelsYet({ modelsHref, origin }: { modelsHref: string; origin: string }) {
  return (
    <>
      <SftHeader />
      <Card>
        <EmptyState
          icon={<BoxIcon className="size-5" />}
          title="Create a model first"
          description="A fine-tuning job trains a model record: a name and a base model. Create one on the Models page (or with the API), then come back."
        >
          <div className="mx-auto max-w-2xl text-left">
            <div className="mb-6 flex justify-center">
              <Link href={modelsHref} className={buttonClassName()} data-testid="sft-create-model">
                Go to Models
              </Link>
            </div>
            <CodeBlock
              label="Or from a terminal"
              code={`curl ${origin}/v1/preview/models \\\n  -H "Authorization: Bearer $TUNEBOARD_API_KEY" \\\n  -H 'Content-Type: application/json' \\\n  -d '{"project": "my-project", "name": "my-model", "base_model": "tuneboard/tiny-chat"}'`}
            />
          </div>
        </EmptyState>
      </Card>
    </>
  );
}
