/**
 * Progress of a long CLI run: a redrawn bar on a terminal, plain lines (every
 * few seconds) when the output is a file or a pipe, so logs stay readable.
 */

import { Clock, systemClock } from '../../lib/clock';

export interface ProgressOutput {
  write(text: string): unknown;
  isTTY?: boolean;
}

export function progressText(done: number, total: number, elapsedMs: number, unit = 'rows'): string {
  const rate = elapsedMs > 0 ? (done * 1000) / elapsedMs : 0;
  const percent = total > 0 ? Math.floor((done * 100) / total) : 100;
  const eta =
    rate > 0 && total > done ? `ETA ${formatSeconds((total - done) / rate)}` : total > done ? 'ETA ?' : 'done';
  return `${done}/${total} ${unit} ${String(percent).padStart(3)}%  ${rate.toFixed(0)} ${unit}/s  ${eta}`;
}

export function progressBar(done: number, total: number, width = 24): string {
  const filled = total > 0 ? Math.min(width, Math.floor((done * width) / total)) : width;
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
}

function formatSeconds(s: number): string {
  if (s < 60) return `${Math.ceil(s)} s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m} min ${Math.ceil(s - m * 60)} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

export function progressReporter(
  out: ProgressOutput,
  total: number,
  clock: Clock = systemClock,
  lineEveryMs = 5000,
  unit = 'rows',
) {
  const began = clock();
  let shown = began;
  const tty = out.isTTY === true;
  return {
    tick(done: number): void {
      const now = clock();
      if (tty && (now - shown >= 100 || done === total)) {
        shown = now;
        out.write(`\r${progressBar(done, total)} ${progressText(done, total, now - began, unit)}\x1b[K`);
      } else if (!tty && now - shown >= lineEveryMs) {
        shown = now;
        out.write(`${progressText(done, total, now - began, unit)}\n`);
      }
    },
    end(done: number): void {
      const text = progressText(done, total, clock() - began, unit);
      out.write(tty ? `\r${progressBar(done, total)} ${text}\x1b[K\n` : `${text}\n`);
    },
  };
}
