import type { DownloadState } from '../../downloads/model';
import type { AddErrorReason, AddFieldName } from '../add-form';
import type { Html } from '../html';

/**
 * The downloads UI's and the page shell's messages, one catalogue per
 * language (ui-en.ts, ui-ru.ts), each typed as this interface: a message a
 * language lacks does not compile. Whole messages with named parameters; those
 * returning Html build it with the `html` tag, so parameters are escaped.
 */
export interface UiMessages {
  skip: string;
  signedInAs: (p: { who: string }) => Html;
  signOut: string;
  sections: string;
  nav: { downloads: string; scan: string; sync: string; failures: string };
  timesIn: (p: { zone: string }) => string;
  language: string;
  copy: string;
  copied: string;
  copiedStatus: string;
  copyFailed: string;
  state: Record<DownloadState, string>;
  /** Why a download needs a decision (lib/downloads/service.ts `reviewDownload`'s reasons). */
  reason: Record<'stuck' | 'failed' | 'missing_in_client' | 'adopted_from_client' | 'shares_infohash', string>;
  notReported: string;
  refused: (p: { code: string }) => string;
  currentOwner: (p: { id: string }) => Html;
  pages: string;
  firstPage: string;
  previousPage: string;
  nextPage: string;
  pageOf: (p: { page: number; pages: number }) => string;
  tableScrolls: string;
  downloads: string;
  searchLabel: string;
  searchPlaceholder: string;
  stateLabel: string;
  allStates: string;
  search: string;
  noMatch: string;
  noDownloads: string;
  listCaption: string;
  col: { name: string; state: string; progress: string; infohashes: string; created: string };
  progressOf: (p: { name: string }) => string;
  allDownloads: string;
  needsDecision: string;
  details: string;
  downloadProgress: string;
  updated: string;
  id: string;
  mergedInto: string;
  copyInfohash: (p: { kind: string }) => string;
  magnet: string;
  copyMagnet: string;
  actions: string;
  retry: string;
  cancel: string;
  /** The timeout warning on the card (lifecycle.ts): `duration` like "55 min", "6 hr". */
  warnedNoMetadata: (p: { duration: string }) => string;
  warnedStalled: (p: { duration: string }) => string;
  warnedEnds: (p: { duration: string }) => string;
  keepWaiting: string;
  failureReason: { no_metadata: string; stalled: string };
  /** The disk guard's hold (disk-guard.ts): sizes like "4.2 GiB", `since` a formatted time. */
  heldForDisk: (p: { needed: string; free: string; reserve?: string }) => string;
  heldForDiskShort: string;
  /** The seeding goal of a completed download (share-goals.ts): `goal` like "ratio 2.0 / 3 days". */
  seedingUntil: (p: { goal: string }) => string;
  shareRatio: (p: { ratio: string }) => string;
  seedingDone: string;
  removedFilesKept: string;
  removedWithFiles: string;
  /** The client's transfer figures (lib/web/download-transfer.ts). */
  transfer: {
    size: string;
    downloaded: string;
    down: string;
    up: string;
    eta: string;
    etaUnknown: string;
    peers: string;
    seedsPeers: (p: { seeds: string; peers: string }) => string;
    ratio: string;
    asOf: string;
    asOfTitle: (p: { at: string }) => string;
  };
  addInfohashesLabel: string;
  addInfohashes: string;
  /** The "Add a download" form (lib/web/add-form.ts): a label (and a hint) per field of ADD_FIELDS. */
  addTitle: string;
  addSource: string;
  addSourceHint: string;
  addField: Record<AddFieldName, { label: string; hint?: string }>;
  addAdvanced: string;
  /** The add form's seeding-goal action (share-goals.ts): the empty choice, and each action. */
  shareActionDefault: string;
  shareActionOption: Record<'keep' | 'remove' | 'remove_files', string>;
  addSubmit: string;
  addRefused: string;
  addError: Record<AddErrorReason, string>;
  addFileAgain: (p: { name: string }) => string;
  /** The category list (decision 459): the default category (its name when known), "a new one", its folders. */
  addCategoryDefault: (p: { name?: string }) => string;
  addCategoryNew: string;
  addCategorySavePath: (p: { path: string }) => string;
  /** The card's category row, and the default's word there. */
  category: string;
  categoryDefault: string;
  /** On the card of the existing active download a second add led to (the API's 200). */
  alreadyActive: string;
  reviewTitle: (p: { name: string }) => string;
  why: string;
  nothingWrong: string;
  candidates: string;
  makeActiveLegend: string;
  thisDownload: string;
  candidateMeta: (p: { badge: Html; kinds: string; created: Html; id: string }) => Html;
  open: string;
  openName: (p: { name: string }) => string;
  makeActive: string;
  cannotChange: string;
  signIn: string;
  apiToken: string;
  signInHint: Html;
  tokenUnknown: string;
  tokenNoPage: string;
  notFound: string;
  noSuchDownload: string;
  noSuchItem: string;
  backHome: string;
  forbiddenTitle: string;
  forbiddenText: (p: { scope: string }) => string;
}
