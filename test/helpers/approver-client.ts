/**
 * An approver driving the approver page over plain HTTP, as a browser would
 * without script: a cookie jar, the sign-in form, and the decision form with
 * the CSRF token read from the page.
 */
export interface PageResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

export class ApproverClient {
  readonly #cookies = new Map<string, string>();

  async get(url: string): Promise<PageResponse> {
    return this.#send(url, { method: 'GET' });
  }

  async postForm(url: string, fields: Record<string, string>): Promise<PageResponse> {
    return this.#send(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
  }

  /** Opens the approval URL, signs in with `credential`, and returns the approval page. */
  async signIn(approvalUrl: string, credential: string): Promise<PageResponse> {
    const form = await this.get(approvalUrl);
    const fields = { csrf: hidden(form.text, 'csrf'), next: hidden(form.text, 'next'), credential };
    const signed = await this.postForm(new URL('/login', approvalUrl).href, fields);
    if (signed.status !== 303) return signed;
    return this.get(new URL(signed.headers.get('location') as string, approvalUrl).href);
  }

  /** Posts Approve or Deny with the page's CSRF token (or `csrf` instead). */
  async decide(approvalUrl: string, decision: 'approve' | 'deny', csrf?: string): Promise<PageResponse> {
    const page = await this.get(approvalUrl);
    return this.postForm(`${approvalUrl}/decision`, { csrf: csrf ?? hidden(page.text, 'csrf'), decision });
  }

  async #send(url: string, init: RequestInit): Promise<PageResponse> {
    const cookie = [...this.#cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), ...(cookie !== '' && { cookie }) },
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = (pair as string).indexOf('=');
      const name = (pair as string).slice(0, eq);
      const value = (pair as string).slice(eq + 1);
      if (/Max-Age=0/i.test(line)) this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
    return { status: res.status, headers: res.headers, text: await res.text() };
  }
}

export function hidden(html: string, name: string): string {
  const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (m === null) throw new Error(`no hidden field ${name}`);
  return m[1] as string;
}
