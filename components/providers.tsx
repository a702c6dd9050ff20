'use client';

import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { NuqsAdapter } from 'nuqs/adapters/next/app';
import type { ReactNode } from 'react';
import { isApiClientError } from '@/lib/client/api/api-fetch';
import { signInPath } from '@/lib/client/navigation/redirect-target';

// An expired or revoked session makes every call fail with 401: send the user to sign in once,
// coming back to the page they were on.
function onApiError(error: unknown) {
  if (isApiClientError(error) && error.status === 401 && typeof window !== 'undefined') {
    const { pathname, search } = window.location;
    if (pathname !== '/sign-in' && pathname !== '/sign-up') window.location.assign(signInPath(`${pathname}${search}`));
  }
}

function makeQueryClient(): QueryClient {
  return new QueryClient({
    queryCache: new QueryCache({ onError: onApiError }),
    mutationCache: new MutationCache({ onError: onApiError }),
    defaultOptions: {
      queries: {
        // Server-prefetched data is fresh when it arrives; refetching it at once would double every load.
        staleTime: 30_000,
        // A 4xx will not change on retry; only transient failures (network, 5xx) are worth repeating.
        retry: (failureCount, error) =>
          failureCount < 2 && !(isApiClientError(error) && error.status >= 400 && error.status < 500),
      },
    },
  });
}

let browserQueryClient: QueryClient | undefined;

function getQueryClient(): QueryClient {
  // A fresh client per server render keeps users' data apart; the browser keeps one for the session.
  if (typeof window === 'undefined') return makeQueryClient();
  browserQueryClient ??= makeQueryClient();
  return browserQueryClient;
}

export function Providers({ children }: { children: ReactNode }) {
  return (
    // Pages keep their shareable state in the URL through nuqs (useQueryState), on Next's router.
    <NuqsAdapter>
      <QueryClientProvider client={getQueryClient()}>{children}</QueryClientProvider>
    </NuqsAdapter>
  );
}
