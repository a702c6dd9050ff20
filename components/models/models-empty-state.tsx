import Link from 'next/link';
import { buttonClassName } from '@/components/ui/button';
import { Card } from '@/components/ui/card';
import { CodeBlock } from '@/components/ui/code-block';
import { EmptyState } from '@/components/ui/empty-state';
import { BoxIcon, KeyIcon, SearchIcon } from '@/components/ui/icons';

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

export function ModelsEmptyState(props: ModelsEmptyStateProps) {
  return (
    <Card data-testid="models-empty">
      <EmptyState
        icon={<BoxIcon className="size-5" />}
        title={`No models in ${props.entity} yet`}
        description="Models are created through the API: by your training client, or with one request like this one."
      >
        <div className="mx-auto max-w-2xl text-left">
          <CodeBlock label="Terminal" code={createModelCurl(props)} />
          <div className="mt-6 flex flex-wrap justify-center gap-2">
            <Link href="/settings/api-keys" className={buttonClassName()}>
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

export function NoSearchResults({ search, onClear, filtered = false }: { search: string; onClear: () => void; filtered?: boolean }) {
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
