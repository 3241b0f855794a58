import { emitMetrics } from '../../metrics';
import { checkEnvelopeParts, ContractMessage, EnvelopeParts, EnvelopeStatus, envelope } from '../contract';
import { AnswerNotReadyError, AnswerRefusedError, HotFolderUnavailableError } from '../errors';
import type { AnswerFile } from '../hotfolder';
import { mergeAnswers } from '../merge';
import { InvalidFileNameError } from '../../names';
import { rawAnswerKey } from '../keys';
import type { ScanJob } from '../model';
import { settle } from '../settle';
import { GatewayDeps, idsOf, send } from './ports';

/**
 * The answer stage: a submitted job's answer set listed, settled, merged, its
 * raw form written to S3, normalised; then the result stored (releasing the
 * slot) and published. Every other stage ends a job through `finishWith`.
 */

export type Check = { finished: true } | { finished: false; dueAt?: number };

/** One listing of a job's answers, and when it was taken (the moment the settle step judges). */
export type Listing = { at: number } & ({ ok: true; files: AnswerFile[] | null } | { ok: false; err: unknown });

export function listAnswers(deps: GatewayDeps, jobId: string): Promise<Listing> {
  const at = deps.now();
  return deps.hotFolder.poll(jobId).then(
    (files): Listing => ({ at, ok: true, files }),
    (err: unknown): Listing => ({ at, ok: false, err }),
  );
}

/** Reads of one answer set that may end without an outcome (the invocation died, the merge threw) before it is given up. */
export const MAX_ANSWER_READS = 2;
const ABANDONED = 'reading the answer set failed twice (the poller stopped or failed while reading it): given up';

export async function checkSubmitted(
  deps: GatewayDeps,
  job: ScanJob,
  later?: Promise<void>[],
  listed?: Promise<Listing>,
): Promise<Check> {
  const deadline = job.deadline ?? 0;
  const { settleMs } = deps.config;
  // Past its deadline the job is not listed (unless a listing was already under way).
  let listing = listed ? await listed : deps.now() > deadline ? undefined : await listAnswers(deps, job.job_id);
  const windowEndsAt = job.settle ? job.settle.first_seen_at + settleMs : Infinity;
  // Listed before its window ended but judged after: the window may have ended meanwhile; list once more.
  if (listing?.ok && listing.at < windowEndsAt && deps.now() >= windowEndsAt && deps.now() <= deadline)
    listing = await listAnswers(deps, job.job_id);
  const now = listing?.at ?? deps.now();
  if (!listing || now > deadline) {
    // The inbox file is left in place: the scanning system may still be working on it.
    const error =
      job.poll_failed && !job.poll_ok
        ? { code: 'RECOGNITION_FAILED' as const, message: ContractMessage.HOT_FOLDER_UNAVAILABLE }
        : {
            code: 'TIMEOUT' as const,
            message: job.settle ? 'the answer set never settled' : 'no answer before the deadline',
          };
    return { finished: await finishWith(deps, job, 'error', { error }, later) };
  }
  if (!listing.ok && listing.err instanceof AnswerRefusedError)
    return { finished: await refuse(deps, job, listing.err, later) };
  if (!listing.ok) {
    // Logged, and polling goes on until the deadline; only a job whose every poll failed ends "hot folder unavailable".
    deps.log.warn('scan_poll_failed', { job_id: job.job_id, err: listing.err });
    if (!job.poll_failed) await deps.jobs.recordPoll(job, { poll_failed: true });
    return { finished: false, dueAt: deadline + 1 };
  }
  const { files } = listing;
  const result = settle(files, job.settle, now, settleMs);
  if (!result.ready) {
    const patch = {
      ...(job.poll_ok ? {} : { poll_ok: true as const }),
      ...(result.state && result.state.snapshot !== job.settle?.snapshot ? { settle: result.state } : {}),
    };
    if (Object.keys(patch).length > 0) await deps.jobs.recordPoll(job, patch);
    const settleDue = result.state ? result.state.first_seen_at + deps.config.settleMs : Infinity;
    return { finished: false, dueAt: Math.min(settleDue, deadline + 1) };
  }
  // Counted before the set is read: a read that kills the invocation (or throws) is seen by the next pass.
  const reads = job.answer_reads ?? 0;
  if (reads >= MAX_ANSWER_READS) {
    deps.log.error('scan_answer_abandoned', { job_id: job.job_id, reads });
    const error = { code: 'UNKNOWN_ERROR' as const, message: ABANDONED };
    return { finished: await finishWith(deps, job, 'error', { error }, later) };
  }
  const reading = await deps.jobs.recordPoll(job, { answer_reads: reads + 1 });
  if (!reading) return { finished: false }; // another pass moved it
  job = reading;
  let merged;
  try {
    merged = await mergeAnswers(job.job_id, files!, deps.config.answerBounds);
  } catch (err) {
    const waiting = err instanceof AnswerNotReadyError || err instanceof HotFolderUnavailableError;
    // Not this set's fault (a held file, a flaky share): that read is not counted.
    if (waiting) await deps.jobs.recordPoll(job, { answer_reads: reads });
    // The scanning system still holds a file (SMB sharing violation, delete pending): not ready yet.
    if (err instanceof AnswerNotReadyError) {
      deps.log.info('scan_answer_not_ready', { job_id: job.job_id, reason: err.message });
      return { finished: false };
    }
    // An answer no open can name (the share showed a raw name): refused, never skipped in silence.
    if (err instanceof InvalidFileNameError) {
      deps.log.warn('scan_answer_name_invalid', { job_id: job.job_id, reason: err.message });
      const error = { code: 'RECOGNITION_FAILED' as const, message: ContractMessage.INVALID_FILE_NAME };
      return { finished: await finishWith(deps, job, 'error', { error }, later) };
    }
    if (err instanceof AnswerRefusedError) return { finished: await refuse(deps, job, err, later) };
    throw err;
  }
  const rawKey = rawAnswerKey(job.job_id);
  try {
    await deps.files.writeRaw(rawKey, JSON.stringify(merged));
  } catch (err) {
    deps.log.error('scan_raw_write_failed', { job_id: job.job_id, err });
    return {
      finished: await finishWith(
        deps,
        job,
        'error',
        { error: { code: 'UNKNOWN_ERROR', message: 'saving the raw answer failed' } },
        later,
      ),
    };
  }
  let parts: EnvelopeParts;
  let status: EnvelopeStatus;
  try {
    const normalized = deps.normalizer.normalize(merged);
    status = normalized.status;
    // The contract's rules are checked here too, so a normaliser that breaks them ends the job UNKNOWN_ERROR.
    parts = checkEnvelopeParts(status, {
      error: normalized.error,
      warnings: normalized.metrics.warnings,
      documents: normalized.documents,
      raw_s3_key: rawKey,
    });
  } catch (err) {
    deps.log.error('scan_normalizer_failed', { job_id: job.job_id, err });
    status = 'error';
    parts = {
      error: { code: 'UNKNOWN_ERROR', message: `normalisation failed: ${(err as Error).message}` },
      raw_s3_key: rawKey,
    };
  }
  return { finished: await finishWith(deps, job, status, parts, later) };
}

