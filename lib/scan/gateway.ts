import { createHash } from 'node:crypto';
import type { ScanConfig } from '../config';
import type { Logger } from '../log';
import { InvalidFileNameError } from '../names';
import {
  envelope,
  Envelope,
  EnvelopeIds,
  EnvelopeParts,
  EnvelopeStatus,
  natsMsgId,
  parseScanRequest,
  ScanRequest,
} from './contract';
import { AnswerNotReadyError } from './errors';
import type { ScanFiles } from './store';
import { AnswerFile, HotFolder, hotFolderName } from './hotfolder';
import { mergeAnswers } from './merge';
import { rawAnswerKey } from './keys';
import type { ScanJob } from './model';
import type { Normalizer } from './normalizer';
import { settle } from './settle';
import type { ScanJobStore } from './store';

/**
 * The scan gateway: `handleRequest` for each NATS request, `pollOnce` /
 * `pollUntil` on the schedule. Everything that must survive an invocation is
 * on the job item; every transition is a CAS, so overlapping invocations
 * cannot double-submit, double-finish or double-publish. No single request,
 * job or hot-folder error may stop the others (see lib/scan/README.md for
 * the rules by name).
 */

export interface GatewayDeps {
  jobs: ScanJobStore;
  files: ScanFiles;
  hotFolder: HotFolder;
  publish: (subject: string, data: string, msgId: string) => Promise<void>;
  normalizer: Normalizer;
  config: ScanConfig & { bucket: string };
  service: { name: string; version: string };
  now: () => number;
  log: Logger;
  /**
   * Makes sure a poller runs, after a new job is stored (lib/scan/poller.ts `ensurePoller`: one write, and a
   * poller invocation when none holds the lease). Never throws. Absent: the schedule alone polls.
   */
  wakePoller?: () => Promise<unknown>;
}

/** Counter of duplicate requests whose payload differs from the stored job's (a misbehaving core system). */
export const PAYLOAD_CONFLICTS = 'scan_payload_conflicts';

export type RequestOutcome = 'started' | 'queued' | 'duplicate' | 'mismatch' | 'ignored' | 'dropped' | 'failed';

export async function handleRequest(deps: GatewayDeps, data: string): Promise<RequestOutcome> {
  const parsed = parseScanRequest(data);
  if (!parsed.ok) return refuse(deps, parsed.reason, parsed.ids);
  const request = parsed.request;
  const log = deps.log.child({ job_id: request.job_id, file_id: request.file_id, attempt: request.attempt });
  const hash = requestHash(request);
  let created: { created: boolean; job: ScanJob };
  try {
    created = await deps.jobs.create(request, hash, deps.now(), deps.config.maxInflight);
  } catch (err) {
    // The store is down: the core system must still hear that this attempt did not start.
    log.error('scan_request_store_failed', { err });
    await trySend(
      deps,
      envelope('error', idsOf(request), deps.service, {
        error: { code: 'UNKNOWN_ERROR', message: 'the gateway could not record the job; send it again' },
      }),
    );
    return 'failed';
  }
  const { job } = created;
  if (!created.created) {
    // A re-sent request: acknowledge again with ITS attempt; no second file.
    if (job.request_hash && job.request_hash !== hash) {
      // Same job id, another file: acknowledged as designed, but made visible.
      log.warn('scan_request_payload_conflict', {
        state: job.state,
        stored_hash: job.request_hash,
        request_hash: hash,
      });
      await deps.jobs.count(PAYLOAD_CONFLICTS).catch((err) => log.error('scan_metric_failed', { err }));
    } else {
      log.info('scan_request_duplicate', { state: job.state });
    }
    await trySend(deps, envelope('processing', { ...idsOf(job.request), attempt: request.attempt }, deps.service));
    return 'duplicate';
  }
  // The submission does not wait for the ack's flush. The ack is still out first: its publish is issued at once,
  // any answer of the submission only after a store round trip (a failed read or a late slot finishes the job first).
  const ack = trySend(deps, envelope('processing', idsOf(request), deps.service));
  // The job is stored: a poller must be running to see its answer (started now when none holds the lease).
  const woken = deps.wakePoller?.().catch((err: unknown) => log.error('scan_poller_wake_failed', { err }));
  if (job.state !== 'starting') {
    await Promise.all([ack, woken]);
    return 'queued';
  }
  await Promise.all([ack, woken, submit(deps, job)]);
  return 'started';
}

