import type { ValidatorCaller } from '../interceptors/external-validator.ts';
import type { ValidatorClients } from './validator-client.ts';

export interface LazyValidatorClients extends ValidatorCaller {
  /**
   * Loads grpc-js and the protos. The wiring calls it when a policy naming
   * validators is applied, so a policy without any never pays for gRPC, and
   * the first validated call does not wait for the import.
   */
  load(): Promise<void>;
}

/** The gRPC validator clients, imported on first need rather than at start-up. */
export function lazyValidatorClients(): LazyValidatorClients {
  let clients: ValidatorClients | undefined;
  let loading: Promise<ValidatorClients> | undefined;
  const load = () => (loading ??= import('./validator-client.ts').then((m) => (clients = new m.ValidatorClients())));
  return {
    load: async () => {
      await load();
    },
    validate: (target, payload, timeoutMs) =>
      clients !== undefined ? clients.validate(target, payload, timeoutMs) : load().then((c) => c.validate(target, payload, timeoutMs)),
    close: () => {
      void loading?.then((c) => c.close());
    },
  };
}
