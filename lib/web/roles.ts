import { ANY_SESSION, ROUTE_SCOPES } from '../auth/scopes';

/**
 * What a session may open, from the ONE scope table (lib/auth/scopes.ts
 * ROUTE_SCOPES): the sections in the navigation, where a person lands after
 * sign-in, and whether a token can use the UI at all. A scan-only operator
 * lands on /scan, a sync-only one on /sync (decision 331).
 */

export type Section = 'downloads' | 'scan' | 'sync' | 'failures';

/** The sections in navigation order, each with the route whose scope opens it. */
export const SECTIONS: ReadonlyArray<{ section: Section; href: string; route: string }> = [
  { section: 'downloads', href: '/', route: 'GET /' },
  { section: 'scan', href: '/scan', route: 'GET /scan' },
  { section: 'sync', href: '/sync', route: 'GET /sync' },
  { section: 'failures', href: '/failures', route: 'GET /failures' },
];

export function sectionsFor(scopes: readonly string[]): typeof SECTIONS {
  return SECTIONS.filter((s) => scopes.includes(ROUTE_SCOPES[s.route]));
}

/** The first section the scopes open; undefined when none (such a token cannot sign in). */
export function homeOf(scopes: readonly string[]): string | undefined {
  return sectionsFor(scopes)[0]?.href;
}

/** Whether the scopes may open a route (the authorizer's own table). */
export function mayOpen(scopes: readonly string[], routeKey: string): boolean {
  const scope = ROUTE_SCOPES[routeKey];
  return scope === ANY_SESSION || (scope !== undefined && scopes.includes(scope));
}

/** The scope a route needs, as a 403 page names it. */
export function scopeOf(routeKey: string): string {
  return ROUTE_SCOPES[routeKey] ?? '?';
}