/**
 * A request that breaks the contract: SCHEMA_MISMATCH when both ids are
 * readable — unless a job with that id is in work or done, whose real
 * answer would carry the same Nats-Msg-Id and be dropped by the core.
 */
async function refuse(deps: GatewayDeps, reason: string, ids: EnvelopeIds | undefined): Promise<RequestOutcome> {
  if (!ids) {
    deps.log.warn('scan_request_dropped', { reason });
    return 'dropped';
  }
  let live: ScanJob | undefined;
  try {
    live = await deps.jobs.get(ids.job_id);
  } catch (err) {
    // Cannot tell: answer anyway — a broken request owes its sender a reason.
    deps.log.error('scan_mismatch_lookup_failed', { job_id: ids.job_id, err });
  }
  if (live) {
    deps.log.warn('scan_request_mismatch_for_live_job', {
      job_id: ids.job_id,
      state: live.state,
      attempt: ids.attempt,
      reason,
    });
    return 'ignored';
  }
  await trySend(deps, envelope('error', ids, deps.service, { error: { code: 'SCHEMA_MISMATCH', message: reason } }));
  return 'mismatch';
}

export interface PollSummary {
  started: number;
  finished: number;
  republished: number;
  waiting: number;
  /** Jobs still queued for a slot after this pass (a hint; 0 when no slot was free and the queue was not read). */
  queued: number;
  /** Slots held after this pass (from the counter). */
  inFlight: number;
  /** Jobs whose poll threw this pass (logged; they go on until their deadline). */
  failed: number;
  /** The earliest moment a waiting job can change without news from the hot folder (settle window end, deadline). */
  nextDueAt?: number;
  /** The submitted jobs still waiting after this pass (the next pass lists their answers before its reads). */
  waitingJobs: string[];
  /** How long the pass's first round of store reads took (the loop wakes that much before a due window). */
  readMs: number;
}

/**
 * One pass. A `light` pass (between the full ones of one invocation) looks
 * only at submitted and queued jobs: re-publishing a stored result and
 * recovering an interrupted start are not latency-bound (their lease and
 * grace are 30 s and 60 s), so they need not cost every pass two queries.
 */
