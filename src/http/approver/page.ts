/**
 * The approver page as server-rendered HTML: no script at all, one external
 * stylesheet, every dynamic value HTML-escaped. It is the one place toolgate
 * shows argument values, so an approver sees exactly what they approve.
 */
import { parseExact, stringifyExact } from '../../json/exact.ts';
import type { ApprovalRecord } from '../../approval/record.ts';
import { errors, type ErrorId } from '../../errors.ts';

const ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}

export const STYLESHEET = `body{font:15px/1.45 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1b1f24}
h1{font-size:1.35rem}dl{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem}dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}
pre{background:#f4f6f8;border:1px solid #d0d7de;padding:.8rem;overflow:auto;max-height:28rem}code{font-family:ui-monospace,monospace}
form.decide{display:flex;gap:1rem;margin-top:1.2rem}button{font-size:1rem;padding:.5rem 1.4rem;border-radius:6px;border:1px solid #888;cursor:pointer}
button.approve{background:#1f883d;color:#fff}button.deny{background:#cf222e;color:#fff}.state{font-weight:700}.error{color:#cf222e}
input[type=password]{width:100%;font-size:1rem;padding:.4rem}`;

function layout(title: string, body: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<title>${escapeHtml(title)}</title><link rel="stylesheet" href="/approver.css"></head><body>${body}</body></html>`
  );
}

export interface ToolFacts {
  readonly description?: string;
  readonly annotations?: unknown;
}

/** Pretty-prints the stored arguments with every digit of every integer; text that is not JSON is shown as it is (escaped either way). */
function pretty(text: string): string {
  try {
    return stringifyExact(parseExact(text), 2);
  } catch {
    return text;
  }
}

export function approvalPage(r: ApprovalRecord, tool: ToolFacts, approver: string, csrf: string, now: number): string {
  const open = r.state === 'pending' && r.expiresAt > now;
  const state = open ? 'pending' : r.expiresAt <= now && r.state === 'pending' ? 'expired' : r.state;
  const row = (k: string, v: string) => `<dt>${escapeHtml(k)}</dt><dd>${v}</dd>`;
  const annotations =
    tool.annotations === undefined
      ? '<em>none</em>'
      : `<pre><code>${escapeHtml(JSON.stringify(tool.annotations, null, 2))}</code></pre>`;
  const decided = r.decidedBy === undefined ? '' : row('Decided by', escapeHtml(r.decidedBy));
  const form = open
    ? `<form class="decide" method="post" action="/approvals/${escapeHtml(r.id)}/decision">` +
      `<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">` +
      `<button class="approve" type="submit" name="decision" value="approve">Approve</button>` +
      `<button class="deny" type="submit" name="decision" value="deny">Deny</button></form>`
    : '';
  return layout(
    `Approve ${r.tool}`,
    `<h1>Approve a call of <code>${escapeHtml(r.tool)}</code></h1>` +
      `<p>Signed in as <strong>${escapeHtml(approver)}</strong>. State: <span class="state" id="state">${escapeHtml(state)}</span></p><dl>` +
      row('Caller (principal)', `<code>${escapeHtml(r.principal)}</code>`) +
      row('Tool', `<code>${escapeHtml(r.tool)}</code>`) +
      row('Description', escapeHtml(tool.description ?? '')) +
      row('Annotations', annotations) +
      row('Arguments digest', `<code>${escapeHtml(r.argumentsDigest)}</code>`) +
      row('Policy revision', `<code>${escapeHtml(r.policyRevision)}</code>`) +
      row('Expires', escapeHtml(new Date(r.expiresAt).toISOString())) +
      decided +
      `</dl><h2>Arguments</h2><pre id="arguments"><code>${escapeHtml(pretty(r.arguments))}</code></pre>${form}`,
  );
}

export function signInPage(next: string, csrf: string, failed: boolean): string {
  return layout(
    'Sign in to approve',
    `<h1>Sign in to approve</h1>` +
      (failed
        ? `<p class="error">${escapeHtml(errors.approver_unauthenticated.message)}: the credential was not accepted.</p>`
        : '') +
      `<form method="post" action="/login"><input type="hidden" name="csrf" value="${escapeHtml(csrf)}">` +
      `<input type="hidden" name="next" value="${escapeHtml(next)}">` +
      `<label for="credential">API key or token</label><p><input id="credential" type="password" name="credential" autocomplete="off" required></p>` +
      `<button type="submit">Sign in</button></form>`,
  );
}

export function errorPage(error: ErrorId): string {
  const e = errors[error];
  return layout(e.code, `<h1>${escapeHtml(e.code)}</h1><p class="error" id="error">${escapeHtml(e.message)}</p>`);
}
