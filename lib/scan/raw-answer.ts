import { rawAnswerKey } from './keys';
import type { ScanFiles, ScanJobStore } from './store';

/**
 * A job's raw answer set as the gateway stored it, for the operator console.
 * Only the key the gateway writes (`raw/<job_id>.json`) is read: a stored
 * result naming any other key is not served. Undefined when there is none.
 */
export async function rawAnswerOf(
  deps: { jobs: Pick<ScanJobStore, 'get'>; files: Pick<ScanFiles, 'read'>; bucket: string },
  jobId: string,
): Promise<string | undefined> {
  const job = await deps.jobs.get(jobId);
  const key = rawAnswerKey(jobId);
  if (!job || job.result?.raw_s3_key !== key) return undefined;
  return (await deps.files.read(deps.bucket, key)).toString('utf8');
}
