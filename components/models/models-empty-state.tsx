import Link from 'next/link';
import { buttonClassName } from '@/components/ui/button';
import { Card } from '@/components/ui/card';
import { CodeBlock } from '@/components/ui/code-block';
import { EmptyState } from '@/components/ui/empty-state';
import { BoxIcon, KeyIcon, PlusIcon, SearchIcon } from '@/components/ui/icons';

interface ModelsEmptyStateProps {
  entity: string;
  origin: string;
  baseModel: string;
}

/** Entity names are handles ([a-z0-9._-]), so they are safe inside the single-quoted shell string. */
export function createModelCurl({ entity, origin, baseModel }: ModelsEmptyStateProps): string {
  const body = JSON.stringify({ entity, project: 'my-project', name: 'my-first-model', base_model: baseModel }, null, 2)
    .split('\n')
    .join('\n  ');
  return [
    '# Your key, from Settings → API keys',
    'export TUNEBOARD_API_KEY="tb_…"',
    '',
    `curl -X POST ${origin}/v1/preview/models \\`,
    `  -H "Authorization: Bearer $TUNEBOARD_API_KEY" \\`,
    `  -H "Content-Type: application/json" \\`,
    `  -d '${body}'`,
  ].join('\n');
}

/**
 * A first visit: create a model here (the same dialog as "New model"), or from a script or training
 * client with the request shown.
 */
export function ModelsEmptyState({ onCreate, ...props }: ModelsEmptyStateProps & { onCreate: () => void }) {
  return (
    <Card data-testid="models-empty">
      <EmptyState
        icon={<BoxIcon className="size-5" />}
        title={`No models in ${props.entity} yet`}
        description="Create your first model here, then fine-tune it with a dataset. Training clients and scripts can create models through the API too."
      >
        <div className="mx-auto max-w-2xl text-left">
          <div className="mb-6 flex justify-center">
            <button type="button" onClick={onCreate} className={buttonClassName()} data-testid="models-empty-create">
              <PlusIcon className="size-4" />
              Create a model
            </button>
          </div>
          <CodeBlock label="Or from a terminal" code={createModelCurl(props)} />
          <div className="mt-6 flex flex-wrap justify-center gap-2">
            <Link href="/settings/api-keys" className={buttonClassName({ variant: 'secondary' })}>
              <KeyIcon className="size-4" />
              Create an API key
            </Link>
            <Link href="/docs" className={buttonClassName({ variant: 'secondary' })}>
              Read the API docs
            </Link>
          </div>
        </div>
      </EmptyState>
    </Card>
  );
}

export function NoSearchResults({
  search,
  onClear,
  filtered = false,
}: {
  search: string;
  onClear: () => void;
  filtered?: boolean;
}) {
  return (
    <EmptyState
      icon={<SearchIcon className="size-5" />}
      title={search ? `No models match “${search}”` : 'No models match these filters'}
      description={
        search
          ? "Search looks for the text anywhere in a model's name, ignoring case."
          : 'No model in this entity has that project and base model.'
      }
    >
      <button type="button" onClick={onClear} className={buttonClassName({ variant: 'secondary' })}>
        {filtered ? 'Clear search and filters' : 'Clear search'}
      </button>
    </EmptyState>
  );
}
