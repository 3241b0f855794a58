import fs from 'node:fs';
import { MetricPoint, parseEmfLine } from './emf';

/**
 * The metrics as CloudWatch would hold them, read back locally from the same
 * EMF lines the functions wrote: the local stack sends every function's
 * stdout to serverless offline's log and names it in LOCAL_METRICS_LOG
 * (tools/stack/stack.ts). The console (lib/web/console-metrics.ts) draws
 * them, so a developer sees what an alarm would see, from the lines an alarm
 * would be fed. On AWS the variable is unset and nothing is read here: the
 * figures are in CloudWatch (the dashboard). docs/decisions.md, 273.
 *
 * The file is tailed: each read parses only what was appended since the last
 * (a container keeps its reader), at most MAX_READ_BYTES of it, and keeps the
 * points of the last KEEP_MS, at most MAX_POINTS.
 */

export const LOCAL_METRICS_VARIABLE = 'LOCAL_METRICS_LOG';
const MAX_READ_BYTES = 32 * 1024 * 1024;
const KEEP_MS = 25 * 3600_000;
const MAX_POINTS = 200_000;

export class LogFileMetrics {
  private offset = 0;
  private partial = '';
  private kept: MetricPoint[] = [];

  constructor(
    readonly file: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** The points of the last KEEP_MS, oldest first; none when the file is missing. */
  read(): MetricPoint[] {
    let size: number;
    try {
      size = fs.statSync(this.file).size;
    } catch {
      return [];
    }
    // A new file (a restarted stack) starts again from its beginning.
    if (size < this.offset) this.reset();
    if (size > this.offset) this.consume(size);
    const since = this.now() - KEEP_MS;
    if (this.kept.length > MAX_POINTS || (this.kept[0] && this.kept[0].timestamp < since))
      this.kept = this.kept.filter((p) => p.timestamp >= since).slice(-MAX_POINTS);
    return this.kept;
  }

  private reset() {
    this.offset = 0;
    this.partial = '';
    this.kept = [];
  }

  private consume(size: number) {
    // Far behind (the first read of a long session's log): only the last MAX_READ_BYTES, from a whole line.
    const skipped = size - this.offset > MAX_READ_BYTES;
    const from = skipped ? size - MAX_READ_BYTES : this.offset;
    if (skipped) this.partial = '';
    const fd = fs.openSync(this.file, 'r');
    try {
      const buffer = Buffer.alloc(size - from);
      const read = fs.readSync(fd, buffer, 0, buffer.length, from);
      this.offset = from + read;
      const lines = (this.partial + buffer.subarray(0, read).toString('utf8')).split('\n');
      this.partial = lines.pop() ?? '';
      if (skipped) lines.shift();
      for (const line of lines) if (line.includes('"_aws"')) this.kept.push(...parseEmfLine(line));
    } finally {
      fs.closeSync(fd);
    }
  }
}

let reader: LogFileMetrics | undefined;

/** The local stack's reader (one per container), or undefined where no local log is named (AWS). */
export function localMetrics(env: NodeJS.ProcessEnv = process.env): LogFileMetrics | undefined {
  const file = env[LOCAL_METRICS_VARIABLE]?.trim();
  if (!file) return undefined;
  if (reader?.file !== file) reader = new LogFileMetrics(file);
  return reader;
}
