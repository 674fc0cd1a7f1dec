import {
  errorCode,
  requestBody,
  requestHeaders,
  STEPS,
  type Answer,
  type Endpoints,
  type Outcome,
  type Step,
} from './steps.ts';

export interface StepResult extends Outcome {
  readonly step: Step;
  readonly status: number;
}

async function send(step: Step, at: Endpoints): Promise<Answer> {
  const res =
    step.kind === 'metrics'
      ? await fetch(`${at.admin}/metrics`)
      : await fetch(at.mcp, { method: 'POST', headers: requestHeaders(step), body: requestBody(step) });
  return { status: res.status, headers: res.headers, body: await res.text() };
}

async function take(step: Step, at: Endpoints): Promise<StepResult> {
  const answers: Answer[] = [];
  const times = step.kind === 'mcp' && step.until !== undefined ? step.until.times : 1;
  for (let i = 0; i < times; i++) {
    const answer = await send(step, at);
    answers.push(answer);
    if (step.kind === 'mcp' && step.until !== undefined && errorCode(answer) === step.until.code) break;
  }
  return { step, status: (answers.at(-1) as Answer).status, ...step.check(answers) };
}

/** Takes every step in order against the running demo, writing what each showed. */
export async function runTour(at: Endpoints, write: (line: string) => void): Promise<StepResult[]> {
  const results: StepResult[] = [];
  for (const [i, step] of STEPS.entries()) {
    const result = await take(step, at);
    results.push(result);
    write(`${i + 1}. ${step.title}`);
    write(
      `   ${result.ok ? 'as promised' : `NOT as promised (${step.promise})`}: ${result.status} ${result.shown.replaceAll('\n', '\n     ')}`,
    );
  }
  return results;
}
