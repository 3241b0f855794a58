import { catalogue } from '../../i18n';
import { en } from './console-en';
import { ru } from './console-ru';
import type { ConsoleMessages } from './console-types';

export type { ConsoleMessages } from './console-types';
export const consoleMessages = catalogue<ConsoleMessages>({ en, ru });