export async function pollOnce(
  deps: GatewayDeps,
  options: { light?: boolean; slotDue?: boolean; known?: string[] } = {},
): Promise<PollSummary> {
  const summary: PollSummary = {
    started: 0,
    finished: 0,
    republished: 0,
    waiting: 0,
    queued: 0,
    failed: 0,
    inFlight: 0,
    waitingJobs: [],
    readMs: 0,
  };
  // Bookkeeping after a publish (markPublished) is awaited at the end of the pass, not before the queue is served.
  const later: Promise<void>[] = [];
  // One round of reads, all hints: each job is re-read (or CAS-checked) before it is acted on.
  // The answers of jobs known to be waiting are listed first, in parallel with the store reads: the settle window
  // counts from when a set is seen, so seeing it a store round trip sooner settles it that much sooner.
  const listings = new Map((options.known ?? []).map((id) => [id, listAnswers(deps, id)]));
  const readsBegan = deps.now();
  // A settle window is due and jobs wait for slots: the oldest queued job is read now, alongside the other reads,
  // so the slot its finish frees is handed over without two more round trips after it.
  const head = options.slotDue ? deps.jobs.inState('queued', 1) : undefined;
  head?.catch(() => undefined); // unused when no slot frees; its error, if used, is met below
  // Its input is read as soon as it is known (while this pass checks the due jobs), never for a late job.
  const headReads = head?.then((jobs) => new Map(jobs.map((job) => [job.job_id, prefetch(deps, job)])));
  headReads?.catch(() => undefined);
  const [unpublished, starting, submitted, slotsBefore] = await Promise.all([
    options.light ? [] : deps.jobs.inState('unpublished'),
    options.light ? [] : deps.jobs.inState('starting'),
    deps.jobs.inState('submitted'),
    deps.jobs.slotsInUse(),
  ]);
  summary.readMs = deps.now() - readsBegan;
  await Promise.all([
    ...unpublished.map((job) =>
      guard(deps, job, async () => {
        if (await deps.jobs.claimPublish(job, deps.now())) {
          await publishResult(deps, job, later);
          summary.republished++;
        }
      }),
    ),
    ...starting.map((job) =>
      guard(deps, job, async () => {
        // A start that died between taking its slot and submitting: give the slot back.
        if (deps.now() - (job.started_at ?? 0) > STARTING_GRACE_MS) {
          if (
            await finishWith(deps, job, 'error', {
              error: { code: 'UNKNOWN_ERROR', message: 'the gateway was interrupted before submission' },
            })
          )
            summary.finished++;
        }
      }),
    ),
    // One job's error never stops the pass for the others.
    ...submitted.map(async (job) => {
      const ok = await guard(deps, job, async () => {
        const outcome = await checkSubmitted(deps, job, later, listings.get(job.job_id));
        if (outcome.finished) summary.finished++;
        else {
          summary.waiting++;
          summary.waitingJobs.push(job.job_id);
          if (outcome.dueAt !== undefined) summary.nextDueAt = Math.min(summary.nextDueAt ?? Infinity, outcome.dueAt);
        }
      });
      if (!ok) {
        summary.failed++;
        summary.waiting++;
        summary.waitingJobs.push(job.job_id);
      }
    }),
  ]);
  // Slots freed above go to the oldest queued jobs; only as many are read as look free (the start itself is conditional).
  const free = deps.config.maxInflight - slotsBefore + summary.finished;
  const early = free > 0 && head ? await head : [];
  const queued = free <= 0 ? [] : early.length >= free ? early : await deps.jobs.inState('queued', free);
  const submits: Promise<boolean>[] = [];
  // The inputs are read first (in parallel), then each job is started AND marked submitted in one write that takes
  // its slot, and its file written: one round trip less per handover than start, then submitted.
  const headRead = (await headReads?.catch(() => undefined)) ?? new Map<string, Promise<Buffer> | undefined>();
  const reads = queued.map((job) => (headRead.has(job.job_id) ? headRead.get(job.job_id) : prefetch(deps, job)));
  let finishedQueued = 0;
  for (const [i, job] of queued.entries()) {
    const outcome = await startWithInput(deps, job, reads[i], later).catch((err: unknown) => {
      deps.log.error('scan_job_step_failed', { job_id: job.job_id, state: job.state, err });
      return 'failed' as const;
    });
    if (outcome === 'answered') finishedQueued++;
    if (outcome === 'answered' || outcome === 'moved') continue;
    if (outcome === 'failed' || outcome === 'no-slot') break; // no slot for it, none for the younger
    summary.started++;
    submits.push(guard(deps, outcome.job, () => write(deps, outcome.job, outcome.name, outcome.bytes))); // in parallel
  }
  await Promise.all(submits);
  await Promise.all(later);
  summary.finished += finishedQueued;
  summary.inFlight = slotsBefore - (summary.finished - finishedQueued) + summary.started;
  // Without free slots the queue is not read: jobs are in flight, so the pass is not idle anyway.
  if (free > 0)
    summary.queued = queued.length < free ? queued.length - summary.started : await deps.jobs.countInState('queued');
  return summary;
}

