/** Typed failures of the telegram module: a call to the Bot API (the notifier branches on `retryable`), a record or update we cannot read, a lost claim, a stale button. */

export class TelegramApiError extends Error {
  readonly code = 'TELEGRAM_API_ERROR';
  constructor(
    readonly method: string,
    readonly errorCode: number,
    readonly description: string,
    /** 429's `parameters.retry_after`, in seconds. */
    readonly retryAfterS?: number,
    /** 400's `parameters.migrate_to_chat_id`: the group became a supergroup with this id. */
    readonly migrateToChatId?: number,
  ) {
    super(`telegram ${method}: ${errorCode} ${description}`);
    this.name = 'TelegramApiError';
  }

  /** 429 and 5xx: Telegram did not take the message, try again; any other 4xx will never succeed. */
  get retryable(): boolean {
    return this.errorCode === 429 || this.errorCode >= 500;
  }
}

/** Telegram's 400 for an edit that changes nothing: the message already shows it (success for us). */
export const isNotModified = (err: unknown): boolean =>
  err instanceof TelegramApiError && err.errorCode === 400 && /message is not modified/i.test(err.description);

/** No answer (timeout, connection refused): the request may or may not have reached Telegram. */
export class TelegramNetworkError extends Error {
  readonly code = 'TELEGRAM_NETWORK_ERROR';
  readonly retryable = true;
  constructor(
    readonly method: string,
    cause: string,
    /**
     * The request may have reached Telegram and been applied, its answer lost (a timeout, a connection reset
     * after it was written); false only when no connection was made (refused, no route, no such host).
     */
    readonly maybeApplied = true,
  ) {
    super(`telegram ${method}: no answer (${cause})`);
    this.name = 'TelegramNetworkError';
  }
}

export type TelegramSendError = TelegramApiError | TelegramNetworkError;

export class StaleButtonError extends Error {
  readonly code = 'BUTTON_EXPIRED';
  constructor(reason: string) {
    super(`button expired: ${reason}`);
    this.name = 'StaleButtonError';
  }
}

export class ClaimLostError extends Error {
  readonly code = 'CLAIM_LOST';
  /** A DeliveryRef's two key parts (store.ts imports this module through model.ts: named structurally, no cycle). */
  constructor(ref: { eventId: string; chatId: number }) {
    super(`delivery ${ref.eventId}/${ref.chatId}: claim taken over`);
    this.name = 'ClaimLostError';
  }
}

export class MalformedStreamRecordError extends Error {
  readonly code = 'MALFORMED_STREAM_RECORD';
  constructor(reason: string) {
    super(`stream record refused: ${reason}`);
    this.name = 'MalformedStreamRecordError';
  }
}

export class MalformedUpdateError extends Error {
  readonly code = 'MALFORMED_UPDATE';
  constructor(reason: string) {
    super(`not a Telegram Update: ${reason}`);
    this.name = 'MalformedUpdateError';
  }
}

/** Another delivery of this Update holds its handling lease: the webhook answers 503 and Telegram delivers it again. */
export class UpdateInProgressError extends Error {
  readonly code = 'TELEGRAM_UPDATE_IN_PROGRESS';
  constructor(readonly updateId: number) {
    super(`update ${updateId} is being handled by another delivery`);
    this.name = 'UpdateInProgressError';
  }
}

/**
 * The update ledger did not answer the claim (it may still have been written): nothing was handled; the
 * webhook answers 503 and Telegram delivers it again.
 */
export class UpdateNotClaimedError extends Error {
  readonly code = 'TELEGRAM_UPDATE_NOT_CLAIMED';
  constructor(
    readonly updateId: number,
    cause: unknown,
  ) {
    super(`update ${updateId}: the update ledger did not answer its claim`, { cause });
    this.name = 'UpdateNotClaimedError';
  }
}

/** A document larger than the bot takes (the Bot API's 20 MB download bound, or the .torrent bound), by its declared size or by the bytes read. */
export class TelegramFileTooBigError extends Error {
  readonly code = 'TELEGRAM_FILE_TOO_BIG';
  constructor(readonly limit: number) {
    super(`the file is larger than ${limit} bytes`);
    this.name = 'TelegramFileTooBigError';
  }
}

/** getFile or the file download failed (refused, no answer, a path we do not follow); the message never names the link (it holds the token). */
export class TelegramFileError extends Error {
  readonly code = 'TELEGRAM_FILE_UNAVAILABLE';
  constructor(reason: string) {
    super(`the file could not be fetched: ${reason}`);
    this.name = 'TelegramFileError';
  }
}
