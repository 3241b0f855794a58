import { Env, EnvReader } from '../config/env';
import { AnswerBounds, DEFAULT_ANSWER_BOUNDS, MAX_ANSWER_SET_BYTES } from './merge';
import type { SmbShare } from './smb-hotfolder';

/** The scan gateway's settings (scan functions only; lib/scan/README.md). Durations are seconds, fractions allowed. */
export type HotFolderConfig = { kind: 'local'; root: string } | ({ kind: 'smb' } & SmbShare);

export interface ScanConfig {
  resultSubject: string;
  hotFolder: HotFolderConfig;
  dirs: { input: string; output: string; tmp: string };
  maxInflight: number;
  settleMs: number;
  timeoutMs: number;
  pollEveryMs: number;
  publishRetries: number;
  /** The poller's Lambda function, started by a request that finds none running ('' = the schedule alone polls). */
  pollFunction: string;
  normalizer: 'content-ai' | 'null';
  confidenceThreshold: number;
  /** What of an answer set is read at most (SCAN_MAX_ANSWER_*): a set over it ends its job refused. */
  answerBounds: AnswerBounds;
}

const DIR = /^[A-Za-z0-9][A-Za-z0-9 _-]{0,63}$/;

export function loadScanConfig(env: Env = process.env): ScanConfig {
  const r = new EnvReader(env);
  // The contract's slice 0: a recognised file is NOT_IMPLEMENTED until normalisation is specified (decision 295).
  const normalizer = r.string('SCAN_NORMALIZER', {
    default: 'null',
    pattern: /^(content-ai|null)$/,
    hint: 'content-ai or null',
  });
  const threshold = r.int('SCAN_CONFIDENCE_PERCENT', { default: 80, min: 0, max: 100 });
  const config: ScanConfig = {
    resultSubject: r.string('SCAN_RESULT_SUBJECT', {
      default: 'scan.results',
      pattern: /^[^\s.*>]+(\.[^\s.*>]+)*$/,
      hint: 'a NATS subject without wildcards',
    }),
    hotFolder: hotFolderConfig(r),
    dirs: hotFolderDirs(r),
    maxInflight: r.int('SCAN_MAX_INFLIGHT', { default: 4, min: 1, max: 1000 }),
    settleMs: r.seconds('SCAN_SETTLE_SECONDS', { default: 2, min: 0, max: 3600 }),
    timeoutMs: r.seconds('SCAN_TIMEOUT_SECONDS', { default: 300, min: 0.1, max: 86400 }),
    // The designed 5 s: a pass also wakes early when an answer lands or a settle window ends.
    pollEveryMs: r.seconds('SCAN_POLL_SECONDS', { default: 5, min: 0.05, max: 60 }),
    publishRetries: r.int('PUBLISH_RETRIES', { default: 3, min: 0, max: 10 }),
    pollFunction: r.string('SCAN_POLL_FUNCTION', {
      default: '',
      pattern: /^[A-Za-z0-9_-]{0,140}$/,
      hint: 'a Lambda function name',
    }),
    normalizer: normalizer as ScanConfig['normalizer'],
    confidenceThreshold: threshold / 100,
    answerBounds: answerBounds(r),
  };
  r.done();
  return config;
}

/**
 * The answer set's bounds (decision 391). The set is parsed and held whole while it is merged (the normaliser
 * needs every file), next to its raw form on the way to S3: no setting may go past MAX_ANSWER_SET_BYTES.
 */
function answerBounds(r: EnvReader): AnswerBounds {
  const d = DEFAULT_ANSWER_BOUNDS;
  const setBytes = r.int('SCAN_MAX_ANSWER_SET_BYTES', { default: d.setBytes, min: 1024, max: MAX_ANSWER_SET_BYTES });
  const fileBytes = r.int('SCAN_MAX_ANSWER_BYTES', { default: d.fileBytes, min: 1024, max: MAX_ANSWER_SET_BYTES });
  if (fileBytes > setBytes) r.refuse('SCAN_MAX_ANSWER_BYTES', `is more than SCAN_MAX_ANSWER_SET_BYTES (${setBytes})`);
  return { fileBytes, setBytes, files: r.int('SCAN_MAX_ANSWER_FILES', { default: d.files, min: 1, max: 1000 }) };
}

/** The folder names inside the hot folder (shared by the gateway and the scanner emulator). */
export function hotFolderDirs(r: EnvReader): ScanConfig['dirs'] {
  return {
    input: r.string('SCAN_INPUT_DIR', { default: 'Input', pattern: DIR, hint: 'a folder name' }),
    output: r.string('SCAN_OUTPUT_DIR', { default: 'Output', pattern: DIR, hint: 'a folder name' }),
    tmp: r.string('SCAN_TMP_DIR', { default: 'Tmp', pattern: DIR, hint: 'a folder name' }),
  };
}

