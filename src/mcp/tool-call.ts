import { callArguments, type Classified } from './classify.ts';

/** A tools/call as toolgate runs it: the tool it names and the arguments toolgate decides on. */
export interface ToolCall {
  readonly name: string;
  /** As `callArguments` reads them: exact where JSON.parse would have rounded an integer. */
  readonly arguments: unknown;
}

/**
 * The tool a tools/call names. The first interceptors of every tools/call
 * chain (known_tool where the catalogue is known, then grants) refuse a call
 * without one, so a missing name past them is a wiring defect: this throws,
 * and the request fails closed as internal_error, rather than deciding about
 * no tool.
 */
export function calledTool(message: Classified): string {
  const name = message.name;
  if (name === undefined) throw new TypeError('a tools/call without a name got past known_tool and grants');
  return name;
}

export function toolCall(message: Classified): ToolCall {
  return { name: calledTool(message), arguments: callArguments(message) };
}
