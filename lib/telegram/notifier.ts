import { randomUUID } from 'node:crypto';
import { setTimeout as sleepFor } from 'node:timers/promises';
import { Clock, systemClock } from '../clock';
import type { Logger } from '../log';
import { emitMetric } from '../metrics';
import type { TelegramSender } from './api';
import { isNotModified, MalformedStreamRecordError, TelegramApiError, TelegramNetworkError } from './errors';
import type { Lang } from '../i18n';
import { isActive } from '../downloads/model';
import {
  botLocale,
  keyboard,
  notificationText,
  statusText,
  type StatusTitle,
  USUAL_BUTTONS,
  WARNING_BUTTONS,
} from './format';
import { sequenceKey } from './keys';
import { chatLanguage } from './language';
import { classify, DownloadEvent, StatusChange, statusChange, StreamRecord } from './model';
import type { Pacer } from './pacer';
import { ChatLanguages, ChatMoves, DeliveryRef, DeliveryStore, resolveChat, StatusStore } from './store';

/**
 * The stream consumer's policy: each record of the downloads table's stream
 * that is an event becomes one message per configured chat, exactly once,
 * paced as Telegram allows, late rather than lost.
 *
 * - Exactly once: a conditional claim (lib/telegram/store.ts) before the
 *   send; `sent` (with the message id) after. A redelivered record finds the
 *   claim and sends nothing. A crash between the send and the record leaves a
 *   `sending` claim; once its lease is over it becomes `uncertain` and is
 *   NOT resent (Telegram has no idempotency key: at most once in that window).
 *   A send whose answer is lost after the request went out (a timeout, a
 *   reset) is `uncertain` at once, for the same reason; only a connection
 *   never made is retried (decision 366).
 * - Paced and ordered: one worker per chat sends that chat's messages one
 *   after another in stream order, each at the slot the Pacer gives it (per
 *   chat, per group, per bot). A 429 pauses that chat for its `retry_after`
 *   and the same message is sent again: other chats go on, order is kept.
 * - Late, not lost: what does not fit before `deadline` (the invocation's
 *   time) is given back unsent, a delivery still held by a dead worker of an
 *   earlier invocation is come back to, and the summary names the first
 *   record not fully delivered (`resumeFrom`); the handler reports it as the batch item
 *   failure, so the stream hands that record and the ones after it to the next
 *   invocation, in order. Those already sent are duplicates there.
 * - A group that became a supergroup (400 `migrate_to_chat_id`): the move is
 *   recorded in the store, logged, and the message goes to the new id; later
 *   batches send there directly.
 * - An outage is waited out, never a reason to drop: 5xx and no connection are
 *   retried for `boundMs` from the first failure (the wait doubles from
 *   `backoffMs` for `attempts` retries, then stays); a 429 waits its
 *   `retry_after`. When the bound is over the claim is given back and the
 *   record is deferred like one the pace left unsent: the stream hands it to
 *   the next invocation (its own bound), until the stream's retries end in
 *   the onFailure destination (decision 355). Only a refusal (a 4xx other
 *   than 429) is `failed`, with an item in the failure store and an error
 *   log; a record we cannot read is logged and stored the same way. Nothing
 *   here throws: one record never stops a batch.
 * - Each chat in its language (its /lang choice, else UI_LANGUAGE, else
 *   English), the choices read once per batch; times in UI_TIME_ZONE.
 */

export interface NotifierDeps {
  deliveries: DeliveryStore;
  moves: ChatMoves;
  languages: Pick<ChatLanguages, 'languages'>;
  /** The deployment's fixed language (UI_LANGUAGE), if any, and the zone times are shown in. */
  locale: { language?: Lang; timeZone: string };
  sender: TelegramSender;
  /** The configured chats (a moved chat is followed through `moves`). */
  chats: number[];
  uiBase: string;
  log: Logger;
  policy: DeliveryPolicy;
  /** Per container: the pace survives between the invocations a warm container serves. */
  pacer: Pacer;
  now?: Clock;
  sleep?: (ms: number) => Promise<void>;
  /** The downloads' status messages (decision 456); absent: none are kept (a message per event only). */
  statuses?: StatusStore;
  /** Test seam: runs between a successful send and its record (where a crash is injected). */
  afterSend?: (ref: DeliveryRef, messageId: number) => Promise<void>;
}

