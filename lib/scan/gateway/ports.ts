import type { Logger } from '../../log';
import type { ScanConfig } from '../config';
import { Envelope, EnvelopeIds, natsMsgId, ScanRequest } from '../contract';
import type { Normalizer } from '../normalizer';
import type { HotFolder } from '../hotfolder';
import type { ScanFiles, ScanJobStore } from '../store';

/**
 * What every stage of the gateway is given, and the one way any stage speaks
 * to the core system. The stages sit on this file and on each other in one
 * order, never back up it (test/unit/architecture/imports.test.ts):
 * ports ← answers ← submit ← intake, and the loop over submit and answers.
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

export function send(deps: GatewayDeps, e: Envelope): Promise<void> {
  return deps.publish(deps.config.resultSubject, JSON.stringify(e), natsMsgId(e));
}

/** Acks and refusals: a lost one is logged, never allowed to stop the request's own work. */
export async function trySend(deps: GatewayDeps, e: Envelope): Promise<void> {
  try {
    await send(deps, e);
  } catch (err) {
    deps.log.error('scan_publish_failed', { job_id: e.job_id, status: e.status, err });
  }
}

export function idsOf(request: ScanRequest): EnvelopeIds {
  return { job_id: request.job_id, file_id: request.file_id, attempt: request.attempt };
}
