import type { Fields, Logger } from './index';

/**
 * Sensitive writes log who made them: one stable event name per write, the
 * same whatever surface it came through, with `principal` (who), `via` (which
 * surface) and `audit: true` (every such line, found with one filter:
 * `{ $.audit IS TRUE }` in CloudWatch Logs Insights). The principal is the
 * API token's grant name for the API (the authorizer's `principal`) and the
 * web UI and console (the session's), and `telegram:<user id>` for the bot.
 * docs/operations.md lists the events; never a secret in the fields.
 */
export const AUDIT_EVENTS = {
  /** POST /sync/connections: a connection created or its token replaced. */
  connectionSaved: 'sync_connection_saved',
  /** DELETE /sync/connections/{user}. */
  connectionRemoved: 'sync_connection_removed',
  /** A download cancelled: the API's state change, the UI's button, the bot's button. */
  downloadCancelled: 'download_cancelled',
  /** The console's retry of a failed Telegram delivery, whatever its outcome. */
  failureRetried: 'failure_retry',
} as const;

export type AuditEvent = (typeof AUDIT_EVENTS)[keyof typeof AUDIT_EVENTS];
export type AuditVia = 'api' | 'web' | 'console' | 'telegram';

/** A principal nobody resolved (a route that lost its authorizer context) is logged as such, never dropped. */
export const UNKNOWN_PRINCIPAL = 'unknown';

export function audit(
  log: Logger,
  event: AuditEvent,
  who: { principal?: string; via: AuditVia },
  fields: Fields = {},
): void {
  log.info(event, { ...fields, principal: who.principal || UNKNOWN_PRINCIPAL, via: who.via, audit: true });
}

export const telegramPrincipal = (userId: number | undefined): string =>
  userId === undefined ? `telegram:${UNKNOWN_PRINCIPAL}` : `telegram:${userId}`;
