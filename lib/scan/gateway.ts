import type { ScanConfig } from '../config';
import type { Logger } from '../log';
import { envelope, Envelope, EnvelopeParts, EnvelopeStatus, natsMsgId, parseScanRequest } from './contract';
import type { ScanFiles } from './files';
import type { HotFolder } from './hotfolder';
import type { ScanJob, ScanJobStore } from './jobs';
import { mergeAnswers } from './merge';
import { inboxName, InvalidFileNameError } from '../names';
import type { Normalizer } from './normalizer';
import { settle } from './settle';

/**
 * The scan gateway (DESIGN §4, serverless mapping): `handleRequest` for each
 * NATS request, `pollOnce` on the schedule. Everything that must survive an
 * invocation is on the job item; every transition is a CAS, so overlapping
 * invocations cannot double-submit, double-finish or double-publish.
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
}

type Ids = { job_id: string; file_id: string | null; attempt: number | null };

export async function handleRequest(deps: GatewayDeps, data: string): Promise<'started' | 'queued' | 'duplicate' | 'mismatch' | 'dropped'> {
  const parsed = parseScanRequest(data);
  if (!parsed.ok) {
    if (!parsed.ids) {
      deps.log.warn('scan_request_dropped', { reason: parsed.reason });
      return 'dropped';
    }
    await send(deps, envelope('error', parsed.ids, deps.service, { error: { code: 'SCHEMA_MISMATCH', message: parsed.reason } }));
    return 'mismatch';
  }
  const request = parsed.request;
  const log = deps.log.child({ job_id: request.job_id, file_id: request.file_id, attempt: request.attempt });
  const { created, job } = await deps.jobs.create(request, deps.now());
  if (!created) {
    // A re-sent request: acknowledge again with ITS attempt; no second file.
    log.info('scan_request_duplicate', { state: job.state });
    await send(deps, envelope('processing', { ...idsOf(job), attempt: request.attempt }, deps.service));
    return 'duplicate';
  }
  await send(deps, envelope('processing', idsOf(job), deps.service));
  return (await startIfSlot(deps, job)) ? 'started' : 'queued';
}

export interface PollSummary {
  started: number;
  finished: number;
  republished: number;
  waiting: number;
  /** Jobs still queued for a slot after this pass. */
  queued: number;
}

export async function pollOnce(deps: GatewayDeps): Promise<PollSummary> {
  const summary: PollSummary = { started: 0, finished: 0, republished: 0, waiting: 0, queued: 0 };
  for (const job of await deps.jobs.inState('unpublished')) {
    if (await deps.jobs.claimPublish(job, deps.now())) {
      await publishResult(deps, job);
      summary.republished++;
    }
  }
  for (const job of await deps.jobs.inState('starting')) {
    // A start that died between taking its slot and submitting: give the slot back.
    if (deps.now() - (job.started_at ?? 0) > 60_000) {
      if (await finishWith(deps, job, 'error', { error: { code: 'UNKNOWN_ERROR', message: 'the gateway was interrupted before submission' } })) summary.finished++;
    }
  }
  for (const job of await deps.jobs.inState('submitted')) {
    if ((await checkSubmitted(deps, job)) === 'finished') summary.finished++;
    else summary.waiting++;
  }
  const queued = await deps.jobs.inState('queued');
  for (const job of queued) {
    if (!(await startIfSlot(deps, job))) break; // oldest first: no slot for it, none for the younger
    summary.started++;
  }
  summary.queued = queued.length - summary.started;
  return summary;
}

/** The schedule's invocation: passes every `pollEveryMs` until its budget ends or nothing is in flight. */
export async function pollUntil(deps: GatewayDeps, budgetEndsAt: number): Promise<PollSummary[]> {
  const passes: PollSummary[] = [];
  for (;;) {
    const pass = await pollOnce(deps);
    passes.push(pass);
    const idle = pass.waiting + pass.queued + pass.started === 0;
    if (idle || Date.now() + deps.config.pollEveryMs >= budgetEndsAt) return passes;
    await new Promise((r) => setTimeout(r, deps.config.pollEveryMs));
  }
}

