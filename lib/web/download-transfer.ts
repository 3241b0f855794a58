import { parseIsoTime } from '../clock';
import { isActive, type Download } from '../downloads/model';
import { Html, html } from './html';
import type { Ui } from './locale';
import { time } from './shell';

/**
 * The client's transfer figures (lib/downloads/transfer.ts) on the card (all of them, "as of" when the poll
 * wrote them) and in the list (compact: size, and the speeds and ETA while it is active). A figure the client
 * did not give is left out, never shown as 0; an unknown ETA of an active download says so.
 */
export function transferFacts(ui: Ui, d: Download): Html | '' {
  if (!d.transfer_at) return '';
  const t = ui.t.transfer;
  const f = ui.f;
  const row = (label: string, value: string | undefined, key: string) =>
    value === undefined ? '' : html`<dt>${label}</dt><dd data-transfer="${key}">${value}</dd>`;
  const active = isActive(d.state);
  const eta =
    d.eta_s !== undefined ? f.seconds(d.eta_s) : active && d.state === 'downloading' ? t.etaUnknown : undefined;
  return html`${row(t.size, d.size_bytes === undefined ? undefined : f.bytes(d.size_bytes), 'size')}${row(
    t.downloaded,
    d.downloaded_bytes === undefined ? undefined : f.bytes(d.downloaded_bytes),
    'downloaded',
  )}${row(t.down, active && d.dl_speed !== undefined ? f.speed(d.dl_speed) : undefined, 'dl_speed')}${row(
    t.up,
    d.up_speed !== undefined && (active || d.up_speed > 0) ? f.speed(d.up_speed) : undefined,
    'up_speed',
  )}${row(t.eta, active ? eta : undefined, 'eta')}${row(
    t.peers,
    d.seeds !== undefined || d.peers !== undefined
      ? t.seedsPeers({ seeds: f.number(d.seeds ?? 0), peers: f.number(d.peers ?? 0) })
      : undefined,
    'peers',
  )}${row(t.ratio, d.ratio === undefined ? undefined : ratio(ui, d.ratio), 'ratio')}<dt>${t.asOf}</dt><dd data-transfer="at">${time(ui, d.transfer_at)}</dd>`;
}

/** The list's line under the progress bar: "4.2 GiB · ↓ 1.5 MiB/s · ↑ 20 KiB/s · 5 min". */
export function transferCompact(ui: Ui, d: Download): Html | '' {
  if (!d.transfer_at || parseIsoTime(d.transfer_at) === undefined) return '';
  const f = ui.f;
  const t = ui.t.transfer;
  const active = isActive(d.state);
  const parts = [
    ...(d.size_bytes !== undefined ? [f.bytes(d.size_bytes)] : []),
    ...(active && d.dl_speed ? [`↓\u00a0${f.speed(d.dl_speed)}`] : []),
    ...(active && d.up_speed ? [`↑\u00a0${f.speed(d.up_speed)}`] : []),
    ...(active && d.eta_s !== undefined && d.state === 'downloading' ? [f.seconds(d.eta_s)] : []),
  ];
  if (parts.length === 0) return '';
  return html`<span class="transfer" data-transfer-compact title="${t.asOfTitle({ at: f.dateTime(d.transfer_at) })}">${parts.join(' · ')}</span>`;
}

function ratio(ui: Ui, r: number): string {
  return new Intl.NumberFormat(ui.f.locale, { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(r);
}
