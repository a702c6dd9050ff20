'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { Button } from '@/components/ui/button';
import { LogOutIcon } from '@/components/ui/icons';
import { apiFetch } from '@/lib/client/api/api-fetch';
import { signOutResultSchema } from '@/lib/schemas/accounts';

export function SignOutButton() {
  const router = useRouter();
  const queryClient = useQueryClient();
  // Not in lib/client/queries/mutations.ts with the other writes: the shell is on every page, and that module, with every
  // write's schemas, would add about 3 kB to the first load of pages that write nothing (bench:ui, /docs).
  const signOut = useMutation({
    mutationFn: () => apiFetch('/v1/auth/sign-out', signOutResultSchema, { method: 'POST' }),
    // Leave even if the call failed: the user asked to go, and the cookie may already be gone.
    onSettled: () => {
      queryClient.clear();
      router.replace('/sign-in');
      router.refresh();
    },
  });

  return (
    <Button
      variant="ghost"
      size="sm"
      onClick={() => signOut.mutate()}
      pending={signOut.isPending}
      className="w-full justify-start px-2"
      data-testid="sign-out"
    >
      {signOut.isPending ? null : <LogOutIcon className="size-4" />}
      Sign out
    </Button>
  );
}
