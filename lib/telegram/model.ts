import { downloadImages, type StreamImage } from '../downloads/change-stream';
import {
  isDownloadState,
  isActive,
  DownloadState,
  FAILURE_REASONS,
  type FailureReason,
  type Transfer,
  TRANSFER_KEYS,
} from '../downloads/model';
import { parseIsoTime } from '../clock';
import { isId } from '../ident';
import { MalformedStreamRecordError } from './errors';

/**
 * What a person cares about in the life of a download, derived from one
 * DynamoDB Stream record of the downloads table (old and new image). Every
 * other change (queued → downloading, a hash appended, guards, memberships)
 * is not an event.
 */
export const EVENT_KINDS = [
  'created',
  'adopted',
  'completed',
  'failed',
  'stuck',
  'resurrected',
  'needs_review',
  'seeding_done',
  'warned',
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

export interface DownloadEvent {
  /** The stream record's eventID: the dedupe key of every notification it causes. */
  eventId: string;
  /** The stream record's sequence number: order of events of one item. */
  sequence: string;
  kind: EventKind;
  download: NotifiedDownload;
  /**
   * When the change was written, epoch ms: the later of the item's `updated_at` (written with the change, to
   * the ms) and the record's ApproximateCreationDateTime (whole seconds; a write that left `updated_at` alone).
   * A message's lag at send counts from here.
   */
  createdAt?: number;
}

/** The fields a notification shows; read from the image by name, nothing else is copied. */
export interface NotifiedDownload {
  id: string;
  name: string;
  state: DownloadState;
  firstHash?: string;
  reviewReason?: string;
  /** When the change shown happened (epoch ms), shown in the configured time zone. */
  changedAt?: number;
  /** The client's progress (0..1) and transfer figures as the poll last wrote them (lib/downloads/transfer.ts). */
  progress?: number;
  transfer?: Transfer;
  /** A timeout warning stands (lib/downloads/lifecycle.ts): its reason. */
  warning?: FailureReason;
}

/**
 * A change of what a download's status message shows (its state, progress, figures, warning, name): the
 * message is edited to the image (decision 456). `sequence` orders the changes of one download: an older one
 * never overwrites a newer one already shown.
 */
export interface StatusChange {
  sequence: string;
  download: NotifiedDownload;
  /** The state or the warning changed (not only progress and figures): never dropped for the pace. */
  moved: boolean;
}

/** The status-relevant change of a MODIFY record of a download item; undefined when nothing it shows changed. */
export function statusChange(record: StreamRecord): StatusChange | undefined {
  if (record.eventName !== 'MODIFY') return undefined;
  let images: ReturnType<typeof downloadImages>;
  try {
    images = downloadImages(record.dynamodb);
  } catch {
    return undefined; // classify() refuses the record (the failure store has it)
  }
  const sequence = record.dynamodb?.SequenceNumber;
  if (!images?.old || typeof sequence !== 'string' || !SEQUENCE.test(sequence)) return undefined;
  let next: ReadDownload;
  let old: ReadDownload;
  try {
    next = readDownload(images.next);
    old = readDownload(images.old);
  } catch {
    return undefined;
  }
  const a = old.shown;
  const b = next.shown;
  const same =
    a.state === b.state &&
    a.name === b.name &&
    a.progress === b.progress &&
    a.warning === b.warning &&
    JSON.stringify(a.transfer ?? {}) === JSON.stringify(b.transfer ?? {});
  if (same) return undefined;
  return {
    sequence,
    download: { ...b, ...(next.updatedAt !== undefined ? { changedAt: next.updatedAt } : {}) },
    moved: a.state !== b.state || a.warning !== b.warning,
  };
}

/** The parts of a stream record we read (aws-lambda's DynamoDBRecord, kept structural). */
export interface StreamRecord {
  eventID?: string;
  eventName?: 'INSERT' | 'MODIFY' | 'REMOVE' | string;
  dynamodb?: {
    /** Epoch seconds, as Lambda hands it over. */
    ApproximateCreationDateTime?: number;
    SequenceNumber?: string;
    NewImage?: StreamImage;
    OldImage?: StreamImage;
  };
}

// eventIDs are AWS's (hex or uuid-like); they become part of a key, so their shape is checked.
const EVENT_ID = /^[A-Za-z0-9-]{1,128}$/;
const SEQUENCE = /^\d{1,40}$/;

/** undefined: not an event a person cares about. Throws MalformedStreamRecordError for a record we cannot read. */
export function classify(record: StreamRecord): DownloadEvent | undefined {
  if (record.eventName === 'REMOVE') return undefined;
  let images: ReturnType<typeof downloadImages>;
  try {
    images = downloadImages(record.dynamodb);
  } catch {
    throw new MalformedStreamRecordError('image unreadable');
  }
  if (!images) return undefined;
  if (typeof record.eventID !== 'string' || !EVENT_ID.test(record.eventID))
    throw new MalformedStreamRecordError('eventID missing or malformed');
  const sequence = record.dynamodb?.SequenceNumber;
  if (typeof sequence !== 'string' || !SEQUENCE.test(sequence))
    throw new MalformedStreamRecordError('SequenceNumber missing or malformed');
  const next = readDownload(images.next);
  const old = images.old ? readDownload(images.old) : undefined;
  const kind = eventKind(old, next, record.eventName === 'INSERT');
  if (!kind) return undefined;
  const created = writtenAt(record.dynamodb?.ApproximateCreationDateTime, next.updatedAt);
  return {
    eventId: record.eventID,
    sequence,
    kind,
    download: next.shown,
    ...(created !== undefined ? { createdAt: created } : {}),
  };
}

interface ReadDownload {
  shown: NotifiedDownload;
  sourceAddedAt?: string;
  updatedAt?: number;
  /** The seeding goal was met (share-goals.ts), on a download that had one. */
  seedingDone?: boolean;
}

function writtenAt(approximateS: unknown, updatedAt: number | undefined): number | undefined {
  const approximate =
    typeof approximateS === 'number' && Number.isFinite(approximateS) ? approximateS * 1000 : undefined;
  if (approximate === undefined) return updatedAt;
  return updatedAt === undefined ? approximate : Math.max(approximate, updatedAt);
}

function readDownload(item: Record<string, unknown>): ReadDownload {
  const { id, name, state, infohashes, review_reason, source_added_at, updated_at, progress, warning } = item;
  const { share_met_at, share_ratio, share_time_s } = item;
  const hadGoal = typeof share_ratio === 'number' || (typeof share_time_s === 'number' && share_time_s > 0);
  if (!isId(id)) throw new MalformedStreamRecordError('download id is not an id');
  if (!isDownloadState(state)) throw new MalformedStreamRecordError(`download ${id}: unknown state`);
  const first = Array.isArray(infohashes) ? (infohashes[0] as { infohash?: unknown } | undefined)?.infohash : undefined;
  return {
    shown: {
      id,
      state,
      name: typeof name === 'string' ? name : '',
      firstHash: typeof first === 'string' ? first : undefined,
      reviewReason: typeof review_reason === 'string' && review_reason !== '' ? review_reason : undefined,
      ...(typeof progress === 'number' && progress >= 0 && progress <= 1 ? { progress } : {}),
      ...transferOfImage(item),
      ...((FAILURE_REASONS as readonly unknown[]).includes(warning) ? { warning: warning as FailureReason } : {}),
    },
    sourceAddedAt: typeof source_added_at === 'string' ? source_added_at : undefined,
    updatedAt: parseIsoTime(updated_at),
    seedingDone: hadGoal && typeof share_met_at === 'string',
  };
}

/** The figures of an image, by name, each a finite non-negative number or left out (the image is outside data). */
function transferOfImage(item: Record<string, unknown>): { transfer?: Transfer } {
  const figures: Transfer = {};
  for (const k of TRANSFER_KEYS) {
    const v = item[k];
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0) figures[k] = v;
  }
  return Object.keys(figures).length > 0 ? { transfer: figures } : {};
}

function eventKind(old: ReadDownload | undefined, next: ReadDownload, inserted: boolean): EventKind | undefined {
  if (inserted || !old) return next.sourceAddedAt ? 'adopted' : 'created';
  const from = old.shown.state;
  const to = next.shown.state;
  // A review request outranks the state change written with it: it is what a person must act on.
  if (next.shown.reviewReason && next.shown.reviewReason !== old.shown.reviewReason) return 'needs_review';
  // Its own write, after the completion: "seeding done" once, when the goal is met (not for a removal at completion).
  if (next.seedingDone && !old.seedingDone) return 'seeding_done';
  // A timeout warning (lib/downloads/lifecycle.ts): the person may keep waiting or cancel (decision 457).
  if (next.shown.warning && next.shown.warning !== old.shown.warning && isActive(to)) return 'warned';
  if (from === to) return undefined;
  if (to === 'completed' || to === 'failed' || to === 'stuck') return to;
  if (!isActive(from) && isActive(to)) return 'resurrected';
  return undefined;
}

/** Events that ask a person to look: their message links to the review page, the others to the card. */
export function needsReview(kind: EventKind): boolean {
  return kind === 'failed' || kind === 'stuck' || kind === 'needs_review';
}
