import type { ServerResponse } from 'node:http';
import type { Exchange } from '../../interceptors/contract.ts';
import type { Outcome } from '../outcome.ts';

/**
 * The one shape of a policed method's stage: the exchange, the response to
 * write, the headers for the upstream and the body to send it. A stage
 * writes only through reply.ts or forward(), so its tests need no socket.
 */
export type Stage = (ex: Exchange, res: ServerResponse, headers: string[], body: Buffer) => Promise<Outcome>;
