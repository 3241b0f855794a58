import { emitMetrics, metricsActive } from '../../metrics';
import type { ScanJob } from '../model';
import { checkSubmitted, finishWith, listAnswers, publishResult } from './answers';
import type { GatewayDeps } from './ports';
import { discard, ScanInput } from '../input';
import { prefetch, startWithInput, write } from './submit';

/**
 * The poll loop: `pollOnce` is one pass over the jobs in work (re-publish,
 * interrupted starts, submitted jobs' answers, then queued jobs into freed
 * slots); `pollRun` repeats passes until the budget ends or the poller has
 * been idle a poll interval. Everything that must survive an invocation is on
 * the job item; every transition is a CAS, so overlapping passes cannot
 * double-submit, double-finish or double-publish, and no one job's error
 * stops the pass for the others.
 */

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
  const headRead = (await headReads?.catch(() => undefined)) ?? new Map<string, Promise<ScanInput> | undefined>();
  const reads = queued.map((job) => (headRead.has(job.job_id) ? headRead.get(job.job_id) : prefetch(deps, job)));
  // The head's input opened for a slot that did not free: closed (an unread S3 body holds its connection).
  for (const [id, read] of headRead) if (!queued.some((job) => job.job_id === id)) discard(read);
  let finishedQueued = 0;
  let taken = 0;
  for (const [i, job] of queued.entries()) {
    taken = i + 1;
    const outcome = await startWithInput(deps, job, reads[i], later).catch((err: unknown) => {
      deps.log.error('scan_job_step_failed', { job_id: job.job_id, state: job.state, err });
      discard(reads[i]);
      return 'failed' as const;
    });
    if (outcome === 'answered') finishedQueued++;
    if (outcome === 'answered' || outcome === 'moved') continue;
    if (outcome === 'failed' || outcome === 'no-slot') break; // no slot for it, none for the younger
    summary.started++;
    submits.push(guard(deps, outcome.job, () => write(deps, outcome.job, outcome.name, outcome.input))); // in parallel
  }
  for (const read of reads.slice(taken)) discard(read); // opened for jobs this pass did not reach
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

/** The poller samples the backlog and the slots held at most this often (ScanBacklog, ScanInFlight). */
export const LOAD_SAMPLE_MS = 10_000;

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
export async function pollRun(
  deps: GatewayDeps,
  budgetEndsAt: number,
  afterPass?: () => Promise<void>,
): Promise<PollRun> {
  const passes: PollSummary[] = [];
  const every = deps.config.pollEveryMs;
  let fullAt = -Infinity;
  let busyAt = -Infinity;
  let slotDue = false;
  let known: string[] = [];
  let sampledAt = -Infinity;
  for (;;) {
    const startedAt = deps.now();
    const light = startedAt - fullAt < FULL_PASS_EVERY_MS;
    if (!light) fullAt = startedAt;
    const pass = await pollOnce(deps, { light, slotDue, known });
    passes.push(pass);
    await afterPass?.();
    if (startedAt - sampledAt >= LOAD_SAMPLE_MS && metricsActive()) {
      sampledAt = startedAt;
      await sampleLoad(deps, pass);
    }
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

/** The backlog counted (a pass reads the queue only when a slot is free) and the slots the pass left held. */
async function sampleLoad(deps: GatewayDeps, pass: PollSummary): Promise<void> {
  const backlog = await deps.jobs.countInState('queued').catch((err: unknown) => {
    deps.log.warn('scan_backlog_unread', { err });
    return undefined;
  });
  emitMetrics({ ScanBacklog: backlog, ScanInFlight: Math.max(0, pass.inFlight) });
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
