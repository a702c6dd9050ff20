import { NextResponse, type NextRequest } from 'next/server';
import { REQUEST_PATH_HEADER } from '@/app/_lib/request-path';

/** Hands the requested page URL to server layouts (see app/_lib/request-path.ts). No auth decisions here. */
export function proxy(request: NextRequest) {
  const headers = new Headers(request.headers);
  headers.set(REQUEST_PATH_HEADER, `${request.nextUrl.pathname}${request.nextUrl.search}`);
  return NextResponse.next({ request: { headers } });
}

export const config = {
  // Pages only: the /v1 API, build assets and files are served untouched.
  matcher: ['/((?!v1(?:/|$)|_next/|favicon\\.ico|.*\\.(?:png|svg|jpg|jpeg|gif|webp|ico|txt|xml|json)$).*)'],
};