async function startIfSlot(deps: GatewayDeps, job: ScanJob): Promise<boolean> {
  const starting = await deps.jobs.start(job, deps.now(), deps.config.maxInflight);
  if (!starting) return false;
  const { request } = starting;
  let bytes: Buffer;
  try {
    if (request.s3.bucket !== deps.config.bucket) throw new Error(`bucket ${request.s3.bucket} is not the gateway's`);
    bytes = await deps.files.read(request.s3.bucket, request.s3.key);
  } catch (err) {
    await finishWith(deps, starting, 'error', { error: { code: 'FILE_READ_ERROR', message: `cannot read s3://${request.s3.bucket}/${request.s3.key}: ${(err as Error).message}` } });
    return true;
  }
  let name: string;
  try {
    name = inboxName(request.job_id, request.original_name);
    await deps.hotFolder.put(name, bytes);
  } catch (err) {
    const message = err instanceof InvalidFileNameError ? 'invalid file name' : 'hot folder unavailable';
    deps.log.warn('scan_submit_failed', { job_id: request.job_id, err });
    await finishWith(deps, starting, 'error', { error: { code: 'RECOGNITION_FAILED', message } });
    return true;
  }
  const deadline = Math.min(Date.parse(request.reply_deadline), starting.started_at! + deps.config.timeoutMs);
  await deps.jobs.submitted(starting, name, deadline);
  deps.log.info('scan_submitted', { job_id: request.job_id, inbox_name: name });
  return true;
}

async function checkSubmitted(deps: GatewayDeps, job: ScanJob): Promise<'finished' | 'waiting'> {
  const now = deps.now();
  if (now > (job.deadline ?? 0)) {
    // The inbox file is left in place: the scanning system may still be working on it.
    const won = await finishWith(deps, job, 'error', { error: { code: 'TIMEOUT', message: job.settle ? 'the answer set never settled' : 'no answer before the deadline' } });
    return won ? 'finished' : 'waiting';
  }
  const files = await deps.hotFolder.poll(job.job_id);
  const result = settle(files, job.settle, now, deps.config.settleMs);
  if (!result.ready) {
    if (result.state && result.state.snapshot !== job.settle?.snapshot) await deps.jobs.saveSettle(job, result.state);
    return 'waiting';
  }
  const merged = await mergeAnswers(job.job_id, files!);
  const rawKey = `raw/${job.job_id}.json`;
  try {
    await deps.files.writeRaw(rawKey, JSON.stringify(merged));
  } catch (err) {
    deps.log.error('scan_raw_write_failed', { job_id: job.job_id, err });
    return (await finishWith(deps, job, 'error', { error: { code: 'UNKNOWN_ERROR', message: 'saving the raw answer failed' } })) ? 'finished' : 'waiting';
  }
  let parts: EnvelopeParts;
  let status: EnvelopeStatus;
  try {
    const normalized = deps.normalizer.normalize(merged);
    status = normalized.status;
    parts = { error: normalized.error, warnings: normalized.metrics.warnings, documents: normalized.documents, raw_s3_key: rawKey };
  } catch (err) {
    deps.log.error('scan_normalizer_failed', { job_id: job.job_id, err });
    status = 'error';
    parts = { error: { code: 'UNKNOWN_ERROR', message: `normalisation failed: ${(err as Error).message}` }, raw_s3_key: rawKey };
  }
  return (await finishWith(deps, job, status, parts)) ? 'finished' : 'waiting';
}

/** Stores the result (releasing the slot) THEN publishes; only the winner of the CAS publishes. */
async function finishWith(deps: GatewayDeps, job: ScanJob, status: EnvelopeStatus, parts: EnvelopeParts): Promise<boolean> {
  const finished = await deps.jobs.finish(job, envelope(status, idsOf(job), deps.service, parts), deps.now());
  if (!finished) return false;
  deps.log.info('scan_finished', { job_id: job.job_id, status, error_code: parts.error?.code });
  await publishResult(deps, finished);
  return true;
}

async function publishResult(deps: GatewayDeps, job: ScanJob): Promise<void> {
  try {
    await send(deps, job.result!);
    await deps.jobs.markPublished(job.job_id, deps.now());
  } catch (err) {
    // Stored and unpublished: a later poll re-publishes it, same Nats-Msg-Id.
    deps.log.error('scan_publish_failed', { job_id: job.job_id, err });
  }
}

function send(deps: GatewayDeps, e: Envelope): Promise<void> {
  return deps.publish(deps.config.resultSubject, JSON.stringify(e), natsMsgId(e));
}

function idsOf(job: ScanJob): Ids {
  return { job_id: job.job_id, file_id: job.request.file_id, attempt: job.request.attempt };
}

