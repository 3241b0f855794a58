import type { AnswerFile } from './hotfolder';

/** The raw answer of a job: every file of the set, each parsed on its own, sorted by name. */
export interface MergedFile {
  name: string;
  response: unknown | null;
  parse_error: string | null;
}

export interface Merged {
  job_id: string;
  files: MergedFile[];
}

export async function mergeAnswers(jobId: string, files: AnswerFile[]): Promise<Merged> {
  const merged: MergedFile[] = [];
  for (const file of [...files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const text = (await file.read()).toString('utf8');
    try {
      merged.push({ name: file.name, response: JSON.parse(text), parse_error: null });
    } catch (err) {
      merged.push({ name: file.name, response: null, parse_error: (err as Error).message });
    }
  }
  return { job_id: jobId, files: merged };
}
