import { catalogue } from '../../i18n';
import { en } from './ui-en';
import { ru } from './ui-ru';
import type { UiMessages } from './ui-types';

export type { UiMessages } from './ui-types';
export const uiMessages = catalogue<UiMessages>({ en, ru });
