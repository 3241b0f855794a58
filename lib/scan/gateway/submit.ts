import { InvalidFileNameError } from '../../names';
import { ContractMessage, EnvelopeParts, ScanRequest } from '../contract';
import { hotFolderName } from '../hotfolder';
import type { ScanJob } from '../model';
import { discard, ScanInput } from '../input';
import { finishWith } from './answers';
import type { GatewayDeps } from './ports';

/**
 * The submission stage: a job's input read from S3 and written into Input/,
 * on the request path (`submit`, the job already holds its slot) or by the
 * poller for a queued job (`startWithInput`, the slot taken in the same write
 * that marks it submitted). A job that cannot run is answered, never retried.
 */

/**
 * The job's input, opened ahead of its start (its bytes stream into the hot folder at the write: never held
 * whole in memory, decision 395); undefined when it must not be read (a late job, another bucket). Whoever
 * drops it without writing it `discard`s it.
 */
export function prefetch(deps: GatewayDeps, job: ScanJob): Promise<ScanInput> | undefined {
  const { request } = job;
  if (deps.now() > slotDeadline(deps, job) || request.s3.bucket !== deps.config.bucket) return undefined;
  const read = deps.files.open(request.s3.bucket, request.s3.key);
  read.catch(() => undefined); // a dropped prefetch must not be an unhandled rejection; submit sees the error
  return read;
}

/**
 * A queued job whose turn came, its input already being read: queued → submitted in one write that takes its slot
 * ('no-slot' when none is free). One that cannot run (late, unreadable, a bad name) is answered without a slot.
 */
export async function startWithInput(
  deps: GatewayDeps,
  job: ScanJob,
  read: Promise<ScanInput> | undefined,
  later: Promise<void>[],
): Promise<'answered' | 'moved' | 'no-slot' | { job: ScanJob; name: string; input: ScanInput }> {
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
  if (taken) return { job: taken, name: prepared.name, input: prepared.input };
  discard(prepared.input);
  return 'no-slot';
}

type Prepared = { ok: true; input: ScanInput; name: string } | { ok: false; parts: EnvelopeParts };

/** What a job needs before its file can go into Input/, or the answer it gets instead. */
async function prepare(deps: GatewayDeps, job: ScanJob, prefetched?: Promise<ScanInput>): Promise<Prepared> {
  const { request } = job;
  // A slot that came too late: the core stopped waiting (or waited past what the gateway allows), nothing is read or written.
  if (deps.now() > slotDeadline(deps, job)) {
    discard(prefetched);
    return { ok: false, parts: { error: { code: 'TIMEOUT', message: LATE_SLOT } } };
  }
  let input: ScanInput;
  try {
    if (request.s3.bucket !== deps.config.bucket) throw new Error(`bucket ${request.s3.bucket} is not the gateway's`);
    input = await (prefetched ?? deps.files.open(request.s3.bucket, request.s3.key));
  } catch (err) {
    return { ok: false, parts: { error: { code: 'FILE_READ_ERROR', message: unreadable(request, err) } } };
  }
  try {
    return { ok: true, input, name: hotFolderName(request.job_id, request.original_name) };
  } catch {
    discard(input);
    return { ok: false, parts: { error: { code: 'RECOGNITION_FAILED', message: ContractMessage.INVALID_FILE_NAME } } };
  }
}

const LATE_SLOT = 'the job got no slot before its reply deadline (at most SCAN_TIMEOUT_SECONDS after the request)';

/**
 * Until when a queued job may still get a slot: its `reply_deadline`, capped at SCAN_TIMEOUT_SECONDS after the
 * request came in (decision 393). The sender sets the deadline with no upper bound; without the cap a job could
 * wait (and be read again by every pass) for as long as the sender wrote.
 */
function slotDeadline(deps: GatewayDeps, job: ScanJob): number {
  return Math.min(Date.parse(job.request.reply_deadline), job.created_at + deps.config.timeoutMs);
}

const unreadable = (request: ScanRequest, err: unknown) =>
  `cannot read s3://${request.s3.bucket}/${request.s3.key}: ${(err as Error).message}`;

/** The deadline clock starts when the file goes into the hot folder (not when the slot was taken). */
function deadlineOf(deps: GatewayDeps, request: ScanRequest, submittedAt: number): number {
  return Math.min(Date.parse(request.reply_deadline), submittedAt + deps.config.timeoutMs);
}

/** starting → the file in Input/ → submitted (the request path); every failure becomes the job's answer. */
export async function submit(deps: GatewayDeps, starting: ScanJob): Promise<void> {
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
  if (!submitted) return discard(prepared.input); // another invocation moved it (finished it as interrupted): not ours
  await write(deps, submitted, prepared.name, prepared.input);
}

/** The file of a submitted job streamed from S3 into Input/; a failure is the job's answer. */
export async function write(deps: GatewayDeps, submitted: ScanJob, name: string, input: ScanInput): Promise<void> {
  const { request } = submitted;
  // The S3 side breaking mid-stream is the input's fault (FILE_READ_ERROR), not the hot folder's.
  let readFailed: Error | undefined;
  input.body.once('error', (err: Error) => (readFailed = err));
  try {
    await deps.hotFolder.put(name, input.body);
  } catch (err) {
    deps.log.warn('scan_submit_failed', { job_id: request.job_id, err: readFailed ?? err });
    const message =
      err instanceof InvalidFileNameError ? ContractMessage.INVALID_FILE_NAME : ContractMessage.HOT_FOLDER_UNAVAILABLE;
    const error = readFailed
      ? { code: 'FILE_READ_ERROR' as const, message: unreadable(request, readFailed) }
      : { code: 'RECOGNITION_FAILED' as const, message };
    await finishWith(deps, submitted, 'error', { error });
    return;
  } finally {
    input.body.destroy(); // read to its end already, or not wanted any more
  }
  deps.log.info('scan_submitted', { job_id: request.job_id, inbox_name: name });
}
