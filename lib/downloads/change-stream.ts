import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { isDownloadItem } from './keys';

/**
 * The downloads table's change stream, read for other domains (the Telegram
 * notifier): they get a download's item before and after a change as plain
 * records, and never learn the table's key layout.
 */

export type StreamImage = Record<string, AttributeValue>;

/** A download's item after (and before) a change; undefined for memberships, guards and other items. */
export function downloadImages(
  change: { NewImage?: StreamImage; OldImage?: StreamImage } | undefined,
): { next: Record<string, unknown>; old?: Record<string, unknown> } | undefined {
  if (!change?.NewImage) return undefined;
  const next = unmarshall(change.NewImage);
  if (!isDownloadItem(next)) return undefined;
  return { next, old: change.OldImage ? unmarshall(change.OldImage) : undefined };
}
