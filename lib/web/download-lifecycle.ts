import { parseIsoTime } from '../clock';
import { holdOf, shareOf, type Download } from '../downloads/model';
import { Html, html } from './html';
import type { Ui } from './locale';
import { csrfField, Viewer } from './shell';

/**
 * The card's part about a download that does not move (lib/downloads/lifecycle.ts): the warning with how long
 * it has stood still and a "keep waiting" form (with the form token, like Retry and Cancel), the reason a
 * timeout ended it, or the disk guard's hold (disk-guard.ts). Nothing when none applies.
 */
export function lifecycleNotice(
  ui: Ui,
  d: Download,
  viewer: Viewer,
  opts: { now?: number; graceS?: number } = {},
): Html | '' {
  const t = ui.t;
  if (d.failure_reason && d.state === 'failed')
    return html`<p class="review-link" data-failure-reason="${d.failure_reason}">${t.failureReason[d.failure_reason]}</p>`;
  const hold = holdOf(d);
  if (hold)
    return html`<p class="review-link" role="status" data-hold="${hold.reason}">${t.heldForDisk({
      needed: ui.f.bytes(hold.needed_bytes),
      free: ui.f.bytes(hold.free_bytes),
    })}</p>`;
  if (d.state === 'completed') return shareNotice(ui, d);
  if (!d.warning) return '';
  const now = opts.now ?? Date.now();
  const since = parseIsoTime(d.progress_at ?? d.created_at);
  const still = since === undefined ? '' : duration(ui, now - since);
  const warnedAt = parseIsoTime(d.warned_at);
  const left =
    opts.graceS !== undefined && warnedAt !== undefined ? Math.max(0, warnedAt + opts.graceS * 1000 - now) : undefined;
  const what =
    d.warning === 'no_metadata' ? t.warnedNoMetadata({ duration: still }) : t.warnedStalled({ duration: still });
  return html`<div class="review-link" role="status" data-warning="${d.warning}"><p>${what}${
    left !== undefined ? html` ${t.warnedEnds({ duration: duration(ui, left) })}` : ''
  }</p>${
    viewer.canWrite
      ? html`<form method="post" action="/download/${d.id}/keep-waiting">${csrfField(viewer)}<button type="submit">${t.keepWaiting}</button></form>`
      : ''
  }</div>`;
}

/**
 * A completed download's seeding goal (share-goals.ts): "Seeding until ratio 2.0 / 3 days", then "seeding
 * done", or how it left the client. Nothing without a goal (or before the poll saw it seed).
 */
function shareNotice(ui: Ui, d: Download): Html | '' {
  const share = shareOf(d);
  if (!share) return '';
  const t = ui.t;
  const say = (text: string, state: string) =>
    html`<p class="review-link" role="status" data-share="${state}">${text}</p>`;
  if (share.removed_at)
    return share.removed_files ? say(t.removedWithFiles, 'removed-files') : say(t.removedFilesKept, 'removed');
  if (share.met_at) return say(t.seedingDone, 'done');
  const ratio = new Intl.NumberFormat(ui.f.locale, { minimumFractionDigits: 1, maximumFractionDigits: 2 });
  const goal = [
    ...(share.ratio !== undefined ? [t.shareRatio({ ratio: ratio.format(share.ratio) })] : []),
    ...(share.time_s ? [duration(ui, share.time_s * 1000)] : []),
  ];
  return goal.length ? say(t.seedingUntil({ goal: goal.join(' / ') }), 'seeding') : '';
}

/** "55 min", "6 hr", "3 days" / "55 мин", "6 ч", "3 дн.": the largest whole unit, by Intl (plurals included). */
export function duration(ui: Ui, ms: number): string {
  const minutes = Math.max(0, Math.floor(ms / 60_000));
  const [value, unit] =
    minutes < 60
      ? [minutes, 'minute']
      : minutes < 48 * 60
        ? [Math.floor(minutes / 60), 'hour']
        : [Math.floor(minutes / 1440), 'day'];
  return new Intl.NumberFormat(ui.f.locale, {
    style: 'unit',
    unit,
    unitDisplay: unit === 'day' ? 'long' : 'short',
  }).format(value);
}
