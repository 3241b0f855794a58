import { isoTime } from '../../../lib/clock';
import { ConfigError } from '../../../lib/config/errors';
import { InvalidTransitionError } from '../../../lib/downloads/errors';
import { planActivate, planFailTimedOut, planKeepWaiting, planWarn } from '../../../lib/downloads/guards';
import { guardKey } from '../../../lib/downloads/keys';
import {
  DEFAULT_LIFECYCLE,
  effectiveTimeout,
  judgeTimeout,
  loadLifecycleSettings,
  madeProgress,
  MAX_TIMEOUT_S,
  phaseOf,
} from '../../../lib/downloads/lifecycle';
import { parseIngest } from '../../../lib/downloads/requests';
import { Download, toDto } from '../../../lib/downloads/model';

/**
 * The rules by which a download that does not move ends (lib/downloads/lifecycle.ts), on plain values with
 * an injected `now`; and the store's plans that carry the verdicts out (lib/downloads/guards.ts).
 */

const T0 = Date.parse('2026-12-07T10:00:00.000Z');
const at = (s: number) => isoTime(T0 + s * 1000);
const SETTINGS = { metadataTimeoutS: 3600, stallTimeoutS: 21600, graceS: 3600 };
const H = 'a'.repeat(40);

function download(over: Partial<Download> = {}): Download {
  return {
    id: '01m8vmvjn4ja6w8rp8pdhdjykt',
    state: 'downloading',
    name: 'x',
    infohashes: [{ infohash: H, kind: 'v1' }],
    created_at: at(0),
    updated_at: at(0),
    progress_at: at(0),
    revision: 3,
    ...over,
  };
}