/** A set the gateway will not read (a link, a file or set over its bounds): nothing of it reaches S3 or the envelope but the reason. */
async function refuse(
  deps: GatewayDeps,
  job: ScanJob,
  err: AnswerRefusedError,
  later?: Promise<void>[],
): Promise<boolean> {
  deps.log.warn('scan_answer_refused', { job_id: job.job_id, reason: err.message });
  return finishWith(deps, job, 'error', { error: { code: 'RECOGNITION_FAILED', message: err.message } }, later);
}

/** Stores the result (releasing the slot) THEN publishes; only the winner of the CAS publishes. */
export async function finishWith(
  deps: GatewayDeps,
  job: ScanJob,
  status: EnvelopeStatus,
  parts: EnvelopeParts,
  later?: Promise<void>[],
): Promise<boolean> {
  const finished = await deps.jobs.finish(job, envelope(status, idsOf(job.request), deps.service, parts), deps.now());
  if (!finished) return false;
  deps.log.info('scan_finished', { job_id: job.job_id, status, error_code: parts.error?.code });
  await publishResult(deps, finished, later);
  return true;
}

/** Publishes a stored result; marking it published goes into `later` when given (the caller awaits it). */
export async function publishResult(deps: GatewayDeps, job: ScanJob, later?: Promise<void>[]): Promise<void> {
  // Stored and unpublished: a later poll re-publishes it, same Nats-Msg-Id.
  const failed = (err: unknown) => deps.log.error('scan_publish_failed', { job_id: job.job_id, err });
  try {
    await send(deps, job.result!);
  } catch (err) {
    failed(err);
    return;
  }
  const at = deps.now();
  publishedMetrics(job, at);
  const mark = deps.jobs.markPublished(job.job_id, at).catch(failed);
  if (later) later.push(mark);
  else await mark;
}

/**
 * A final envelope went out: the request's whole wait, the gateway's own part of it (from the first sight
 * of the answers: bounded by settle + one poll interval), and whether it came after the request's deadline.
 */
function publishedMetrics(job: ScanJob, at: number): void {
  const deadline = Date.parse(job.request.reply_deadline);
  emitMetrics(
    {
      ScanLatency: at - job.created_at,
      ScanAnswerDelay: job.settle ? at - job.settle.first_seen_at : undefined,
      ScanAnswersLate: Number.isFinite(deadline) && at > deadline ? 1 : 0,
    },
    {},
    { job_id: job.job_id, status: job.result?.status, error_code: job.result?.error?.code ?? undefined },
  );
}
