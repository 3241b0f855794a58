import type { Operations } from '../http/openapi';

/** The web UI's and the console's routes for the OpenAPI document: pages and form posts, for a browser. */
const page = (summary: string) => ({
  tag: 'web UI',
  summary,
  responses: { '200': { description: 'the page', html: true as const } },
});
const form = (summary: string) => ({
  tag: 'web UI',
  summary,
  description: 'An HTML form post (same-origin and form-token checked); a refusal is the page with the reason.',
  responses: {
    '303': { description: 'done: to the result’s page', redirect: true as const },
    '200': { description: 'refused: the page with the reason', html: true as const },
  },
});

export const webOperations: Operations = {
  'GET /': page('Downloads, newest first'),
  'GET /download/{id}': page('A download’s card'),
  'GET /review/{id}': page('A download that needs a decision'),
  'GET /download': page('The add form alone'),
  'POST /download': {
    ...form('Add a download: a magnet, infohashes or a .torrent file (multipart/form-data)'),
    description:
      'The add form (lib/web/add-form.ts), over the same service as POST /downloads; same-origin and form-token checked. ' +
      'A new download, or the existing active one, is a redirect to its card (`?existing=1` for the latter); ' +
      'a refused field is the form again with the reason beside it.',
    responses: {
      '303': { description: 'added, or already active: to the download’s card', redirect: true as const },
      '400': { description: 'refused: the form again, the reasons beside the fields', html: true as const },
    },
  },
  'POST /download/{id}/retry': form('Retry a download'),
  'POST /download/{id}/cancel': form('Cancel a download'),
  'POST /download/{id}/keep-waiting': form('Keep waiting for a download that was warned'),
  'POST /download/{id}/infohashes': form('Add infohashes to a download'),
  'POST /review/{id}': form('Choose the active download'),
  'GET /signin': page('Sign in'),
  'POST /signin': form('Sign in with an API token'),
  'POST /signout': form('Sign out'),
  'GET /scan': page('Scan jobs (console)'),
  'GET /scan/{job_id}': page('A scan job (console)'),
  'GET /scan/{job_id}/raw': {
    tag: 'web UI',
    summary: 'A scan job’s raw answer (console)',
    responses: { '200': { description: 'the raw answer' } },
  },
  'GET /sync': page('Sync (console)'),
  'GET /sync/{user}': page('A user’s sync (console)'),
  'GET /failures': page('Failed deliveries and downloads (console)'),
  'POST /failures/{id}/retry': form('Retry a failed delivery (console)'),
};