describe('judgeTimeout', () => {
  it('warns a magnet without metadata exactly at the timeout, not a millisecond before', () => {
    const d = download();
    expect(judgeTimeout(d, 'metaDL', SETTINGS, T0 + 3600_000 - 1)).toEqual({ action: 'none' });
    expect(judgeTimeout(d, 'metaDL', SETTINGS, T0 + 3600_000)).toEqual({
      action: 'warn',
      reason: 'no_metadata',
      basis: at(0),
    });
    expect(judgeTimeout(d, 'forcedMetaDL', SETTINGS, T0 + 3600_000)).toMatchObject({ reason: 'no_metadata' });
  });

  it('stalledDL and downloading count against the stall clock; the metadata timeout does not apply to them', () => {
    for (const state of ['stalledDL', 'downloading', 'forcedDL', 'allocating']) {
      expect(judgeTimeout(download(), state, SETTINGS, T0 + 3600_000)).toEqual({ action: 'none' });
      expect(judgeTimeout(download(), state, SETTINGS, T0 + 21600_000)).toMatchObject({
        action: 'warn',
        reason: 'stalled',
      });
    }
  });

  it('paused, stopped, queued, checking, moving, error and finished states never count, however old the clock', () => {
    const year = T0 + 365 * 86400_000;
    for (const state of [
      'pausedDL',
      'stoppedDL',
      'queuedDL',
      'checkingResumeData',
      'checkingDL',
      'checkingUP',
      'moving',
      'error',
      'missingFiles',
      'uploading',
      'stalledUP',
      'unknown',
      '__proto__',
      'constructor',
    ]) {
      expect([state, judgeTimeout(download(), state, SETTINGS, year)]).toEqual([state, { action: 'none' }]);
      // A warning standing on a download that is now paused is cleared.
      const warned = download({ warning: 'stalled', warned_at: at(0) });
      expect([state, judgeTimeout(warned, state, SETTINGS, year)]).toEqual([state, { action: 'clear' }]);
    }
  });

  it('our own non-downloading states are exempt whatever the client says', () => {
    for (const state of ['queued', 'paused', 'stuck'] as const)
      expect(judgeTimeout(download({ state }), 'stalledDL', SETTINGS, T0 + 10 * 86400_000)).toEqual({ action: 'none' });
  });

  it('0 = never: a timeout of 0 (setting or per download) never warns, and clears a warning', () => {
    const never = { ...SETTINGS, metadataTimeoutS: 0, stallTimeoutS: 0 };
    const late = T0 + MAX_TIMEOUT_S * 1000 * 10;
    expect(judgeTimeout(download(), 'metaDL', never, late)).toEqual({ action: 'none' });
    expect(judgeTimeout(download(), 'stalledDL', never, late)).toEqual({ action: 'none' });
    expect(judgeTimeout(download({ metadata_timeout_s: 0 }), 'metaDL', SETTINGS, late)).toEqual({ action: 'none' });
    expect(judgeTimeout(download({ stall_timeout_s: 0 }), 'stalledDL', SETTINGS, late)).toEqual({ action: 'none' });
    expect(
      judgeTimeout(download({ stall_timeout_s: 0, warning: 'stalled', warned_at: at(0) }), 'stalledDL', SETTINGS, late),
    ).toEqual({
      action: 'clear',
    });
  });

  it('a per-download override wins over the setting, both ways', () => {
    expect(judgeTimeout(download({ metadata_timeout_s: 60 }), 'metaDL', SETTINGS, T0 + 60_000)).toMatchObject({
      action: 'warn',
    });
    expect(judgeTimeout(download({ stall_timeout_s: 86400 }), 'stalledDL', SETTINGS, T0 + 21600_000)).toEqual({
      action: 'none',
    });
  });

  it('hostile stored overrides fall back to the setting: negative, float, huge, NaN, strings, objects', () => {
    for (const bad of [-1, 1.5, MAX_TIMEOUT_S + 1, Number.MAX_SAFE_INTEGER, NaN, Infinity, '60', null, {}, []]) {
      const d = download({ metadata_timeout_s: bad as never, stall_timeout_s: bad as never });
      expect([bad, judgeTimeout(d, 'metaDL', SETTINGS, T0 + 3600_000 - 1)]).toEqual([bad, { action: 'none' }]);
      expect([bad, judgeTimeout(d, 'metaDL', SETTINGS, T0 + 3600_000).action]).toEqual([bad, 'warn']);
    }
    expect(effectiveTimeout(MAX_TIMEOUT_S, 1)).toBe(MAX_TIMEOUT_S);
    expect(effectiveTimeout(0, 1)).toBe(0);
  });

  it('after the warning, fails exactly at the grace with the warning it read; a different phase clears it', () => {
    const warned = download({ warning: 'no_metadata', warned_at: at(3600) });
    expect(judgeTimeout(warned, 'metaDL', SETTINGS, T0 + 7200_000 - 1)).toEqual({ action: 'none' });
    expect(judgeTimeout(warned, 'metaDL', SETTINGS, T0 + 7200_000)).toEqual({
      action: 'fail',
      reason: 'no_metadata',
      warnedAt: at(3600),
    });
    // The metadata arrived: a no_metadata warning does not fail a transfer.
    expect(judgeTimeout(warned, 'downloading', SETTINGS, T0 + 7200_000)).toEqual({ action: 'clear' });
  });

  it('an unreadable clock or warning time never ends a download', () => {
    for (const bad of ['yesterday', '2026-02-30T00:00:00.000Z', '', '2026-12-07T10:00:00+01:00']) {
      expect(judgeTimeout(download({ progress_at: bad }), 'metaDL', SETTINGS, T0 + 1e12)).toEqual({ action: 'none' });
      expect(judgeTimeout(download({ warning: 'stalled', warned_at: bad }), 'stalledDL', SETTINGS, T0 + 1e12)).toEqual({
        action: 'none',
      });
    }
  });

  it('counts from created_at when no progress was ever recorded (rows older than the clock)', () => {
    const old = download({ progress_at: undefined, created_at: at(-3600) });
    expect(judgeTimeout(old, 'metaDL', SETTINGS, T0)).toEqual({
      action: 'warn',
      reason: 'no_metadata',
      basis: at(-3600),
    });
  });
});

