/** See db-only.mjs. */
export const DB_ONLY_EXCLUDED_FOLDERS: string[];
export const NO_DATABASE_FILES: string[];
export const SAME_STATEMENTS_FILES: string[];
export const THREAD_TIMING_FILES: string[];
export function dbOnlyExcluded(): string[];
