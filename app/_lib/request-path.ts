/**
 * Layouts are not told which URL they render, yet the dashboard layout must send a signed-out visitor
 * to `/sign-in?next=<that URL>`. proxy.ts copies the requested path and query into this request
 * header; a value a client sends itself is overwritten there, and `next` is sanitised anyway.
 */
export const REQUEST_PATH_HEADER = 'x-tuneboard-path';
