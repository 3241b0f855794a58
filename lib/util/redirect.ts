/**
 * Our HTTP clients of other systems (the torrent client, T-Bank) never follow
 * a redirect (`redirect: 'manual'`): a 307 or 308 would send the request again
 * with its body and headers — the login form with the password, the bearer
 * token — to wherever the answer points, another origin included. A redirect
 * is an error naming where it pointed, so the setting can be corrected.
 */

export const isRedirect = (status: number) => status >= 300 && status < 400;

/** Where a redirect points, as much as a log may say: its origin (never its path or query), and whether it is ours. */
export function redirectTarget(res: Pick<Response, 'headers'>, base: string | URL): string {
  const location = res.headers.get('location');
  if (!location) return 'nowhere (no Location)';
  try {
    const target = new URL(location, base);
    return `${target.origin} (${target.origin === new URL(base).origin ? 'the same origin' : 'another origin'})`;
  } catch {
    return 'an unreadable Location';
  }
}
