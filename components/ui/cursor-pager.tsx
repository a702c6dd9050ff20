'use client';

import type { Dispatch, SetStateAction } from 'react';
import { pageNumber, popCursor, pushCursor, type CursorStack } from '@/lib/client/navigation/cursor-stack';
import { Button } from './button';
import { CardFooter } from './card';

/**
 * Previous / next for a cursor-paged list (the API pages forward only, so "previous" pops a stack of
 * cursors). Hidden when there is only one page. `testId` prefixes the `-page`, `-prev` and `-next` ids.
 */
export function CursorPager({
  cursors,
  setCursors,
  nextCursor,
  testId,
}: {
  cursors: CursorStack;
  setCursors: Dispatch<SetStateAction<CursorStack>>;
  /** The current page's last id when more items follow, else null. */
  nextCursor: string | null;
  testId: string;
}) {
  if (cursors.length <= 1 && nextCursor === null) return null;
  return (
    <CardFooter className="justify-between">
      <span className="text-xs text-fg-subtle" data-testid={`${testId}-page`}>
        Page {pageNumber(cursors)}
      </span>
      <div className="flex gap-2">
        <Button
          variant="secondary"
          size="sm"
          disabled={cursors.length <= 1}
          onClick={() => setCursors(popCursor)}
          data-testid={`${testId}-prev`}
        >
          Previous
        </Button>
        <Button
          variant="secondary"
          size="sm"
          disabled={nextCursor === null}
          onClick={() => nextCursor !== null && setCursors((s) => pushCursor(s, nextCursor))}
          data-testid={`${testId}-next`}
        >
          Next
        </Button>
      </div>
    </CardFooter>
  );
}