export interface DeliveryPolicy {
  /** Retries whose wait doubles (from `backoffMs`); later ones wait as long as the last of them. */
  attempts: number;
  /** How long from a message's first 5xx or unanswered send it is retried in one invocation. */
  boundMs: number;
  /** How long a claim stays another worker's: longer than one send (its timeout) plus the record. */
  leaseMs: number;
  backoffMs: number;
}

export const DEFAULT_POLICY: DeliveryPolicy = {
  attempts: 6,
  boundMs: 45_000,
  leaseMs: 15_000,
  backoffMs: 250,
};

export type Outcome = 'sent' | 'duplicate' | 'failed' | 'error' | 'deferred';

/** What a status change did to its message (decision 456). */
export type StatusOutcome = 'opened' | 'edited' | 'unchanged' | 'skipped' | 'deferred' | 'failed';

export interface BatchSummary {
  records: number;
  events: number;
  outcomes: Record<Outcome, number>;
  /** The status messages' work: each chat's last change of each download in the batch. */
  statuses: Record<StatusOutcome, number>;
  /** The SequenceNumber of the first record with a delivery left for the next invocation. */
  resumeFrom?: string;
}

export interface BatchOptions {
  /** No send starts after this instant (epoch ms); the rest is deferred. Default: no limit. */
  deadline?: number;
}

type Job = { index: number; event: DownloadEvent; status?: undefined } | { index: number; status: StatusChange };

interface Run {
  deadline: number;
  /** Old chat id → new, loaded once per batch and extended by the moves this batch finds. */
  moves: Map<number, number>;
  /** Each chat's own language, loaded once per batch. */
  languages: Map<number, Lang>;
}

export async function notifyRecords(
  deps: NotifierDeps,
  records: StreamRecord[],
  opts: BatchOptions = {},
): Promise<BatchSummary> {
  const summary: BatchSummary = {
    records: records.length,
    events: 0,
    outcomes: { sent: 0, duplicate: 0, failed: 0, error: 0, deferred: 0 },
    statuses: { opened: 0, edited: 0, unchanged: 0, skipped: 0, deferred: 0, failed: 0 },
  };
  const queues = new Map<number, Job[]>(deps.chats.map((chat) => [chat, []]));
  // Each change shows the whole download: of a batch's changes of one download, only the last is shown.
  const lastChange = new Map<string, number>();
  const changes = new Map<number, StatusChange>();
  if (deps.statuses && deps.sender.editMessageText)
    for (const [index, record] of records.entries()) {
      const change = statusChange(record);
      if (!change) continue;
      changes.set(index, change);
      lastChange.set(change.download.id, index);
    }
  for (const [index, record] of records.entries()) {
    const change = changes.get(index);
    if (change && lastChange.get(change.download.id) === index)
      for (const jobs of queues.values()) jobs.push({ index, status: change });
    let event: DownloadEvent | undefined;
    try {
      event = classify(record);
    } catch (err) {
      await poisonRecord(deps, record, err);
      summary.outcomes.error += 1;
      continue;
    }
    if (!event) continue;
    summary.events += 1;
    for (const jobs of queues.values()) jobs.push({ index, event });
  }
  const run: Run = {
    deadline: opts.deadline ?? Number.POSITIVE_INFINITY,
    moves: await loadMoves(deps),
    languages: await loadLanguages(deps),
  };
  let firstDeferred = Number.POSITIVE_INFINITY;
  await Promise.all(
    [...queues].map(async ([chatId, jobs]) => {
      for (let i = 0; i < jobs.length; i += 1) {
        const job = jobs[i];
        let deferred: boolean;
        if (job.status) {
          const outcome = await updateStatus(deps, run, job.status, chatId);
          summary.statuses[outcome] += 1;
          deferred = outcome === 'deferred';
        } else {
          const outcome = await deliver(deps, run, job.event, chatId);
          summary.outcomes[outcome] += 1;
          deferred = outcome === 'deferred';
        }
        if (deferred) {
          // Everything after it in this chat waits too: order per chat is the promise.
          for (const rest of jobs.slice(i + 1)) {
            if (rest.status) summary.statuses.deferred += 1;
            else summary.outcomes.deferred += 1;
          }
          firstDeferred = Math.min(firstDeferred, job.index);
          return;
        }
      }
    }),
  );
  if (Number.isFinite(firstDeferred)) summary.resumeFrom = records[firstDeferred].dynamodb?.SequenceNumber;
  return summary;
}