const SMB_VARIABLES = ['SCAN_SMB_SHARE', 'SCAN_SMB_USER', 'SCAN_SMB_PASSWORD'];

/** `//host/share[/dir…]` or the UNC form `\\host\share[\dir…]`: a host, a share, and an optional folder inside it. */
const SMB_PATH = /^(?:\/\/|\\\\)([A-Za-z0-9.-]+)[/\\]([^/\\]+)((?:[/\\][^/\\]+)*)[/\\]?$/;

/**
 * The contract's settings: SCAN_HOTFOLDER_MODE (`local | smb`) and
 * SCAN_HOTFOLDER_PATH (the local folder, or the share path). The names the
 * project used first stay as aliases: SCAN_HOTFOLDER_ROOT for a local path,
 * SCAN_SMB_SHARE for a share (decision 296). Without a mode, a share path (or
 * SCAN_SMB_SHARE) means smb. A path given under both names must be the same.
 */
function hotFolderMode(r: EnvReader): { mode: 'local' | 'smb'; pathVariable: string } {
  const pathGiven = r.has('SCAN_HOTFOLDER_PATH');
  const mode = r.has('SCAN_HOTFOLDER_MODE')
    ? (r.string('SCAN_HOTFOLDER_MODE', { pattern: /^(local|smb)$/, hint: 'local or smb' }) as 'local' | 'smb')
    : r.has('SCAN_SMB_SHARE') || (pathGiven && /^(?:\/\/|\\\\)/.test(r.string('SCAN_HOTFOLDER_PATH')))
      ? 'smb'
      : 'local';
  const [alias, other] =
    mode === 'smb' ? ['SCAN_SMB_SHARE', 'SCAN_HOTFOLDER_ROOT'] : ['SCAN_HOTFOLDER_ROOT', 'SCAN_SMB_SHARE'];
  if (r.has('SCAN_HOTFOLDER_MODE') && r.has(other)) r.refuse(other, `is set with SCAN_HOTFOLDER_MODE=${mode}`);
  if (pathGiven && r.has(alias) && r.string(alias) !== r.string('SCAN_HOTFOLDER_PATH'))
    r.refuse(alias, 'differs from SCAN_HOTFOLDER_PATH (the same setting under its older name): give one');
  return { mode, pathVariable: pathGiven ? 'SCAN_HOTFOLDER_PATH' : alias };
}

/**
 * A local folder, or an SMB share: the share path may name a folder inside
 * the share (the hot folder's root there); SCAN_SMB_USER with
 * SCAN_SMB_PASSWORD, or neither for a guest share.
 */
function hotFolderConfig(r: EnvReader): HotFolderConfig {
  const { mode, pathVariable } = hotFolderMode(r);
  if (mode === 'local') {
    for (const name of SMB_VARIABLES.filter((n) => n !== 'SCAN_SMB_SHARE' && r.has(n)))
      r.refuse(name, 'is set without an SMB hot folder (SCAN_HOTFOLDER_MODE=smb, the share it logs in to)');
    // `//host/share` is a share's path, not a local one: with mode local it is a mistake to name.
    const root = r.string(pathVariable, { pattern: /^\/(?!\/)/, hint: 'an absolute path (not //host/share)' });
    return { kind: 'local', root };
  }
  const share = r.string(pathVariable, {
    pattern: SMB_PATH,
    hint: '//host/share[/folder…] or \\\\host\\share[\\folder…]',
  });
  const [, host = '', name = '', rest = ''] = SMB_PATH.exec(share) ?? [];
  const dir = rest.split(/[/\\]/).filter(Boolean);
  if (dir.some((segment) => segment === '.' || segment === '..' || /["\u0000-\u001f*?<>|:]/.test(segment)))
    r.refuse(pathVariable, 'has a folder part with `.`/`..` or a character a share path cannot hold');
  const port = r.int('SCAN_SMB_PORT', { default: 445, min: 1, max: 65535 });
  if (r.has('SCAN_SMB_PASSWORD') && !r.has('SCAN_SMB_USER'))
    r.refuse('SCAN_SMB_USER', 'is required with SCAN_SMB_PASSWORD (leave both unset for a guest share)');
  const login = r.has('SCAN_SMB_USER')
    ? { user: r.string('SCAN_SMB_USER'), password: r.string('SCAN_SMB_PASSWORD', { default: '', secret: true }) }
    : {};
  return { kind: 'smb', host, port, share: name, ...(dir.length ? { dir: dir.join('/') } : {}), ...login };
}
