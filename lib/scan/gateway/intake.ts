import { createHash } from 'node:crypto';
import { envelope, EnvelopeIds, parseScanRequest, ScanRequest } from '../contract';
import type { ScanJob } from '../model';
import { GatewayDeps, idsOf, trySend } from './ports';
import { submit } from './submit';

/**
 * The intake stage: each NATS request parsed, acknowledged, recorded as a job
 * (taking a slot when one is free) and, when it got one, submitted at once.
 * A broken request is answered SCHEMA_MISMATCH unless that would shadow a
 * live job's answer (lib/scan/README.md, "no second answer under a live id").
 */

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

/** What identifies the work of a job: a re-send has the same; a reuse of the id for other work does not. */
export function requestHash(request: ScanRequest): string {
  return createHash('sha256')
    .update(JSON.stringify([request.file_id, request.s3.bucket, request.s3.key]))
    .digest('hex')
    .slice(0, 16);
}
