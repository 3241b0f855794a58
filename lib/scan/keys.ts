/**
 * Key design of the scan table (one place).
 *
 * item    PK              SK       GSI1 (KEYS_ONLY)
 * job     JOB#<job_id>    META     STATE#<queued|starting|submitted|unpublished> / <created_at>#<job_id>
 * slots   SLOTS           GLOBAL   -
 *
 * Access patterns: dedup a request (conditional put of the job); the jobs in
 * a state, oldest first (GSI1; a finished and published job leaves the index);
 * the in-flight counter (one item, conditional ADD).
 */
export const jobKey = (jobId: string) => ({ PK: `JOB#${jobId}`, SK: 'META' });
export const SLOTS_KEY = { PK: 'SLOTS', SK: 'GLOBAL' };
export const STATE_INDEX = 'GSI1';
export const stateIndexKeys = (state: string, createdAt: number, jobId: string) => ({
  GSI1PK: `STATE#${state}`,
  GSI1SK: `${String(createdAt).padStart(15, '0')}#${jobId}`,
});
