import type { Context } from 'aws-lambda';
import { asyncHandler } from '../../lib/lambda/async-handler';
import { parseResealInput, type ResealResult, resealTokens } from '../../lib/sync/reseal';
import { resealServices, syncLog as log } from '../../lib/sync/wiring';

/** Kept before the timeout: a page (100 connections, 8 at a time) takes about a second against KMS. */
export const MARGIN_MS = 30_000;

/**
 * Invoked by the operator (docs/security.md, migrating sealed tokens):
 * `{cursor?, limit?, all?}` → `{done, cursor?, counts}`. Re-seals page after
 * page until near its deadline; invoke again with the returned cursor until
 * `done`. Each page's cursor is logged too (`sync_reseal_page`), so a run that
 * died still says where to resume.
 */
export async function reseal(event: unknown, remainingMs: () => number): Promise<ResealResult> {
  const input = parseResealInput(event);
  const { store, sealer } = resealServices();
  const result = await resealTokens(
    { store, sealer: await sealer(), log },
    {
      ...input,
      stop: () => remainingMs() < MARGIN_MS,
      onPage: ({ counts, cursor }) => log.info('sync_reseal_page', { cursor, ...counts }),
    },
  );
  log.info('sync_reseal_run', { done: result.done, cursor: result.cursor, ...result.counts });
  return result;
}

export const handler = asyncHandler(log, (event: unknown, context: Context) =>
  reseal(event, () => context.getRemainingTimeInMillis()),
);