describe('madeProgress and phaseOf', () => {
  it('bytes done grew, metadata arrived, or out of a pause/queue into transfer; nothing else', () => {
    const d = download({ progress: 0.5, metadata_at: at(0) });
    expect(madeProgress(d, 'downloading', 0.5)).toEqual({ progressed: false, metadataArrived: false });
    expect(madeProgress(d, 'downloading', 0.50001)).toEqual({ progressed: true, metadataArrived: false });
    // A recheck that lowered the progress is no progress.
    expect(madeProgress(d, 'downloading', 0.4)).toEqual({ progressed: false, metadataArrived: false });
    expect(madeProgress(download(), 'metaDL', 0)).toEqual({ progressed: false, metadataArrived: false });
    expect(madeProgress(download(), 'stalledDL', 0)).toEqual({ progressed: true, metadataArrived: true });
    // Paused in the client: its metadata is not known from that state.
    expect(madeProgress(download(), 'pausedDL', 0)).toEqual({ progressed: false, metadataArrived: false });
    expect(madeProgress(download({ state: 'paused', metadata_at: at(0) }), 'stalledDL', 0).progressed).toBe(true);
    expect(madeProgress(download({ state: 'queued', metadata_at: at(0) }), 'pausedDL', 0).progressed).toBe(false);
  });

  it('phases', () => {
    expect(['metaDL', 'stalledDL', 'pausedDL', 'checkingResumeData', 'hasOwnProperty'].map(phaseOf)).toEqual([
      'metadata',
      'transfer',
      'exempt',
      'exempt',
      'exempt',
    ]);
  });
});

describe('the plans', () => {
  it('planWarn writes the warning only on an unwarned active download whose clock is still the basis', () => {
    const d = download();
    const planned = planWarn(d, 'stalled', at(0), at(99));
    expect('next' in planned && planned.next).toMatchObject({ warning: 'stalled', warned_at: at(99), revision: 4 });
    expect('write' in planned && planned.write.writes).toEqual([expect.objectContaining({ when: { revisionIs: 3 } })]);
    // Progress written meanwhile, already warned, or no longer active: nothing.
    expect(planWarn(download({ progress_at: at(50) }), 'stalled', at(0), at(99))).toEqual({
      unchanged: expect.anything(),
    });
    expect(planWarn(download({ warning: 'stalled', warned_at: at(1) }), 'stalled', at(0), at(99))).toHaveProperty(
      'unchanged',
    );
    expect(planWarn(download({ state: 'failed' }), 'stalled', at(0), at(99))).toHaveProperty('unchanged');
  });

  it('planKeepWaiting restarts the clock once: a second press on the result writes nothing', () => {
    const first = planKeepWaiting(download({ warning: 'no_metadata', warned_at: at(3600) }), at(4000));
    if (!('next' in first)) throw new Error('expected a write');
    expect(first.next).toMatchObject({ progress_at: at(4000), revision: 4 });
    expect(first.next.warning).toBeUndefined();
    expect(first.next.warned_at).toBeUndefined();
    expect(planKeepWaiting(first.next, at(4001))).toEqual({ unchanged: first.next });
    expect(planKeepWaiting(download({ state: 'failed' }), at(1))).toEqual({
      refused: expect.any(InvalidTransitionError),
    });
  });

  it('planFailTimedOut: failed + failure_reason, guards released in the same plan, only while the warning read stands', () => {
    const warned = download({ warning: 'no_metadata', warned_at: at(3600) });
    const planned = planFailTimedOut(warned, 'no_metadata', at(3600), at(7200));
    if (!('write' in planned)) throw new Error('expected a write');
    expect(planned.next).toMatchObject({ state: 'failed', failure_reason: 'no_metadata', revision: 4 });
    expect(planned.next.warning).toBeUndefined();
    expect(planned.write.writes).toEqual([
      expect.objectContaining({ put: expect.objectContaining({ failure_reason: 'no_metadata', state: 'failed' }) }),
      { delete: guardKey(H), when: { ownGuard: warned.id } },
    ]);
    // Kept waiting meanwhile (no warning), or warned again later: refused, nothing written.
    expect(planFailTimedOut(download(), 'no_metadata', at(3600), at(7200))).toEqual({
      refused: expect.any(InvalidTransitionError),
    });
    expect(
      planFailTimedOut(download({ warning: 'no_metadata', warned_at: at(5000) }), 'no_metadata', at(3600), at(7200)),
    ).toHaveProperty('refused');
  });

  it('a retry (planActivate) clears the reason and the warning and restarts the clock', () => {
    const failed = download({ state: 'failed', failure_reason: 'stalled', metadata_at: at(1), progress_at: at(1) });
    const planned = planActivate(failed, 'queued', at(9000));
    if (!('next' in planned)) throw new Error('expected a write');
    expect(planned.next).toMatchObject({ state: 'queued', progress_at: at(9000) });
    expect(planned.next.failure_reason).toBeUndefined();
    expect(planned.next.metadata_at).toBeUndefined();
  });

  it('the DTO shows the warning and the reason', () => {
    expect(toDto(download({ warning: 'stalled', warned_at: at(5) }))).toMatchObject({
      warning: { reason: 'stalled', since: at(5) },
      progress_at: at(0),
    });
    expect(toDto(download({ state: 'failed', failure_reason: 'no_metadata' }))).toMatchObject({
      failure_reason: 'no_metadata',
    });
  });
});