async function loadMoves(deps: NotifierDeps): Promise<Map<number, number>> {
  try {
    return await deps.moves.moves();
  } catch (err) {
    // Without the moves a moved chat answers 400 migrate_to_chat_id again, and that is followed.
    deps.log.error('telegram_moves_unreadable', { err });
    return new Map();
  }
}

async function loadLanguages(deps: NotifierDeps): Promise<Map<number, Lang>> {
  try {
    return await deps.languages.languages();
  } catch (err) {
    // A notification in the default language beats none: the choices are read again by the next batch.
    deps.log.error('telegram_languages_unreadable', { err });
    return new Map();
  }
}

async function deliver(deps: NotifierDeps, run: Run, event: DownloadEvent, chatId: number): Promise<Outcome> {
  const now = deps.now ?? systemClock;
  const sleep = deps.sleep ?? ((ms: number) => sleepFor(ms));
  const ref: DeliveryRef = { eventId: event.eventId, chatId, downloadId: event.download.id, kind: event.kind };
  const log = deps.log.child({ download_id: ref.downloadId, event_id: ref.eventId, chat_id: chatId, kind: ref.kind });
  const { policy, pacer } = deps;
  const owner = randomUUID();
  try {
    const began = now();
    // The lease covers the wait for this chat's slot: nobody takes over a delivery that is only queued.
    const claim = await deps.deliveries.claim(
      ref,
      owner,
      began,
      Math.max(began, pacer.peek(resolveChat(run.moves, chatId), began)) + policy.leaseMs,
    );
    if (!claim.claimed) {
      if (claim.settledNow) {
        log.error('notification_uncertain', {
          reason: 'the sender crashed between sending and recording; not resent (at most once)',
        });
        sendFailed('uncertain', ref);
        return 'failed';
      }
      if (claim.status === 'sending' || claim.status === 'retrying') {
        // Held by a worker of an earlier delivery of this record that timed out or died: not done. Come back
        // once its lease is over (then it is taken over, or recorded uncertain), not skip it for good.
        log.warn('notification_held', { status: claim.status });
        const rest = Math.min(now() + policy.leaseMs, run.deadline) - now();
        if (rest > 0 && Number.isFinite(rest)) await sleep(rest);
        return 'deferred';
      }
      log.info('notification_skipped', { status: claim.status });
      return 'duplicate';
    }
    const locale = chatLocale(deps, run, chatId);
    const shown = event.createdAt === undefined ? event.download : { ...event.download, changedAt: event.createdAt };
    const opensStatus = event.kind === 'created' || event.kind === 'adopted';
    // A new download's message is its status message (decision 456): the same text its later edits show.
    const text = opensStatus
      ? statusText(event.kind as StatusTitle, shown, deps.uiBase, locale)
      : notificationText(event.kind, shown, deps.uiBase, locale);
    const buttons = event.kind === 'warned' ? WARNING_BUTTONS : USUAL_BUTTONS;
    let failures = 0;
    let firstFailure = 0;
    for (;;) {
      const target = resolveChat(run.moves, chatId);
      if (pacer.peek(target, now()) > run.deadline) {
        await deps.deliveries.release(ref, owner);
        log.info('notification_deferred', {
          target_chat_id: target,
          paused_until: pacer.pausedTill(target) || undefined,
        });
        // The rest of this invocation's time is this chat's wait anyway; returning at once would only
        // make the stream hand the same records back sooner, to wait again.
        const rest = Math.min(pacer.peek(target, now()), run.deadline) - now();
        if (rest > 0 && Number.isFinite(rest)) await sleep(rest);
        return 'deferred';
      }
      const at = pacer.reserve(target, now());
      if (at > now()) await sleep(at - now());
      await deps.deliveries.markSending(ref, owner, now() + policy.leaseMs);
      let messageId: number;
      try {
        messageId = await deps.sender.sendMessage(target, text, keyboard(event.download.id, locale.messages, buttons));
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        if (err instanceof TelegramApiError && err.migrateToChatId !== undefined) {
          await deps.moves.recordMove(target, err.migrateToChatId, now());
          run.moves.set(target, err.migrateToChatId);
          log.warn('telegram_chat_migrated', { from_chat_id: target, to_chat_id: err.migrateToChatId });
          await deps.deliveries.markRetrying(ref, owner, failures, reason, now() + policy.leaseMs);
          continue;
        }
        if (err instanceof TelegramApiError && err.errorCode === 429) {
          // Telegram says when: that chat waits, the message is not given up (and the others go on).
          const until = now() + Math.max(1, err.retryAfterS ?? 1) * 1000;
          pacer.pause(target, until);
          await deps.deliveries.markRetrying(ref, owner, failures, reason, until + policy.leaseMs);
          log.warn('notification_rate_limited', { target_chat_id: target, retry_after_s: err.retryAfterS });
          continue;
        }
        if (err instanceof TelegramNetworkError && err.maybeApplied) {
          // The message may be in the chat already (its answer lost): at most once, as for a crash mid-send. A
          // second send here was a restart's repeated notification (decision 366); the console can resend it.
          await deps.deliveries.markUncertain(ref, owner, `answer lost: ${reason}`);
          log.error('notification_uncertain', { reason: 'no answer after the request went out; not resent', err });
          sendFailed('uncertain', ref);
          return 'failed';
        }
        const retryable = (err instanceof TelegramApiError || err instanceof TelegramNetworkError) && err.retryable;
        failures += 1;
        if (failures === 1) firstFailure = now();
        const wait = policy.backoffMs * 2 ** (Math.min(failures, policy.attempts) - 1);
        if (!retryable) {
          await deps.deliveries.markFailed(ref, owner, `refused: ${reason}`);
          log.error('notification_failed', { attempts: failures, err });
          sendFailed('failed', ref);
          return 'failed';
        }
        if (now() - firstFailure + wait > policy.boundMs) {
          // Telegram is down for longer than one bound: the stream retries the record (decision 355).
          await deps.deliveries.release(ref, owner);
          log.error('notification_outage', { attempts: failures, bound_ms: policy.boundMs, err });
          return 'deferred';
        }
        if (now() + wait > run.deadline) {
          // The invocation would end in the wait: the next one tries again (the attempt count starts over).
          await deps.deliveries.release(ref, owner);
          log.warn('notification_deferred', { attempt: failures, err });
          return 'deferred';
        }
        // The lease covers the wait: until it ends nobody takes over a delivery that is only pausing.
        await deps.deliveries.markRetrying(ref, owner, failures, reason, now() + wait + policy.leaseMs);
        log.warn('notification_retry', { attempt: failures, wait_ms: wait, err });
        await sleep(wait);
        continue;
      }
      if (event.createdAt !== undefined)
        emitMetric('NotifierLag', now() - event.createdAt, {}, { download_id: ref.downloadId, kind: ref.kind });
      await deps.afterSend?.(ref, messageId);
      await deps.deliveries.markSent(ref, owner, messageId);
      log.info('notification_sent', { message_id: messageId, attempts: failures + 1, target_chat_id: target });
      if (opensStatus && deps.statuses)
        await deps.statuses
          .opened({
            downloadId: ref.downloadId,
            chatId,
            target,
            messageId,
            sequence: event.sequence,
            title: event.kind as StatusTitle,
          })
          .catch((err) => log.warn('status_record_failed', { err }));
      return 'sent';
    }
  } catch (err) {
    // Storage trouble or a lost claim: logged, never thrown; the claim's lease settles it on redelivery.
    log.error('notification_error', { err });
    sendFailed('error', ref);
    return 'error';
  }
}

