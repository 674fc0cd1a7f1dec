import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from '../node-http.ts';
import type { Approvals, Approver } from '../../approval/approvals.ts';
import { isApprovalId } from '../../approval/record.ts';
import { authenticate } from '../../auth/chain.ts';
import type { Verifier } from '../../auth/types.ts';
import type { CatalogueView } from '../../catalogue/view.ts';
import { isPrincipalId, isScope } from '../../config/policy/grant-row.ts';
import { errors, type ErrorId } from '../../errors.ts';
import { approvalPage, errorPage, signInPage, STYLESHEET } from './page.ts';
import {
  cookie,
  csrfToken,
  csrfValid,
  issueSession,
  LOGIN_COOKIE,
  newLoginNonce,
  readCookie,
  readSession,
  SESSION_COOKIE,
  SESSION_SECONDS,
} from './session.ts';

/** Forms are a handful of short fields; anything larger is refused unread. */
const MAX_FORM_BYTES = 16 * 1024;
const LOGIN_SECONDS = 600;

/**
 * No script may run and nothing may be loaded but our stylesheet; forms post
 * only here; no site may frame the page (clickjacking an Approve button).
 */
const CONTENT_SECURITY_POLICY =
  "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const SECURITY_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
} as const;

export interface ApproverPageOptions {
  readonly approvals: Approvals;
  /** The verifiers of the policy in force: approvers sign in with what the policy accepts. */
  verifiers(): readonly Verifier[];
  /** Tool descriptions and annotations, as the upstream declares them. */
  readonly catalogue: CatalogueView;
  readonly sessionKey: Buffer;
  readonly csrfKey: Buffer;
  /** Behind an authenticating proxy: the headers naming the approver and their scopes. */
  readonly trusted?: { readonly idHeader: string; readonly scopesHeader: string | undefined };
  readonly now?: () => number;
}

/**
 * The approver page, on its own listener: sign in (a key or JWT the policy's
 * verifiers accept, exchanged for a session cookie; or a trusted header set
 * by an authenticating proxy), see one approval, approve or deny it.
 */