/** Within one invocation, a full pass (re-publish, interrupted starts) at most this often. */
const FULL_PASS_EVERY_MS = 1000;

/** A start older than this without a submission died on the way; its slot is given back. */
const STARTING_GRACE_MS = 60_000;

/** How a run of passes ended: `idle` when its last pass found nothing to do (after the linger), else the budget ran out. */
export interface PollRun {
  passes: PollSummary[];
  idle: boolean;
  /** When the last pass began (before its reads): work stored earlier than this was seen by it. */
  lastPassAt: number;
}

/** `pollRun`'s passes (the schedule's invocation before the poller's lease existed; tests and the bench). */
export async function pollUntil(deps: GatewayDeps, budgetEndsAt: number): Promise<PollSummary[]> {
  return (await pollRun(deps, budgetEndsAt)).passes;
}

/**
 * A poller's passes: until its budget ends or it has been idle for a whole
 * poll interval. Between passes it waits `pollEveryMs` at most, and wakes
 * earlier when a settle window or a deadline is due, or when the hot folder
 * reports a change under Output/ (an answer landed).
 *
 * A run that had work stays one more poll interval once idle, watching the
 * hot folder: a request that lands just after the last answer (back-to-back
 * jobs) is then seen when its answer lands, without starting another poller
 * (lib/scan/poller.ts). A run that starts idle ends at once.
 */
export async function pollRun(deps: GatewayDeps, budgetEndsAt: number): Promise<PollRun> {
  const passes: PollSummary[] = [];
  const every = deps.config.pollEveryMs;
  let fullAt = -Infinity;
  let busyAt = -Infinity;
  let slotDue = false;
  let known: string[] = [];
  for (;;) {
    const startedAt = deps.now();
    const light = startedAt - fullAt < FULL_PASS_EVERY_MS;
    if (!light) fullAt = startedAt;
    const pass = await pollOnce(deps, { light, slotDue, known });
    passes.push(pass);
    known = pass.waitingJobs;
    const idle = pass.waiting + pass.queued + pass.started === 0 && pass.inFlight <= 0;
    const now = deps.now();
    const ended = (): PollRun => ({
      passes,
      idle: idle && pass.finished + pass.republished === 0,
      lastPassAt: startedAt,
    });
    // A pass that finished a job counts as busy: the linger runs from the last answer out.
    if (!idle || pass.finished + pass.republished > 0) busyAt = now;
    else if (now - busyAt >= every) return ended();
    // A due settle window is judged after the next pass's reads: start them that much early (the early listing
    // is retaken after the reads when the window had not ended yet). Too early costs a pass, never an early "settled".
    const dueAt = (pass.nextDueAt ?? Infinity) - pass.readMs;
    // Jobs still queued with slots free after a pass that made progress: the next pass runs at once (a queue of
    // jobs that are answered without a slot, or a burst, drains without a poll interval per `free` jobs).
    const draining =
      pass.queued > 0 && pass.inFlight < deps.config.maxInflight && pass.started + pass.finished > 0 ? now : Infinity;
    const wakeAt = Math.min(now + every, dueAt, draining, idle ? busyAt + every : Infinity);
    if (wakeAt >= budgetEndsAt) return ended();
    const pause = Math.max(1, wakeAt - now);
    await (deps.hotFolder.changed ? deps.hotFolder.changed(pause) : new Promise((r) => setTimeout(r, pause)));
    // Woken for a due settle window while jobs may wait for a slot (with every slot held, the queue is not counted).
    slotDue = deps.now() >= dueAt && (pass.queued > 0 || pass.inFlight >= deps.config.maxInflight);
  }
}

/** The job's input, read ahead of its start; undefined when it must not be read (a late job, another bucket). */
function prefetch(deps: GatewayDeps, job: ScanJob): Promise<Buffer> | undefined {
  const { request } = job;
  if (deps.now() > Date.parse(request.reply_deadline) || request.s3.bucket !== deps.config.bucket) return undefined;
  const read = deps.files.read(request.s3.bucket, request.s3.key);
  read.catch(() => undefined); // a dropped prefetch must not be an unhandled rejection; submit sees the error
  return read;
}

