/** See pg-forks.mjs. */
export function pgForks(): number;
