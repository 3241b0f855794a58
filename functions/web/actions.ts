import { parseId } from '../../lib/ident';
import {
  addHashes,
  changeState,
  getDownload,
  ingest,
  keepWaiting,
  relink,
  retry,
  reviewDownload,
} from '../../lib/downloads/service';
import { pathId, validator } from '../../lib/http/request';
import { clearedSessionCookie } from '../../lib/auth/session';
import { header } from '../../lib/http/request';
import { webHandler, WebRequest, WebAnswer } from '../../lib/web/handler';
import { noticeOf } from '../../lib/web/responses';
import { cardPage, reviewPage } from '../../lib/web/pages';
import { addPage } from '../../lib/web/add-page';
import { ADD_FILE_FORMS, addErrorOf, addValuesOf, parseAddForm } from '../../lib/web/add-form';
import { downloadsDeps } from '../../lib/downloads/wiring';
import { createLogger } from '../../lib/log';
import { audit, AUDIT_EVENTS } from '../../lib/log/audit';
import { parseAddInfohashes } from '../../lib/downloads/requests';
import { cardLifecycle, formCategories, needsReview } from './pages';

/**
 * The UI's state-changing forms (session + form token checked by webHandler).
 * Each calls the same service as its JSON route; a refusal renders the page
 * again with the API's error code and message, and the owner's link on a 409.
 */

const parseEmpty = validator<Record<string, never>>({ type: 'object', additionalProperties: false });
const parseHashesForm = validator<{ infohashes: string }>({
  type: 'object',
  properties: { infohashes: { type: 'string', minLength: 1, maxLength: 2400 } },
  required: ['infohashes'],
  additionalProperties: false,
});
const parseReviewForm = validator<{ candidate_id: string }>({
  type: 'object',
  properties: { candidate_id: { type: 'string', maxLength: 64 } },
  required: ['candidate_id'],
  additionalProperties: false,
});

const log = createLogger({ domain: 'web' });

// The add form's route reads multipart (its file input); every other form here is urlencoded.
export const handler = webHandler(log, (request) => actions(request), { fileForms: ADD_FILE_FORMS });

async function actions(request: WebRequest): Promise<WebAnswer> {
  const { event, form } = request;
  if (event.routeKey === 'POST /signout') {
    parseEmpty(form);
    return { redirect: '/signin', cookies: [clearedSessionCookie(header(event.headers, 'host'))] };
  }
  if (event.routeKey === 'POST /download') return add(request);
  // Ids first: a malformed one is a 404 before any storage call.
  const id = pathId(event);
  switch (event.routeKey) {
    case 'POST /download/{id}/retry':
      parseEmpty(form);
      return onCard(request, id, () => retry(downloadsDeps(), id));
    case 'POST /download/{id}/cancel':
      parseEmpty(form);
      return onCard(request, id, async () => {
        await changeState(downloadsDeps(), id, 'cancelled');
        audit(
          log,
          AUDIT_EVENTS.downloadCancelled,
          { principal: request.viewer?.principal, via: 'web' },
          { download_id: id },
        );
      });
    case 'POST /download/{id}/keep-waiting':
      parseEmpty(form);
      return onCard(request, id, () => keepWaiting(downloadsDeps(), id));
    case 'POST /download/{id}/infohashes': {
      const { infohashes } = parseAddInfohashes({
        infohashes: parseHashesForm(form)
          .infohashes.split(/[\s,]+/)
          .filter(Boolean),
      });
      return onCard(request, id, () => addHashes(downloadsDeps(), id, infohashes));
    }
    case 'POST /review/{id}': {
      const candidateId = parseId(parseReviewForm(form).candidate_id);
      try {
        await relink(downloadsDeps(), id, candidateId);
        return { redirect: `/download/${candidateId}` };
      } catch (err) {
        const { status, notice } = noticeOf(err);
        if (status === 404 || status >= 500) throw err;
        return {
          status,
          page: reviewPage(request.ui, await reviewDownload(downloadsDeps(), id), request.viewer!, { notice }),
        };
      }
    }
    default:
      throw new Error(`no action for ${event.routeKey}`);
  }
}

/**
 * The add form: the SAME `ingest` as POST /downloads. A new download → its card; the existing active one →
 * its card with a sentence saying so (the API's 201 and 200), both Post/Redirect/Get. A refusal of a field is
 * the form again, the person's input kept, the reason beside the field (400); nothing was written.
 */
async function add(request: WebRequest): Promise<WebAnswer> {
  const { form, files, ui, viewer } = request;
  const values = addValuesOf(form, files);
  const parsed = parseAddForm(form, files, downloadsDeps().torrents.category);
  const categories = await formCategories();
  if ('errors' in parsed)
    return { status: 400, page: addPage(ui, viewer!, { values, errors: parsed.errors, categories }) };
  try {
    const { created, download } = await ingest(downloadsDeps(), parsed.request);
    return { redirect: created ? `/download/${download.id}` : `/download/${download.id}?existing=1` };
  } catch (err) {
    const errors = addErrorOf(err, parsed.request);
    if (errors) return { status: 400, page: addPage(ui, viewer!, { values, errors, categories }) };
    const { status, notice } = noticeOf(err);
    if (status >= 500) throw err;
    return { status, page: addPage(ui, viewer!, { values, notice, categories }) };
  }
}

/** Post/Redirect/Get on success; on a refusal the card again, with the reason. */
async function onCard(request: WebRequest, id: string, action: () => Promise<unknown>): Promise<WebAnswer> {
  try {
    await action();
    return { redirect: `/download/${id}` };
  } catch (err) {
    const { status, notice } = noticeOf(err);
    // A 502 (the client refused; state rolled back) is shown on the card like a refusal.
    if (status === 404 || (status >= 500 && status !== 502)) throw err;
    const download = await getDownload(downloadsDeps(), id);
    return {
      status,
      page: cardPage(request.ui, download, request.viewer!, {
        notice,
        needsReview: needsReview(download),
        lifecycle: cardLifecycle(),
      }),
    };
  }
}
