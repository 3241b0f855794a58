import { insideFault, FaultWindow, ServerError } from '../metrics';
import { violation, Violation } from './violations';

/**
 * The stack's audit: no service died except where the chaos schedule killed
 * it, no unhandled rejection in any log, and every 5xx (or missing answer)
 * the load saw fell inside a fault window or its recovery.
 */
export interface StackAuditInput {
  deaths: Array<{ at: number; line: string }>;
  fatal?: string;
  windows: FaultWindow[];
  logs: Map<string, string>;
  serverErrors: ServerError[];
  /** Slack after a window's end for answers already in flight when it ended. */
  graceMs?: number;
}

const UNHANDLED = /unhandled ?rejection|UnhandledPromiseRejection/i;

export function auditStack(input: StackAuditInput): Violation[] {
  const out: Violation[] = [];
  if (input.fatal) out.push(violation('stack: no process crashed', `the stack stopped itself: ${input.fatal}`));
  const kills = input.windows.filter((w) => w.kind === 'kill');
  for (const d of input.deaths) {
    const killed = kills.some((w) => d.line.startsWith(`${w.target} `) && d.at >= w.start && d.at <= w.end + 5000);
    if (!killed) out.push(violation('stack: no process crashed', d.line));
  }
  for (const [file, text] of input.logs)
    for (const line of text.split('\n'))
      if (UNHANDLED.test(line))
        out.push(violation('stack: no unhandled rejection in the logs', `${file}: ${line.slice(0, 300)}`));
  // A call that began up to its timeout (30 s) before a fault can end in it: shift the window back by that much.
  const reach = input.windows.map((w) => ({ ...w, start: w.start - 30_000 }));
  for (const e of input.serverErrors)
    if (!insideFault(e.at, reach, input.graceMs ?? 35_000))
      out.push(
        violation(
          'stack: 5xx only inside fault windows',
          `${e.what} answered ${e.status || 'nothing'} at ${new Date(e.at).toISOString()}`,
        ),
      );
  return out;
}
