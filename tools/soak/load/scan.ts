import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { NatsConnection } from 'nats';
import type { Random } from '../args';
import type { Recorder } from '../metrics';
import { Deadline, every } from './http';

/**
 * Scan requests on NATS at a steady rate, as the core system sends them, with
 * re-sent duplicates (same job, same attempt) and a few bad requests; every
 * envelope on the result subject is kept, with when it came.
 */

export interface ScanLoadDeps {
  nc: NatsConnection;
  s3: S3Client;
  bucket: string;
  requestSubject: string;
  resultSubject: string;
  fixtures: string;
  random: Random;
  recorder: Recorder;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  /** The envelopes seen so far: a request with none after `resendAfterMs` is sent again, as the core system would. */
  seen: SeenEnvelope[];
}

/** Core NATS is at most once: a request lost with a server is the requester's to send again (same job, same attempt). */
export const RESEND_AFTER_MS = 30_000;
const MAX_RESENDS = 3;

export interface SentScan {
  job_id: string;
  attempt: number;
  sentAt: number;
  resends: number;
  lastSentAt: number;
}

export interface SeenEnvelope {
  job_id: string;
  attempt: number;
  status: string;
  raw_s3_key?: string | null;
  error_code?: string;
  /** `Nats-Msg-Id` (<job>:<attempt>:<status>): the core system drops a second copy under the same id. */
  msg_id?: string;
  at: number;
}

export const SCAN_INPUTS = ['aep_3.pdf', 'aep_6.pdf', 'unknown.pdf'];

export function collectEnvelopes(nc: NatsConnection, subject: string, now: () => number): SeenEnvelope[] {
  const seen: SeenEnvelope[] = [];
  nc.subscribe(subject, {
    callback: (_err, msg) => {
      try {
        const e = JSON.parse(new TextDecoder().decode(msg.data)) as Record<string, unknown>;
        seen.push({
          job_id: String(e.job_id),
          attempt: Number(e.attempt),
          status: String(e.status),
          raw_s3_key: e.raw_s3_key as string | null | undefined,
          error_code: (e.error as { code?: string } | undefined)?.code,
          msg_id: msg.headers?.get('Nats-Msg-Id') || undefined,
          at: now(),
        });
      } catch {
        seen.push({ job_id: '?', attempt: 0, status: 'unreadable', at: now() });
      }
    },
  });
  return seen;
}

export async function scanLoad(deps: ScanLoadDeps, until: Deadline, everyMs = 2000): Promise<SentScan[]> {
  const sent: SentScan[] = [];
  const requests = new Map<string, string>();
  // One upload per input: requests name these keys, as many core-system requests may name one file.
  const keys: Array<[string, string]> = [];
  for (const name of SCAN_INPUTS) {
    const key = `inbox/soak-${randomUUID()}/${name}`;
    await deps.s3.send(
      new PutObjectCommand({ Bucket: deps.bucket, Key: key, Body: fs.readFileSync(path.join(deps.fixtures, name)) }),
    );
    keys.push([name, key]);
  }
  await every(everyMs, until, deps.now, deps.sleep, async () => {
    const heard = new Set(deps.seen.map((e) => e.job_id));
    for (const s of sent)
      if (!heard.has(s.job_id) && s.resends < MAX_RESENDS && deps.now() - s.lastSentAt > RESEND_AFTER_MS) {
        s.resends++;
        s.lastSentAt = deps.now();
        deps.recorder.count('scan resend (no ack)');
        deps.nc.publish(deps.requestSubject, requests.get(s.job_id)!);
      }
    const r = deps.random.next();
    if (r < 0.05) {
      deps.recorder.count('scan bad request');
      deps.nc.publish(deps.requestSubject, deps.random.pick(['{"job_id":', '{}', '[1,2]']));
    } else if (r < 0.15 && sent.length) {
      const again = deps.random.pick(sent);
      deps.recorder.count('scan duplicate');
      deps.nc.publish(deps.requestSubject, requests.get(again.job_id)!);
    } else {
      const [name, key] = deps.random.pick(keys);
      const job = randomUUID();
      const request = JSON.stringify({
        schema_version: '1.0',
        job_id: job,
        file_id: randomUUID(),
        attempt: 1,
        pipeline: 'image',
        s3: { bucket: deps.bucket, key },
        original_name: name,
        reply_deadline: new Date(deps.now() + 15 * 60_000).toISOString(),
      });
      requests.set(job, request);
      sent.push({ job_id: job, attempt: 1, sentAt: deps.now(), resends: 0, lastSentAt: deps.now() });
      deps.recorder.count('scan request');
      deps.nc.publish(deps.requestSubject, request);
    }
  });
  return sent;
}

/** Latency of the scan path: request → its first final envelope. */
export function scanLatencies(sent: SentScan[], seen: SeenEnvelope[], recorder: Recorder): void {
  const firstFinal = new Map<string, number>();
  for (const e of seen) if (e.status !== 'processing' && !firstFinal.has(e.job_id)) firstFinal.set(e.job_id, e.at);
  for (const s of sent) {
    const at = firstFinal.get(s.job_id);
    if (at !== undefined) recorder.sample('scan', s.sentAt, at - s.sentAt);
  }
}
