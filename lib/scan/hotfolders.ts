import type { HotFolderConfig } from './config';
import { HotFolder, HotFolderDirs, LocalHotFolder } from './hotfolder';
import { SmbHotFolder } from './smb-hotfolder';

/** The configured hot folder: the one place that picks the implementation. */
export function hotFolderFrom(config: HotFolderConfig, dirs: HotFolderDirs): HotFolder {
  return config.kind === 'local' ? new LocalHotFolder(config.root, dirs) : new SmbHotFolder({ ...config, dirs });
}
