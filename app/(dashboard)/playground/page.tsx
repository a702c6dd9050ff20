import type { Metadata } from 'next';
import Link from 'next/link';
import { requirePrincipal } from '@/app/_lib/session';
import { buttonClassName } from '@/components/ui/button';
import { Card } from '@/components/ui/card';
import { EmptyState } from '@/components/ui/empty-state';
import { ChatIcon } from '@/components/ui/icons';
import { PageHeader } from '@/components/ui/page-header';

export const metadata: Metadata = { title: 'Playground' };

// A placeholder so the navigation never leads to a 404; the chat playground replaces it.
export default async function PlaygroundPage() {
  await requirePrincipal();
  return (
    <>
      <PageHeader title="Playground" description="Chat with a base model or any checkpoint of your models." />
      <Card>
        <EmptyState
          icon={<ChatIcon className="size-5" />}
          title="The playground is on its way"
          description="Until then, every model is reachable through the OpenAI-compatible chat endpoint with an API key."
        >
          <Link href="/docs" className={buttonClassName({ variant: 'secondary' })}>
            See the API docs
          </Link>
        </EmptyState>
      </Card>
    </>
  );
}
