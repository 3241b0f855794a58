import { catalogue } from '../../i18n';
import { en } from './holdings-en';
import { ru } from './holdings-ru';
import type { HoldingsMessages } from './holdings-types';

export type { HoldingsMessages } from './holdings-types';
export const holdingsMessages = catalogue<HoldingsMessages>({ en, ru });