export function createApproverServer(options: ApproverPageOptions): Server {
  const now = options.now ?? Date.now;
  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?', 1)[0] as string;
    if (path === '/approver.css' && req.method === 'GET') {
      res
        .writeHead(200, {
          ...SECURITY_HEADERS,
          'content-type': 'text/css; charset=utf-8',
          'content-length': Buffer.byteLength(STYLESHEET),
        })
        .end(STYLESHEET);
      return;
    }
    if (path === '/login' && req.method === 'POST') return signIn(req, res);
    const m = /^\/approvals\/([^/]+)(\/decision)?$/.exec(path);
    if (m === null || !isApprovalId(m[1])) return fail(res, 'approval_not_found');
    const id = m[1];
    if (m[2] === undefined && req.method === 'GET') return show(req, res, id);
    if (m[2] !== undefined && req.method === 'POST') return decide(req, res, id);
    res.writeHead(405, { ...SECURITY_HEADERS, allow: m[2] === undefined ? 'GET' : 'POST' }).end();
  };

  /** Who is asking, and the value their CSRF tokens are bound to. */
  const approverOf = (req: IncomingMessage): { approver: Approver; bound: string } | undefined => {
    if (options.trusted !== undefined) {
      const id = req.headers[options.trusted.idHeader];
      if (typeof id !== 'string' || !isPrincipalId(id)) return undefined;
      const raw = options.trusted.scopesHeader === undefined ? undefined : req.headers[options.trusted.scopesHeader];
      const scopes = typeof raw === 'string' ? raw.split(/[\s,]+/).filter(isScope) : [];
      return { approver: { id, scopes: new Set(scopes) }, bound: `header\u0000${id}` };
    }
    const session = readSession(options.sessionKey, readCookie(req.headers.cookie, SESSION_COOKIE), now());
    return session === undefined ? undefined : { approver: session, bound: `session\u0000${session.sid}` };
  };

  const show = async (req: IncomingMessage, res: ServerResponse, id: string) => {
    const who = approverOf(req);
    if (who === undefined) return askToSignIn(req, res, id, false);
    const record = await options.approvals.get(id).catch(() => 'unavailable' as const);
    if (record === 'unavailable') return fail(res, 'approval_unavailable');
    if (record === undefined) return fail(res, 'approval_not_found');
    const entry = options.catalogue.get(record.tool)?.tool;
    const description = typeof entry?.description === 'string' ? entry.description : undefined;
    html(
      res,
      200,
      approvalPage(
        record,
        { ...(description !== undefined && { description }), annotations: entry?.annotations },
        who.approver.id,
        csrfToken(options.csrfKey, who.bound),
        now(),
      ),
    );
  };

  const askToSignIn = (req: IncomingMessage, res: ServerResponse, next: string, failed: boolean) => {
    if (options.trusted !== undefined) return fail(res, 'approver_unauthenticated');
    const nonce = readCookie(req.headers.cookie, LOGIN_COOKIE) ?? newLoginNonce();
    html(res, 401, signInPage(next, csrfToken(options.csrfKey, `login\u0000${nonce}`), failed), {
      'set-cookie': cookie(LOGIN_COOKIE, nonce, LOGIN_SECONDS),
    });
  };

  const signIn = async (req: IncomingMessage, res: ServerResponse) => {
    if (options.trusted !== undefined) return fail(res, 'approval_not_found');
    const form = await readForm(req);
    if (form === undefined) return fail(res, 'approval_csrf_invalid');
    const nonce = readCookie(req.headers.cookie, LOGIN_COOKIE);
    if (nonce === undefined || !csrfValid(options.csrfKey, `login\u0000${nonce}`, form.get('csrf') ?? undefined))
      return fail(res, 'approval_csrf_invalid');
    const next = form.get('next') ?? '';
    const credential = form.get('credential') ?? '';
    const target = isApprovalId(next) ? next : undefined;
    // The credential goes to the verifiers exactly as a bearer token would; it is never logged or shown.
    const auth =
      credential === '' || /[\r\n]/.test(credential)
        ? undefined
        : await authenticate(options.verifiers(), { authorization: `Bearer ${credential}`, headers: {} });
    if (auth === undefined || !auth.ok) {
      if (target === undefined) return fail(res, 'approver_unauthenticated');
      return askToSignIn(req, res, target, true);
    }
    const session = issueSession(options.sessionKey, { id: auth.principal.id, scopes: auth.principal.scopes }, now());
    res
      .writeHead(303, {
        ...SECURITY_HEADERS,
        location: target === undefined ? '/' : `/approvals/${target}`,
        'set-cookie': [cookie(SESSION_COOKIE, session, SESSION_SECONDS), cookie(LOGIN_COOKIE, '', 0)],
      })
      .end();
  };

  const decide = async (req: IncomingMessage, res: ServerResponse, id: string) => {
    const who = approverOf(req);
    if (who === undefined) return fail(res, 'approver_unauthenticated');
    const form = await readForm(req);
    if (form === undefined || !csrfValid(options.csrfKey, who.bound, form.get('csrf') ?? undefined))
      return fail(res, 'approval_csrf_invalid');
    const choice = form.get('decision');
    if (choice !== 'approve' && choice !== 'deny') return fail(res, 'approval_csrf_invalid');
    const outcome = await options.approvals.decide(
      id,
      who.approver,
      choice === 'approve' ? 'approved' : 'denied',
      'page',
    );
    if (!outcome.ok) return fail(res, outcome.error);
    res.writeHead(303, { ...SECURITY_HEADERS, location: `/approvals/${id}` }).end();
  };

  return createServer((req, res) => {
    route(req, res).catch(() => {
      if (!res.headersSent) fail(res, 'internal_error');
      else res.destroy();
    });
  });
}

function html(res: ServerResponse, status: number, body: string, extra: Record<string, string | string[]> = {}): void {
  res
    .writeHead(status, {
      ...SECURITY_HEADERS,
      'content-type': 'text/html; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      ...extra,
    })
    .end(body);
}

/** A refusal: the registry code and message as a page, with the registry status; nothing from the request is echoed. */
function fail(res: ServerResponse, error: ErrorId): void {
  html(res, errors[error].status, errorPage(error), { 'toolgate-error': errors[error].code });
}

/** An urlencoded form of at most MAX_FORM_BYTES, or undefined. */
async function readForm(req: IncomingMessage): Promise<URLSearchParams | undefined> {
  const type = req.headers['content-type'] ?? '';
  if (!type.toLowerCase().startsWith('application/x-www-form-urlencoded')) {
    req.resume();
    return undefined;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) return undefined;
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}
