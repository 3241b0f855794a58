import { getDownload, listDownloads, reviewDownload } from '../../lib/downloads/service';
import { pathId } from '../../lib/http/request';
import { pageQuery } from '../../lib/web/forms';
import { webHandler } from '../../lib/web/handler';
import { cardPage, listPage, reviewPage } from '../../lib/web/pages';
import { addForm, addPage } from '../../lib/web/add-page';
import { isActive } from '../../lib/downloads/model';
import { downloadsDeps } from '../../lib/downloads/wiring';
import { createLogger } from '../../lib/log';
import { parseListQuery } from '../../lib/downloads/requests';
import type { Download } from '../../lib/downloads/model';
import type { CategoryRecord } from '../../lib/downloads/category';

/** GET /, /download, /download/{id}, /review/{id}: the UI's pages over the same services and validators as the JSON API. */

/** What the card can tell without reading more: the review page then finds hashes shared with other downloads. */
export function needsReview(d: Download): boolean {
  return d.state === 'stuck' || d.state === 'failed' || Boolean(d.review_reason) || Boolean(d.source_added_at);
}

/** The grace the card counts down (DOWNLOAD_TIMEOUT_GRACE_S), read with the downloads' settings. */
export function cardLifecycle(): { graceS: number } {
  return { graceS: downloadsDeps().lifecycle.graceS };
}

const log = createLogger({ domain: 'web' });

/**
 * The add form's category choices as the poll last recorded them (this function has no torrent-client secret);
 * unreadable, the form offers the default and a new category only.
 */
export async function formCategories(): Promise<CategoryRecord | undefined> {
  return downloadsDeps()
    .categoryRecords.read()
    .catch((err) => {
      log.warn('category_record_unreadable', { err });
      return undefined;
    });
}

export const handler = webHandler(log, async ({ event, viewer, ui }) => {
  switch (event.routeKey) {
    case 'GET /download/{id}': {
      const download = await getDownload(downloadsDeps(), pathId(event));
      // `?existing=1`: the add form led here for a torrent already active (said only while it still is).
      const alreadyActive = event.queryStringParameters?.existing === '1' && isActive(download.state);
      return {
        page: cardPage(ui, download, viewer!, {
          needsReview: needsReview(download),
          lifecycle: cardLifecycle(),
          alreadyActive,
        }),
      };
    }
    case 'GET /download':
      return { page: addPage(ui, viewer!, { categories: await formCategories() }) };
    case 'GET /review/{id}':
      return { page: reviewPage(ui, await reviewDownload(downloadsDeps(), pathId(event)), viewer!, {}) };
    default: {
      const query = parseListQuery(pageQuery(event.queryStringParameters));
      const page = await listDownloads(downloadsDeps(), query);
      return {
        page: listPage(ui, {
          items: page.items,
          q: query.q,
          state: query.state,
          cursor: page.cursor,
          paged: Boolean(query.cursor),
          addForm: viewer?.canWrite ? addForm(ui, viewer, { categories: await formCategories() }) : undefined,
        }),
      };
    }
  }
});
