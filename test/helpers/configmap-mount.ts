import { mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The kubelet's atomic writer, step for step: a new timestamped directory
 * holding every file, a `..data_tmp` symlink to it renamed over `..data`,
 * visible symlinks through `..data` for new names, then the old directory
 * removed.
 */
export class ConfigMapMount {
  readonly dir: string;
  #version = 0;
  #current: string | undefined;

  constructor(dir: string) {
    this.dir = dir;
  }

  async publish(files: Readonly<Record<string, string>>): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const stamped = `..2026_11_30_04_00_00.${String(++this.#version).padStart(9, '0')}`;
    await mkdir(join(this.dir, stamped));
    for (const [name, text] of Object.entries(files)) await writeFile(join(this.dir, stamped, name), text);
    await symlink(stamped, join(this.dir, '..data_tmp'));
    await rename(join(this.dir, '..data_tmp'), join(this.dir, '..data'));
    for (const name of Object.keys(files)) await symlink(join('..data', name), join(this.dir, name)).catch(() => {});
    if (this.#current !== undefined) await rm(join(this.dir, this.#current), { recursive: true });
    this.#current = stamped;
  }

  async remove(): Promise<void> {
    await rm(this.dir, { recursive: true });
    this.#current = undefined;
  }
}
