import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { directoryIdentity } from './fingerprint.ts';

const CONFIGMAP_DATA_LINK = '..data';

interface Watch {
  readonly names: ReadonlySet<string>;
  /** Identity of the directory the watcher watches; undefined once the watch died. */
  identity: string | undefined;
  watcher: FSWatcher | undefined;
}

/**
 * `fs.watch` on the directory of each watched file, reacting to that file's
 * own name and to `..data` (the kubelet's swap of a mounted ConfigMap or
 * Secret). Watches are on directories because a file replaced by rename, or
 * through a swapped symlink, is a new inode a watch on the old one never sees.
 */
export class DirectoryWatches {
  readonly #onEvent: () => void;
  readonly #watches = new Map<string, Watch>();
  #queue: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(onEvent: () => void) {
    this.#onEvent = onEvent;
  }

  /**
   * Watches exactly the directories of these files: keeps a live watch,
   * replaces one whose directory died or was recreated, drops the rest. A
   * directory missing now is watched on a later call once it exists. Calls
   * run one after another.
   */
  sync(files: readonly string[]): Promise<void> {
    this.#queue = this.#queue.then(() => this.#sync(files));
    return this.#queue;
  }

  close(): void {
    this.#closed = true;
    for (const w of this.#watches.values()) w.watcher?.close();
    this.#watches.clear();
  }

  async #sync(files: readonly string[]): Promise<void> {
    const wanted = new Map<string, Set<string>>();
    for (const file of files) {
      const names = wanted.get(dirname(file)) ?? new Set([CONFIGMAP_DATA_LINK]);
      names.add(basename(file));
      wanted.set(dirname(file), names);
    }
    const identities = await Promise.all([...wanted.keys()].map((dir) => directoryIdentity(dir)));
    if (this.#closed) return;
    for (const [dir, w] of this.#watches) {
      if (!wanted.has(dir)) {
        w.watcher?.close();
        this.#watches.delete(dir);
      }
    }
    [...wanted].forEach(([dir, names], i) => {
      const identity = identities[i];
      const current = this.#watches.get(dir);
      if (
        current !== undefined &&
        current.identity === identity &&
        current.identity !== undefined &&
        sameSet(current.names, names)
      )
        return;
      current?.watcher?.close();
      this.#watches.set(dir, this.#arm(dir, names, identity));
    });
  }

  #arm(dir: string, names: ReadonlySet<string>, identity: string | undefined): Watch {
    const w: Watch = { names, identity: undefined, watcher: undefined };
    if (identity === undefined) return w;
    try {
      // Filenames may be missing on some platforms; such events count as relevant.
      w.watcher = watch(dir, (_event, name) => {
        if (name === null || names.has(name)) this.#onEvent();
      });
    } catch {
      return w;
    }
    w.identity = identity;
    w.watcher.on('error', () => {
      w.watcher?.close();
      w.watcher = undefined;
      w.identity = undefined;
    });
    return w;
  }
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((x) => b.has(x));
}