/**
 * A queued job whose turn came, its input already being read: queued → submitted in one write that takes its slot
 * ('no-slot' when none is free). One that cannot run (late, unreadable, a bad name) is answered without a slot.
 */
async function startWithInput(
  deps: GatewayDeps,
  job: ScanJob,
  read: Promise<Buffer> | undefined,
  later: Promise<void>[],
): Promise<'answered' | 'moved' | 'no-slot' | { job: ScanJob; name: string; bytes: Buffer }> {
  const prepared = await prepare(deps, job, read);
  if (!prepared.ok) return (await finishWith(deps, job, 'error', prepared.parts, later)) ? 'answered' : 'moved';
  const now = deps.now();
  const taken = await deps.jobs.startSubmitted(
    job,
    now,
    deps.config.maxInflight,
    prepared.name,
    deadlineOf(deps, job.request, now),
  );
  return taken ? { job: taken, name: prepared.name, bytes: prepared.bytes } : 'no-slot';
}

type Prepared = { ok: true; bytes: Buffer; name: string } | { ok: false; parts: EnvelopeParts };

/** What a job needs before its file can go into Input/, or the answer it gets instead. */
async function prepare(deps: GatewayDeps, job: ScanJob, prefetched?: Promise<Buffer>): Promise<Prepared> {
  const { request } = job;
  // A slot that came too late: the core stopped waiting, so nothing is read or written.
  if (deps.now() > Date.parse(request.reply_deadline))
    return { ok: false, parts: { error: { code: 'TIMEOUT', message: 'the job got a slot after its reply deadline' } } };
  let bytes: Buffer;
  try {
    if (request.s3.bucket !== deps.config.bucket) throw new Error(`bucket ${request.s3.bucket} is not the gateway's`);
    bytes = await (prefetched ?? deps.files.read(request.s3.bucket, request.s3.key));
  } catch (err) {
    const message = `cannot read s3://${request.s3.bucket}/${request.s3.key}: ${(err as Error).message}`;
    return { ok: false, parts: { error: { code: 'FILE_READ_ERROR', message } } };
  }
  try {
    return { ok: true, bytes, name: hotFolderName(request.job_id, request.original_name) };
  } catch {
    return { ok: false, parts: { error: { code: 'RECOGNITION_FAILED', message: 'invalid file name' } } };
  }
}

/** The deadline clock starts when the file goes into the hot folder (not when the slot was taken). */
function deadlineOf(deps: GatewayDeps, request: ScanRequest, submittedAt: number): number {
  return Math.min(Date.parse(request.reply_deadline), submittedAt + deps.config.timeoutMs);
}

/** starting → the file in Input/ → submitted (the request path); every failure becomes the job's answer. */
async function submit(deps: GatewayDeps, starting: ScanJob): Promise<void> {
  const prepared = await prepare(deps, starting);
  if (!prepared.ok) {
    await finishWith(deps, starting, 'error', prepared.parts);
    return;
  }
  // The job is marked submitted just BEFORE the write, so a poll woken by the scanner's answer already sees it.
  const submittedAt = deps.now();
  const submitted = await deps.jobs.submitted(
    starting,
    prepared.name,
    submittedAt,
    deadlineOf(deps, starting.request, submittedAt),
  );
  if (!submitted) return; // another invocation moved it (finished it as interrupted): not ours to write
  await write(deps, submitted, prepared.name, prepared.bytes);
}

