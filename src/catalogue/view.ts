/**
 * What the request path needs of the upstream catalogue: the tools as last
 * synced, and a way to ask for one refresh when a call names a tool that is
 * not (yet) known.
 */
export interface CatalogueEntry {
  readonly name: string;
  readonly tool: Readonly<Record<string, unknown>>;
  /** Contract digest; keys compiled validators. */
  readonly digest: string;
}

export interface CatalogueView {
  /** The whole catalogue as last synced, with its digest; undefined before the first sync. */
  current(): { readonly digest: string; readonly tools: ReadonlyMap<string, CatalogueEntry> } | undefined;
  get(name: string): CatalogueEntry | undefined;
  names(): Iterable<string>;
  /** Resolves once a refresh has been attempted; rate-limited by the source. */
  refresh(): Promise<void>;
}

/** A view over a catalogue source (everything synced, or what callers may see of it) and the sync's refresh. */
export function catalogueView(current: CatalogueView['current'], refresh: () => Promise<unknown>): CatalogueView {
  return {
    current,
    get: (name) => current()?.tools.get(name),
    names: () => current()?.tools.keys() ?? [],
    refresh: async () => {
      await refresh();
    },
  };
}
