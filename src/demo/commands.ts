import { requestBody, requestHeaders, type Endpoints, type Step } from './steps.ts';

/** The shell command a reader can paste to take one step by hand. */
export function stepCommand(step: Step, at: Endpoints): string {
  if (step.kind === 'metrics') return `curl -s ${at.admin}/metrics | grep ${step.metric}`;
  const headers = Object.entries(requestHeaders(step)).map(([name, value]) => `-H '${name}: ${value}'`);
  const request = [
    `${at.mcp} \\`,
    `  ${headers.slice(0, 3).join(' ')} \\`,
    `  ${headers.slice(3).join(' ')} \\`,
    `  -d '${requestBody(step)}'`,
  ];
  if (step.until === undefined) return ['curl -si ' + request[0], ...request.slice(1)].join('\n');
  // Every answer is HTTP 200 (a refusal the model reads is a tool result): each line shows the refusal code, if any.
  const loop = `for i in $(seq ${step.until.times}); do curl -s ${request[0]}`;
  return [loop, ...request.slice(1, -1), `${request.at(-1)} | grep -o '"code":"[a-z_]*"' || echo ran; done`].join('\n');
}