describe('settings and the API', () => {
  it('defaults, 0, and refusals of bad values naming the variable', () => {
    expect(loadLifecycleSettings({})).toEqual(DEFAULT_LIFECYCLE);
    expect(DEFAULT_LIFECYCLE).toEqual({ metadataTimeoutS: 3600, stallTimeoutS: 21600, graceS: 3600 });
    expect(
      loadLifecycleSettings({
        DOWNLOAD_METADATA_TIMEOUT_S: '0',
        DOWNLOAD_STALL_TIMEOUT_S: '0',
        DOWNLOAD_TIMEOUT_GRACE_S: '0',
      }),
    ).toEqual({
      metadataTimeoutS: 0,
      stallTimeoutS: 0,
      graceS: 0,
    });
    for (const bad of ['-1', '1.5', '1e3', 'abc', String(MAX_TIMEOUT_S + 1)]) {
      expect(() => loadLifecycleSettings({ DOWNLOAD_STALL_TIMEOUT_S: bad })).toThrow(ConfigError);
      expect(() => loadLifecycleSettings({ DOWNLOAD_STALL_TIMEOUT_S: bad })).toThrow(/DOWNLOAD_STALL_TIMEOUT_S/);
    }
  });

  it('POST /downloads takes integer timeouts of 0..30 days and refuses anything else', () => {
    const magnet = `magnet:?xt=urn:btih:${H}`;
    expect(parseIngest({ magnet, metadata_timeout_s: 0, stall_timeout_s: MAX_TIMEOUT_S })).toEqual({
      magnet,
      metadata_timeout_s: 0,
      stall_timeout_s: MAX_TIMEOUT_S,
    });
    expect(parseIngest({ infohashes: [H], stall_timeout_s: 60 })).toMatchObject({ stall_timeout_s: 60 });
    for (const bad of [-1, 1.5, MAX_TIMEOUT_S + 1, 1e308, '60', null, true, {}, [60]]) {
      expect(() => parseIngest({ magnet, metadata_timeout_s: bad })).toThrow(expect.objectContaining({ status: 400 }));
      expect(() => parseIngest({ infohashes: [H], stall_timeout_s: bad })).toThrow(
        expect.objectContaining({ status: 400 }),
      );
    }
    expect(() => parseIngest(JSON.parse(`{"magnet":"${magnet}","__proto__":{"stall_timeout_s":1}}`))).toThrow(
      expect.objectContaining({ status: 400 }),
    );
    expect(() => parseIngest({ magnet, constructor: 1 })).toThrow(expect.objectContaining({ status: 400 }));
  });
});