/** The chat's language: its choice, made in it or (a group that became a supergroup) in the chat it moved to. */
function chatLocale(deps: NotifierDeps, run: Run, chatId: number) {
  const chosen = run.languages.get(resolveChat(run.moves, chatId)) ?? run.languages.get(chatId);
  return botLocale(chatLanguage({ chosen, fixed: deps.locale.language }), deps.locale.timeZone);
}

/**
 * A status change shown in the download's status message in one chat (decision 456): edited in place; sent
 * when it has none yet (an active download only: a finished one's final message says it) or when Telegram no
 * longer has it ("message to edit not found", or any other refusal of the edit); "message is not modified" is
 * success. An older change than the one shown is skipped (sequence). Paced like every send; a change that does
 * not fit before the deadline is deferred with the rest of the chat's queue, like a notification.
 */
async function updateStatus(
  deps: NotifierDeps,
  run: Run,
  change: StatusChange,
  chatId: number,
): Promise<StatusOutcome> {
  const statuses = deps.statuses!;
  const d = change.download;
  const log = deps.log.child({ download_id: d.id, chat_id: chatId, sequence: change.sequence });
  const now = deps.now ?? systemClock;
  try {
    const current = await statuses.status(d.id, chatId);
    if (current?.sequence !== undefined && current.sequence >= sequenceKey(change.sequence)) return 'skipped';
    const locale = chatLocale(deps, run, chatId);
    const text = statusText(current?.title ?? 'status', d, deps.uiBase, locale);
    const buttons = keyboard(d.id, locale.messages, d.warning && isActive(d.state) ? WARNING_BUTTONS : USUAL_BUTTONS);
    const open = async (replaces?: number): Promise<StatusOutcome> => {
      const owner = randomUUID();
      let claimed = replaces !== undefined;
      const sent = await paced(deps, run, chatId, false, async (target) => {
        if (!claimed) claimed = await statuses.claimOpening(d.id, chatId, owner, now(), now() + deps.policy.leaseMs);
        return claimed ? deps.sender.sendMessage(target, text, buttons) : undefined;
      });
      if ('deferred' in sent) return 'deferred';
      if ('error' in sent) {
        log.warn('status_send_failed', { err: sent.error });
        return 'failed';
      }
      if (sent.ok === undefined) return 'skipped'; // another worker is opening it
      const title = current?.title ?? 'status';
      const recorded = await statuses.opened(
        { downloadId: d.id, chatId, target: sent.target, messageId: sent.ok, sequence: change.sequence, title },
        replaces,
      );
      log.info('status_opened', { message_id: sent.ok, replaces, recorded });
      return 'opened';
    };
    if (current?.messageId === undefined) return isActive(d.state) ? await open() : 'skipped';
    const messageId = current.messageId;
    // Progress and figures alone are news only while the chat has room: a busy chat (a group's 20 a minute)
    // skips them, and its next change shows the latest anyway; a move of state or warning waits its slot.
    if (!change.moved && deps.pacer.peek(resolveChat(run.moves, chatId), now()) > now() + EDIT_SLACK_MS) {
      log.debug('status_edit_skipped_for_pace', {});
      return 'skipped';
    }
    const edited = await paced(deps, run, chatId, true, (target) =>
      deps.sender.editMessageText!(target, messageId, text, buttons),
    );
    if ('deferred' in edited) return 'deferred';
    if ('error' in edited && !isNotModified(edited.error)) {
      if (!(edited.error instanceof TelegramApiError && edited.error.errorCode === 400)) {
        log.warn('status_edit_failed', { err: edited.error });
        return 'failed';
      }
      // Deleted, too old to edit, or in a chat that moved: the download gets a new status message.
      log.info('status_edit_refused', { err: edited.error });
      return await open(messageId);
    }
    await statuses.shown(d.id, chatId, messageId, change.sequence);
    return 'error' in edited ? 'unchanged' : 'edited';
  } catch (err) {
    log.error('status_error', { err });
    return 'failed';
  }
}

