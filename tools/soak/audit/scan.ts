import type { ScanJob } from '../../../lib/scan/model';
import { rawAnswerKey } from '../../../lib/scan/keys';
import type { SeenEnvelope, SentScan } from '../load/scan';
import { violation, Violation } from './violations';

/**
 * The scan domain's audit, from NATS (the envelopes on the result subject)
 * and the stores (the job table, the raw answers in S3): every request got
 * exactly one final envelope (copies under one Nats-Msg-Id are one), no job
 * is left non-terminal, every raw answer is the job's own and readable.
 */

/** Final envelopes that arrived more than once under the same Nats-Msg-Id (a figure, not a violation). */
export function envelopeCopies(seen: readonly SeenEnvelope[]): number {
  const ids = seen.filter((e) => e.status !== 'processing' && e.msg_id).map((e) => e.msg_id);
  return ids.length - new Set(ids).size;
}
export interface ScanAuditInput {
  sent: SentScan[];
  seen: SeenEnvelope[];
  job(jobId: string): Promise<ScanJob | undefined>;
  /** The body of an object of the files bucket, undefined when there is none. */
  object(key: string): Promise<string | undefined>;
}

export async function auditScan(input: ScanAuditInput): Promise<Violation[]> {
  const out: Violation[] = [];
  const finals = new Map<string, SeenEnvelope[]>();
  for (const e of input.seen)
    if (e.status !== 'processing')
      finals.set(`${e.job_id}#${e.attempt}`, [...(finals.get(`${e.job_id}#${e.attempt}`) ?? []), e]);
  for (const s of input.sent) {
    // A publish retried after a lost flush may arrive twice under one Nats-Msg-Id: one answer to the core system,
    // which drops the copy (the contract's dedup; docs/scan.md). Distinct ids are distinct answers.
    const copies = finals.get(`${s.job_id}#${s.attempt}`) ?? [];
    const mine = copies.filter((e, i) => !e.msg_id || copies.findIndex((c) => c.msg_id === e.msg_id) === i);
    if (mine.length !== 1)
      out.push(
        violation(
          'scan: exactly one final envelope per request',
          `job ${s.job_id} attempt ${s.attempt}: ${mine.length} final envelopes (${mine.map((e) => e.status).join(', ') || 'none'})`,
        ),
      );
    const job = await input.job(s.job_id);
    // The store was down at the request: the gateway answered a clear error and recorded nothing.
    if (!job) {
      if (!(mine.length === 1 && mine[0].status === 'error'))
        out.push(violation('scan: no job left non-terminal', `job ${s.job_id}: no job recorded and no clear error`));
      continue;
    }
    if (job.state !== 'finished' || !job.published)
      out.push(
        violation('scan: no job left non-terminal', `job ${s.job_id}: ${job.state}, published ${job.published}`),
      );
    const raw = job.result?.raw_s3_key;
    if (raw !== undefined && raw !== null) {
      const body = raw === rawAnswerKey(s.job_id) ? await input.object(raw) : undefined;
      if (body === undefined || !isJson(body))
        out.push(
          violation(
            'scan: raw answer in S3 matches its job',
            `job ${s.job_id}: raw answer ${raw} missing, foreign or unreadable`,
          ),
        );
    }
    if (mine.length === 1 && job.result && mine[0].status !== job.result.status)
      out.push(
        violation(
          'scan: raw answer in S3 matches its job',
          `job ${s.job_id}: envelope ${mine[0].status}, stored ${job.result.status}`,
        ),
      );
  }
  return out;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
