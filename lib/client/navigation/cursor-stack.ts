/**
 * Previous/next paging over a cursor API that only pages forward (`after=<last id>`): the cursors of the
 * pages visited so far form a stack. The first page has no cursor; "previous" pops back to the cursor
 * that fetched the previous page. Kept immutable so it can live in React state.
 */
export type CursorStack = readonly (string | undefined)[];

export const FIRST_PAGE: CursorStack = [undefined];

export function currentCursor(stack: CursorStack): string | undefined {
  return stack[stack.length - 1];
}

export function pushCursor(stack: CursorStack, lastIdOfPage: string): CursorStack {
  return lastIdOfPage ? [...stack, lastIdOfPage] : stack;
}

export function popCursor(stack: CursorStack): CursorStack {
  return stack.length > 1 ? stack.slice(0, -1) : stack;
}

/** 1-based page number, for "Page 3". */
export function pageNumber(stack: CursorStack): number {
  return stack.length;
}
