import type { RunningService } from '../stack/process';
import type { FaultAction } from './chaos';

/**
 * The real faults of the soak, on the stack `npm start` runs: a process
 * group stopped (SIGSTOP, then SIGCONT) or killed (SIGKILL; the stack's
 * supervisor restarts it on the same port), the Telegram emulator answering
 * 429s or 5xx, the T-Bank emulator in a 429 storm, 5xx or slow.
 * DynamoDB Local runs in memory: it is stopped, never killed (the supervisor
 * does not restart it: it would come back empty, tools/stack/stack.ts).
 */

export const FAULT_KINDS = [
  'stop',
  'kill',
  'telegram-429',
  'telegram-5xx',
  'tbank-storm',
  'tbank-5xx',
  'tbank-slow',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

// smbd runs when the hot folder is a share (--hotfolder smb); a fault of a service not running is not scheduled.
const STOPPABLE = ['dynamodb-local', 'nats-server', 's3rver', 'qbittorrent-nox', 'smbd', 'serverless-offline'];
const KILLABLE = ['nats-server', 's3rver', 'qbittorrent-nox', 'smbd', 'serverless-offline'];

export interface FaultTargets {
  services: RunningService[];
  telegramUrl?: string;
  chats: number[];
  brokerageUrl?: string;
  /** Which kinds to schedule (all by default); the CI run picks a few quick ones. */
  kinds?: readonly FaultKind[];
  /** Which services may be stopped (STOPPABLE by default). */
  stoppable?: readonly string[];
  /** Which services may be killed (KILLABLE by default; serverless-offline's restart rebuilds every bundle). */
  killable?: readonly string[];
  sleep(ms: number): Promise<void>;
}

export function faultActions(t: FaultTargets): FaultAction[] {
  const kinds = new Set(t.kinds ?? FAULT_KINDS);
  const actions: FaultAction[] = [];
  const byName = (name: string) => t.services.find((s) => s.name === name);
  for (const name of t.stoppable ?? STOPPABLE) {
    const service = byName(name);
    if (service && kinds.has('stop')) actions.push(stopAction(service));
  }
  for (const name of t.killable ?? KILLABLE) {
    const service = byName(name);
    if (service && kinds.has('kill') && name !== 'dynamodb-local') actions.push(killAction(service, t.sleep));
  }
  if (t.telegramUrl) {
    const url = t.telegramUrl;
    for (const [kind, fault] of [
      ['telegram-429', '429'],
      ['telegram-5xx', '500'],
    ] as const)
      if (kinds.has(kind))
        actions.push({
          kind,
          target: 'telegram-emulator',
          // Every send to every chat fails until the end (the count outlasts any window); DELETE clears them.
          begin: async () => {
            for (const chat of t.chats)
              await control(url, 'PUT', { chat_id: chat, fault, count: 10_000, retry_after: 2 });
          },
          end: () => control(url, 'DELETE'),
        });
  }
  if (t.brokerageUrl) {
    const url = t.brokerageUrl;
    const modes: Array<[FaultKind, Record<string, unknown>]> = [
      ['tbank-storm', { '*': { storm: true } }],
      ['tbank-5xx', { '*': { error: 70001 } }],
      ['tbank-slow', { '*': { latencyMs: 4000 } }],
    ];
    for (const [kind, faults] of modes)
      if (kinds.has(kind))
        actions.push({
          kind,
          target: 'brokerage-emulator',
          begin: () => control(`${url}`, 'PUT', faults),
          end: () => control(`${url}`, 'DELETE'),
        });
  }
  return actions;
}

function stopAction(service: RunningService): FaultAction {
  let pid = 0;
  return {
    kind: 'stop',
    target: service.name,
    begin: async () => {
      pid = service.pid;
      signal(pid, 'SIGSTOP');
    },
    end: async () => void signal(pid, 'SIGCONT'),
  };
}

function killAction(service: RunningService, sleep: (ms: number) => Promise<void>): FaultAction {
  let pid = 0;
  return {
    kind: 'kill',
    target: service.name,
    begin: async () => {
      pid = service.pid;
      signal(pid, 'SIGKILL');
    },
    // Over when the supervisor has a new process of it running and ready (its pid changes only then).
    end: async () => {
      for (const until = Date.now() + 240_000; service.pid === pid;) {
        if (Date.now() > until) throw new Error(`${service.name} was not restarted within 240 s`);
        await sleep(250);
      }
    },
  };
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    // Gone already: the supervisor reports it.
  }
}

async function control(base: string, method: string, body?: unknown): Promise<void> {
  const path = base.includes('/emulator/') ? '' : '/emulator/faults';
  const res = await fetch(`${base}${path}`, {
    method,
    body: body === undefined ? undefined : JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
    signal: AbortSignal.timeout(10_000),
  });
  if (!res.ok) throw new Error(`${method} ${base}${path} answered ${res.status}`);
}
