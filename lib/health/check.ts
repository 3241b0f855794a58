import { Clock, systemClock } from '../clock';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import type { NatsConnection } from 'nats';
import { withTimeout } from '../util/timeout';

/**
 * Dependency probes for GET /healthcheck. Each probe proves the thing the
 * service needs (our table, our bucket, a live NATS round trip), not merely
 * that a port answers, and each is bounded by a timeout.
 */

export type Probe = (signal: AbortSignal) => Promise<void>;

/** The components both healthcheck routes report, in the design's names. */
export const COMPONENTS = ['dynamodb', 's3', 'nats', 'hotfolder', 'torrent_client'] as const;
export type CheckStatus = 'ok' | 'down';

export interface HealthReport {
  status: 'ok' | 'degraded';
  version: string;
  uptime_s: number;
  checks: Record<string, CheckStatus>;
  /** Why a check is down, when its probe says it in words meant for the operator (a ProbeProblem). */
  details?: Record<string, string>;
  /** What wakes the scan poller on the hot folder (its change reports or only the poll), as the last poller recorded it. */
  hotfolder_wake?: { mode: 'notify' | 'poll'; recorded_s_ago: number };
  /** The torrent client's disk as the downloads poll last saw it (lib/downloads/disk-guard.ts). */
  disk_space?: {
    free_bytes: number;
    reserve_bytes: number;
    needed_bytes: number;
    held: number;
    recorded_s_ago: number;
  };
}

/** A probe's refusal whose message is safe and useful to show ("credentials refused, next try at …"). */
export class ProbeProblem extends Error {}

export async function runProbes(
  probes: Record<string, Probe>,
  timeoutMs: number,
): Promise<Record<string, CheckStatus>> {
  return (await runProbesWithDetails(probes, timeoutMs)).checks;
}

export async function runProbesWithDetails(
  probes: Record<string, Probe>,
  timeoutMs: number,
): Promise<{ checks: Record<string, CheckStatus>; details: Record<string, string> }> {
  const details: Record<string, string> = {};
  const entries = await Promise.all(
    Object.entries(probes).map(async ([name, probe]): Promise<[string, CheckStatus]> => {
      try {
        await withTimeout(timeoutMs, `${name} probe`, probe);
        return [name, 'ok'];
      } catch (err) {
        // Only a ProbeProblem's words are shown: other errors may carry hosts, paths or secrets.
        if (err instanceof ProbeProblem) details[name] = err.message;
        return [name, 'down'];
      }
    }),
  );
  return { checks: Object.fromEntries(entries), details };
}

export function healthReport(
  checks: Record<string, CheckStatus>,
  version: string,
  uptimeMs: number,
  details: Record<string, string> = {},
): HealthReport {
  return {
    status: Object.values(checks).every((c) => c === 'ok') ? 'ok' : 'degraded',
    version,
    uptime_s: Math.floor(uptimeMs / 1000),
    checks,
    ...(Object.keys(details).length ? { details } : {}),
  };
}

export const dynamodbProbe =
  (client: DynamoDBClient, table: string): Probe =>
  async (signal) => {
    await client.send(new DescribeTableCommand({ TableName: table }), { abortSignal: signal });
  };

export const s3Probe =
  (client: S3Client, bucket: string): Probe =>
  async (signal) => {
    await client.send(new HeadBucketCommand({ Bucket: bucket }), { abortSignal: signal });
  };

export const natsProbe =
  (connection: () => Promise<NatsConnection>): Probe =>
  async () => {
    // flush() is a PING/PONG round trip: it proves the server answers now.
    await (await connection()).flush();
  };

/** Remembers a probe's verdict for `ttlMs`: a slow share is not hammered by every healthcheck. */
export function cachedProbe(probe: Probe, ttlMs: number, now: Clock = systemClock): Probe {
  let last: { at: number; result: Promise<void> } | undefined;
  return (signal) => {
    if (!last || now() - last.at >= ttlMs) {
      const result = probe(signal);
      result.catch(() => undefined);
      last = { at: now(), result };
    }
    return last.result;
  };
}

export const hotFolderProbe =
  (healthy: () => Promise<boolean>): Probe =>
  async () => {
    if (!(await healthy())) throw new Error('hot folder unavailable');
  };