/** The file of a submitted job into Input/; a failure is the job's answer. */
async function write(deps: GatewayDeps, submitted: ScanJob, name: string, bytes: Buffer): Promise<void> {
  const { request } = submitted;
  try {
    await deps.hotFolder.put(name, bytes);
  } catch (err) {
    const message = err instanceof InvalidFileNameError ? 'invalid file name' : 'hot folder unavailable';
    deps.log.warn('scan_submit_failed', { job_id: request.job_id, err });
    await finishWith(deps, submitted, 'error', { error: { code: 'RECOGNITION_FAILED', message } });
    return;
  }
  deps.log.info('scan_submitted', { job_id: request.job_id, inbox_name: name });
}

type Check = { finished: true } | { finished: false; dueAt?: number };

/** One listing of a job's answers, and when it was taken (the moment the settle step judges). */
type Listing = { at: number } & ({ ok: true; files: AnswerFile[] | null } | { ok: false; err: unknown });

function listAnswers(deps: GatewayDeps, jobId: string): Promise<Listing> {
  const at = deps.now();
  return deps.hotFolder.poll(jobId).then(
    (files): Listing => ({ at, ok: true, files }),
    (err: unknown): Listing => ({ at, ok: false, err }),
  );
}

async function checkSubmitted(
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
        ? { code: 'RECOGNITION_FAILED' as const, message: 'hot folder unavailable' }
        : {
            code: 'TIMEOUT' as const,
            message: job.settle ? 'the answer set never settled' : 'no answer before the deadline',
          };
    return { finished: await finishWith(deps, job, 'error', { error }, later) };
  }
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
  let merged;
  try {
    merged = await mergeAnswers(job.job_id, files!);
  } catch (err) {
    // The scanning system still holds a file (SMB sharing violation, delete pending): not ready yet.
    if (err instanceof AnswerNotReadyError) {
      deps.log.info('scan_answer_not_ready', { job_id: job.job_id, reason: err.message });
      return { finished: false };
    }
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
    parts = {
      error: normalized.error,
      warnings: normalized.metrics.warnings,
      documents: normalized.documents,
      raw_s3_key: rawKey,
    };
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

/** Stores the result (releasing the slot) THEN publishes; only the winner of the CAS publishes. */
async function finishWith(
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
async function publishResult(deps: GatewayDeps, job: ScanJob, later?: Promise<void>[]): Promise<void> {
  // Stored and unpublished: a later poll re-publishes it, same Nats-Msg-Id.
  const failed = (err: unknown) => deps.log.error('scan_publish_failed', { job_id: job.job_id, err });
  try {
    await send(deps, job.result!);
  } catch (err) {
    failed(err);
    return;
  }
  const mark = deps.jobs.markPublished(job.job_id, deps.now()).catch(failed);
  if (later) later.push(mark);
  else await mark;
}

/** Runs one job's step; a throw is logged against the job and reported as false, never thrown on. */
async function guard(deps: GatewayDeps, job: ScanJob, step: () => Promise<void>): Promise<boolean> {
  try {
    await step();
    return true;
  } catch (err) {
    deps.log.error('scan_job_step_failed', { job_id: job.job_id, state: job.state, err });
    return false;
  }
}

function send(deps: GatewayDeps, e: Envelope): Promise<void> {
  return deps.publish(deps.config.resultSubject, JSON.stringify(e), natsMsgId(e));
}

/** Acks and refusals: a lost one is logged, never allowed to stop the request's own work. */
async function trySend(deps: GatewayDeps, e: Envelope): Promise<void> {
  try {
    await send(deps, e);
  } catch (err) {
    deps.log.error('scan_publish_failed', { job_id: e.job_id, status: e.status, err });
  }
}

function idsOf(request: ScanRequest): EnvelopeIds {
  return { job_id: request.job_id, file_id: request.file_id, attempt: request.attempt };
}

/** What identifies the work of a job: a re-send has the same; a reuse of the id for other work does not. */
export function requestHash(request: ScanRequest): string {
  return createHash('sha256')
    .update(JSON.stringify([request.file_id, request.s3.bucket, request.s3.key]))
    .digest('hex')
    .slice(0, 16);
}
