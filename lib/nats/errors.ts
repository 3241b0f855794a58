/** The typed failures of this module; callers branch on the class. */

/**
 * Core NATS publish is fire-and-forget: a flush (PING/PONG) after it proves
 * the server has the message. Up to `retries` more tries after the first.
 *
 * Two ways a publish is lost without the flush failing are caught here:
 * - the server refuses it (a publish permission violation: `-ERR` on the
 *   connection, which stays up and answers the PONG), seen through the
 *   connection's status events, which the server sends before the PONG;
 * - the connection is stale (no TCP reset): the flush would wait for the
 *   client's ping timer (minutes), so each try is bounded by `flushTimeoutMs`.
 * While the client reconnects, a flush is rejected at the next dial attempt
 * (the client drops what it buffered), so a try fails within about
 * `reconnectTimeWait`.
 */
export class PublishRefusedError extends Error {
  constructor(subject: string) {
    super(`the NATS server refused a publish to ${subject} (permissions violation)`);
    this.name = 'PublishRefusedError';
  }
}

/** Every try of a publish failed: how many were made, and the last try's error as `cause`. */
export class PublishFailedError extends Error {
  constructor(
    readonly subject: string,
    readonly tries: number,
    cause: unknown,
  ) {
    super(
      `publish to ${subject} failed after ${tries} ${tries === 1 ? 'try' : 'tries'}: ${(cause as Error)?.message ?? cause}`,
      {
        cause,
      },
    );
    this.name = 'PublishFailedError';
  }
}

export class InvalidNatsEventError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidNatsEventError';
  }
}
