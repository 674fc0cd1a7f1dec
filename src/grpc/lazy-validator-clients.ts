import type { ValidatorCaller } from '../interceptors/external-validator.ts';
import type { ValidatorClients } from './validator-client.ts';

export interface LazyValidatorClients extends ValidatorCaller {
  /**
   * Loads grpc-js and the protos and starts connecting to `targets`. The
   * wiring calls it with every policy applied; with no targets it loads
   * nothing, so a policy without validators never pays for gRPC, and the
   * first validated call waits neither for the import nor for the connection.
   */
  load(targets: readonly string[]): Promise<void>;
}

/** The gRPC validator clients, imported on first need rather than at start-up. */
export function lazyValidatorClients(): LazyValidatorClients {
  let clients: ValidatorClients | undefined;
  let loading: Promise<ValidatorClients> | undefined;
  const load = () => (loading ??= import('./validator-client.ts').then((m) => (clients = new m.ValidatorClients())));
  return {
    load: async (targets) => {
      if (targets.length === 0) return;
      const c = await load();
      for (const t of new Set(targets)) c.connect(t);
    },
    validate: (target, payload, timeoutMs) =>
      clients !== undefined
        ? clients.validate(target, payload, timeoutMs)
        : load().then((c) => c.validate(target, payload, timeoutMs)),
    close: () => {
      void loading?.then((c) => c.close());
    },
  };
}