/** How long a figures-only edit may wait for its chat's slot before it is skipped (decision 456). */
export const EDIT_SLACK_MS = 3000;

type PacedResult<T> = { ok: T; target: number } | { deferred: true } | { error: unknown };

/**
 * One Bot API call at the chat's paced slot: a 429 waits its retry_after, a moved group is followed, a 5xx or
 * no connection is retried within the policy's bound; a call whose answer was lost is retried only when it is
 * `idempotent` (an edit), never a send.
 */
async function paced<T>(
  deps: NotifierDeps,
  run: Run,
  chatId: number,
  idempotent: boolean,
  call: (target: number) => Promise<T>,
): Promise<PacedResult<T>> {
  const now = deps.now ?? systemClock;
  const sleep = deps.sleep ?? ((ms: number) => sleepFor(ms));
  const { pacer, policy } = deps;
  let failures = 0;
  let firstFailure = 0;
  for (;;) {
    const target = resolveChat(run.moves, chatId);
    if (pacer.peek(target, now()) > run.deadline) return { deferred: true };
    const at = pacer.reserve(target, now());
    if (at > now()) await sleep(at - now());
    try {
      return { ok: await call(target), target };
    } catch (err) {
      if (err instanceof TelegramApiError && err.migrateToChatId !== undefined) {
        await deps.moves.recordMove(target, err.migrateToChatId, now());
        run.moves.set(target, err.migrateToChatId);
        continue;
      }
      if (err instanceof TelegramApiError && err.errorCode === 429) {
        pacer.pause(target, now() + Math.max(1, err.retryAfterS ?? 1) * 1000);
        continue;
      }
      const retryable =
        (err instanceof TelegramApiError && err.retryable) ||
        (err instanceof TelegramNetworkError && (idempotent || !err.maybeApplied));
      if (!retryable) return { error: err };
      failures += 1;
      if (failures === 1) firstFailure = now();
      const wait = policy.backoffMs * 2 ** (Math.min(failures, policy.attempts) - 1);
      if (now() - firstFailure + wait > policy.boundMs || now() + wait > run.deadline) return { deferred: true };
      await sleep(wait);
    }
  }
}

/** A notification that will not be delivered (the console's /failures lists it): NotifierSendFailures. */
function sendFailed(outcome: 'failed' | 'uncertain' | 'error', ref: DeliveryRef): void {
  emitMetric('NotifierSendFailures', 1, { outcome }, { download_id: ref.downloadId, kind: ref.kind });
}

async function poisonRecord(deps: NotifierDeps, record: StreamRecord, err: unknown): Promise<void> {
  const eventId = typeof record.eventID === 'string' ? record.eventID.slice(0, 128) : 'unknown';
  deps.log.error('stream_record_refused', { event_id: eventId, err });
  emitMetric('NotifierSendFailures', 1, { outcome: 'refused' }, { event_id: eventId });
  const reason =
    err instanceof MalformedStreamRecordError
      ? err.message
      : `stream record refused: ${err instanceof Error ? err.name : 'unreadable'}`;
  await deps.deliveries
    .recordFailure({ event_id: eventId, chat_id: 0, download_id: '', kind: 'unreadable', reason })
    .catch((storeErr) => deps.log.error('failure_store_write_failed', { event_id: eventId, err: storeErr }));
}
