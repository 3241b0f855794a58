import type { Random } from './args';
import type { FaultWindow } from './metrics';

/**
 * The chaos schedule: one fault at a time, a quiet gap between two, every
 * window recorded (kind, target, start, end) with the time the service took
 * to answer its probes again after it. Framework-free: the faults, the clock,
 * the sleep and the probe are injected (tools/soak/faults.ts makes the real ones).
 */

export interface FaultAction {
  /** stop (SIGSTOP … SIGCONT), kill (SIGKILL, the supervisor restarts it), 429, 5xx, slow … */
  kind: string;
  target: string;
  begin(): Promise<void>;
  /** Ends the fault; resolves when it is over (a killed service: when the supervisor has it running again). */
  end(): Promise<void>;
}

export interface ChaosTiming {
  faultMs: [number, number];
  gapMs: [number, number];
  /** How long the service may take to answer its probes after a fault before the window is marked unrecovered. */
  recoveryTimeoutMs: number;
}

export const DEFAULT_TIMING: ChaosTiming = {
  faultMs: [10_000, 30_000],
  gapMs: [20_000, 40_000],
  recoveryTimeoutMs: 180_000,
};

export interface ChaosDeps {
  actions: FaultAction[];
  random: Random;
  now: () => number;
  sleep(ms: number): Promise<void>;
  /** True when the service answers as usual (its probes: deep health, a NATS round trip). */
  healthy(): Promise<boolean>;
  say(line: string): void;
}

/** Runs faults until the deadline (none starts unless it can end by then); every window is pushed to `windows` as it opens. */
export async function runChaos(
  deps: ChaosDeps,
  deadline: { until: number },
  timing: ChaosTiming = DEFAULT_TIMING,
  windows: FaultWindow[] = [],
): Promise<FaultWindow[]> {
  let queue: FaultAction[] = [];
  for (;;) {
    const gap = deps.random.int(...timing.gapMs);
    const length = deps.random.int(...timing.faultMs);
    if (deps.now() + gap + length > deadline.until) break;
    await deps.sleep(gap);
    // Every kind comes round before any repeats: a short run still sees several kinds.
    if (!queue.length) queue = shuffle(deps.actions, deps.random);
    const action = queue.shift()!;
    const window: FaultWindow = { kind: action.kind, target: action.target, start: deps.now(), end: 0 };
    windows.push(window);
    deps.say(`fault: ${action.kind} ${action.target} for ${Math.round(length / 1000)} s`);
    try {
      await action.begin();
      await deps.sleep(length);
    } finally {
      await action.end().catch((err) => deps.say(`fault end failed: ${action.kind} ${action.target}: ${String(err)}`));
      window.end = deps.now();
    }
    window.recoveredAt = await recovery(deps, timing.recoveryTimeoutMs);
    deps.say(
      `fault over: ${action.kind} ${action.target}; ${window.recoveredAt === undefined ? 'NOT recovered' : `recovered in ${((window.recoveredAt - window.end) / 1000).toFixed(1)} s`}`,
    );
  }
  return windows;
}

async function recovery(deps: ChaosDeps, timeoutMs: number): Promise<number | undefined> {
  const deadline = deps.now() + timeoutMs;
  while (deps.now() <= deadline) {
    if (await deps.healthy().catch(() => false)) return deps.now();
    await deps.sleep(500);
  }
  return undefined;
}

function shuffle<T>(items: readonly T[], random: Random): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = random.int(0, i);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
