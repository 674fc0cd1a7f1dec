/**
 * The one registry of errors toolgate itself produces. Codes, statuses and
 * JSON-RPC numbers are a public contract: agents branch on them, so they never
 * change once released. The README's error table is kept equal to this list by
 * test/unit/docs.test.ts.
 *
 * JSON-RPC reserves -32768…-32000 (MCP claims -32020…-32099), so toolgate's own
 * errors use -31xxx where the last three digits repeat the HTTP status.
 */

export interface ErrorDef {
  /** Stable snake_case code, also sent as `error.data.code`. */
  readonly code: string;
  readonly status: number;
  readonly rpcCode: number;
  /** Whether the same request may succeed if sent again unchanged. */
  readonly retryable: boolean;
  /** Says what to do next; never carries request content. */
  readonly message: string;
  /** A closed, machine-actionable next step for agents. */
  readonly hint: Hint;
  /** When it happens, for the README table. */
  readonly when: string;
  /**
   * A refusal the model can act on by changing its call: on tools/call from
   * MCP 2025-11-25 on it is answered as a tool result with `isError: true`
   * (SEP-1303), which clients hand to the model, instead of a protocol error,
   * which they raise to the application.
   */
  readonly toolResult?: true;
  /**
   * Keeps its HTTP status in every mode and on every method: the client acts
   * at the HTTP layer (authentication, step-up, framing, the session), so the
   * status is the message. Everything else is written as `mcp/tool-error.ts`
   * `wireFor` decides.
   */
  readonly keepsStatus?: true;
  /**
   * Sent only by the approver page, the gRPC API or the CLI, never on the MCP
   * endpoint, so it has no wire form to choose (the README's wire table
   * leaves it out).
   */
  readonly outsideMcp?: true;
}

export type Hint =
  | 'fix_request'
  | 'fix_headers'
  | 'fix_arguments'
  | 'restart_listing'
  | 'authenticate'
  | 'request_scopes'
  | 'step_up_credential'
  | 'retry_later'
  | 'reduce_size'
  | 'use_allowed_method'
  | 'start_new_session'
  | 'contact_operator'
  | 'get_approval';

function def(d: ErrorDef): ErrorDef {
  return Object.freeze(d);
}

export const errors = Object.freeze({
  header_mismatch: def({
    code: 'header_mismatch',
    status: 400,
    rpcCode: -32020,
    retryable: false,
    hint: 'fix_headers',
    keepsStatus: true,
    message:
      'Mcp-Method, Mcp-Name or MCP-Protocol-Version disagree with the body, a required one is missing, or an MCP header is given twice; send each header once, mirroring the body',
    when: 'Mcp-Method/Mcp-Name/MCP-Protocol-Version disagree with the body, or are missing where 2026-07-28 requires them; an Mcp-Param-* header the tool schema declares disagrees with the arguments; or an Mcp-* or MCP-Protocol-Version field comes more than once',
  }),
  parse_error: def({
    code: 'parse_error',
    status: 400,
    rpcCode: -32700,
    retryable: false,
    hint: 'fix_request',
    keepsStatus: true,
    message: 'The body is not valid JSON; send one JSON-RPC message encoded as UTF-8 JSON',
    when: 'malformed JSON body',
  }),
  nesting_too_deep: def({
    code: 'nesting_too_deep',
    status: 400,
    rpcCode: -32600,
    retryable: false,
    hint: 'fix_request',
    keepsStatus: true,
    message: 'The body nests objects and arrays more than 512 levels deep; send a flatter message',
    when: 'a body whose objects and arrays nest more than 512 levels deep (checked before parsing, for bodies over 1,024 characters)',
  }),
  duplicate_key: def({
    code: 'duplicate_key',
    status: 400,
    rpcCode: -32600,
    retryable: false,
    hint: 'fix_request',
    keepsStatus: true,
    message: 'An object in the body names a member twice, which servers read differently; send each name once',
    when: 'a JSON object anywhere in the body with a member name given twice (compared after unescaping, and ignoring what Go servers ignore: letter case, ſ for s, K (U+212A) for k)',
  }),
  case_variant_key: def({
    code: 'case_variant_key',
    status: 400,
    rpcCode: -32600,
    retryable: false,
    hint: 'fix_request',
    toolResult: true,
    message:
      'A member name differs from a protocol field or a declared argument only in letter case, which some servers read as that field; use the exact name',
    when: 'a JSON-RPC member (`Method`), a params member toolgate reads (`Name`, `Arguments`, `paramſ`) or a tools/call argument differing from a property the schema declares (`Path` for `path`; keyword `properties` at its pointer) only as Go servers ignore: letter case, ſ for s, K (U+212A) for k',
  }),
  invalid_request: def({
    code: 'invalid_request',
    status: 400,
    rpcCode: -32600,
    retryable: false,
    hint: 'fix_request',
    keepsStatus: true,
    message: 'The body is not a single JSON-RPC 2.0 message; batches are not supported, send one message per POST',
    when: 'JSON that is not one JSON-RPC 2.0 request, notification or response (batches included), a method name that is not visible ASCII, or (with a policy) tools/call, tools/list or toolgate/discover sent without an id',
  }),
  invalid_path: def({
    code: 'invalid_path',
    status: 400,
    rpcCode: -31400,
    retryable: false,
    hint: 'fix_request',
    keepsStatus: true,
    message: 'The request target is ambiguous; send a plain absolute path without encoded slashes, backslashes or dots',
    when: 'a request target servers could route differently: an encoded `/`, `\\` or `.`, a raw `\\`, a malformed `%` escape, or not a path',
  }),
  invalid_arguments: def({
    code: 'invalid_arguments',
    status: 400,
    rpcCode: -32602,
    retryable: false,
    hint: 'fix_arguments',
    toolResult: true,
    message:
      "The arguments do not satisfy the tool's inputSchema; see error.data.errors for the failing locations and keywords",
    when: "tools/call arguments fail the tool's inputSchema: pointers and keywords only, never values; `required` adds the `missing` property names (from the schema), `additionalProperties` only the `count` at the parent's pointer (the unexpected names are the caller's own)",
  }),
  inexact_number: def({
    code: 'inexact_number',
    status: 400,
    rpcCode: -32602,
    retryable: false,
    hint: 'fix_arguments',
    toolResult: true,
    message:
      "An integer in the arguments has more digits than toolgate can check exactly against the tool's inputSchema; see error.data.errors for its location",
    when: "tools/call arguments hold an integer beyond ±2^53 that a double cannot represent exactly (keyword `precision` at its pointer), and the tool's inputSchema compares values (`minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`, `const`, `enum`, `uniqueItems`) or an external validator is hooked to the call",
  }),
  invalid_params: def({
    code: 'invalid_params',
    status: 400,
    rpcCode: -32602,
    retryable: false,
    hint: 'fix_request',
    message: 'The method parameters are invalid; see error.data.errors for the failing locations and keywords',
    when: 'toolgate/discover params break the input rules (query 1–500 characters without control characters, limit 1–16, no unknown params)',
  }),
  unknown_tool: def({
    code: 'unknown_tool',
    status: 400,
    rpcCode: -32602,
    retryable: false,
    hint: 'fix_request',
    message: 'No tool of this name exists on this server; list the tools again',
    when: 'tools/call names a tool the server does not have (after one catalogue refresh), or no tool at all; checked before grants, for every caller; with `TOOLGATE_HIDE_UNGRANTED` also a tool the caller is not granted',
  }),
  invalid_resource_uri: def({
    code: 'invalid_resource_uri',
    status: 400,
    rpcCode: -32602,
    retryable: false,
    hint: 'fix_request',
    message:
      'The resource URI is not in the normal form toolgate decides on (lower-case scheme and authority, upper-case percent escapes of reserved characters only, no dot segments, visible ASCII); send the URI as the server listed it',
    when: 'resources/read or resources/subscribe names a URI outside the normal form of docs/policy.md, or none, while the policy polices resources',
  }),
  task_not_found: def({
    code: 'task_not_found',
    status: 200,
    rpcCode: -32602,
    retryable: false,
    hint: 'fix_request',
    message: 'Invalid params: no task with this id exists for this caller',
    when: 'tasks/get, tasks/result, tasks/cancel or tasks/update name a task this principal did not create through toolgate, or one that expired; answered as a server answers an unknown task id (JSON-RPC -32602 at HTTP 200), so ids cannot be probed',
  }),
  invalid_cursor: def({
    code: 'invalid_cursor',
    status: 400,
    rpcCode: -32602,
    retryable: false,
    hint: 'restart_listing',
    message: 'The cursor is invalid, expired, or bound to state that has changed; repeat the request without a cursor',
    when: 'cursor tampered, expired, or bound to other state',
  }),
  unauthenticated: def({
    code: 'unauthenticated',
    status: 401,
    rpcCode: -31401,
    retryable: false,
    hint: 'authenticate',
    keepsStatus: true,
    message: 'No valid credential was presented; send a valid one in the Authorization header',
    when: 'no or bad credential; `WWW-Authenticate` carries `resource_metadata`, and for a refused ServiceAccount token `error.data.reason` (`expired`, `not_yet_valid`, `wrong_audience`, `untrusted_signer`, `revoked`, `malformed`) with a matching `error_description`',
  }),
  tool_not_granted: def({
    code: 'tool_not_granted',
    status: 403,
    rpcCode: -31403,
    retryable: false,
    hint: 'contact_operator',
    message:
      'This principal is not granted this tool, so the call was not run; ask the operator for a grant if it should be (when scopes would grant it, the hint is request_scopes and error.data.requiredScopes names them)',
    when: 'no grant or an explicit deny; `insufficient_scope` challenge when scopes would help',
  }),
  resource_not_granted: def({
    code: 'resource_not_granted',
    status: 403,
    rpcCode: -31403,
    retryable: false,
    hint: 'contact_operator',
    message:
      'This principal is not granted this resource, so it was not read; ask the operator for a grant if it should be',
    when: 'resources/read, resources/subscribe or a resource completion/complete with no `resources` row allowing the URI, an explicit deny, or a condition that does not hold (`error.data.reason` `condition` or `condition_error`); only once the policy has a `resources` section',
  }),
  prompt_not_granted: def({
    code: 'prompt_not_granted',
    status: 403,
    rpcCode: -31403,
    retryable: false,
    hint: 'contact_operator',
    message:
      'This principal is not granted this prompt, so it was not served; ask the operator for a grant if it should be',
    when: 'prompts/get or a prompt completion/complete with no `prompts` row allowing the name, an explicit deny, or a condition that does not hold; only once the policy has a `prompts` section',
  }),
  no_tool_granted: def({
    code: 'no_tool_granted',
    status: 403,
    rpcCode: -31403,
    retryable: false,
    hint: 'request_scopes',
    message: 'No tool is granted to this principal yet; the scopes in error.data.requiredScopes would grant some',
    when: 'tools/list from an OAuth/JWT bearer caller who may call no tool while some scopes would grant tools; `insufficient_scope` challenge naming them (anyone else gets an empty list)',
  }),
  credential_too_weak: def({
    code: 'credential_too_weak',
    status: 403,
    rpcCode: -31403,
    retryable: false,
    hint: 'step_up_credential',
    keepsStatus: true,
    message:
      "The tool's security level needs a stronger credential; re-authenticate as the WWW-Authenticate header asks and retry with a short-lived or one-time token",
    when: 'the tool\'s security level needs a stronger credential; `WWW-Authenticate: Bearer error="insufficient_user_authentication"` (RFC 9470), so OAuth clients can re-authenticate',
  }),
  validator_denied: def({
    code: 'validator_denied',
    status: 403,
    rpcCode: -31403,
    retryable: false,
    hint: 'fix_arguments',
    message:
      "An external validator refused this call; change the call's content, or ask the operator which rule applies",
    when: 'an external validator in active mode answered invalid with severity error (its message is never passed on)',
  }),
  tool_contract_changed: def({
    code: 'tool_contract_changed',
    status: 403,
    rpcCode: -31403,
    retryable: false,
    hint: 'contact_operator',
    message:
      "The tool's contract (description or schema) changed from the one the operator approved, so it is quarantined; ask the operator to review and approve it",
    when: 'contract pinning in enforce mode: the tool is quarantined because its digest is not approved (drift, an unpinned tool with `unknownTools: quarantine`, or a high-severity lint finding with `lint: enforce`); error.data names the tool and the approved digest prefix',
  }),
  approval_required: def({
    code: 'approval_required',
    status: 403,
    rpcCode: -31403,
    retryable: true,
    hint: 'get_approval',
    message:
      'A person must approve this call before it runs; open error.data.url, and once it is approved repeat the call unchanged',
    when: 'a tools/call decided by a `require_approval` row, from a client that cannot take a URL elicitation (MCP 2025-06-18 and older, or a 2026-07-28 client without the url elicitation capability or that declined it); `error.data` carries `approvalId` and `url`',
  }),
  approval_url_elicitation: def({
    code: 'approval_required',
    status: 200,
    rpcCode: -32042,
    retryable: true,
    hint: 'get_approval',
    message:
      'A person must approve this call before it runs; complete the URL elicitation in error.data.elicitations, then repeat the call unchanged',
    when: 'the same, on MCP 2025-11-25: the URLElicitationRequiredError (-32042, sent with HTTP 200 so clients read it) with one URL-mode elicitation in `error.data.elicitations`, plus `approvalId` and `url`. On 2026-07-28 the call is answered with an `input_required` result instead (no error)',
  }),
  approval_denied: def({
    code: 'approval_denied',
    status: 403,
    rpcCode: -31403,
    retryable: false,
    hint: 'contact_operator',
    message: 'An approver denied this call; it will not run. Ask the approver why before calling again',
    when: 'the repeat of a call whose approval an approver denied (told once; a further call asks for a new approval)',
  }),
  approval_expired: def({
    code: 'approval_expired',
    status: 403,
    rpcCode: -31403,
    retryable: true,
    hint: 'get_approval',
    message: 'The approval for this call expired before it was used; call again to ask for a new one',
    when: "the repeat of a call whose approval (pending or approved) outlived the row's `expiresIn` (told once; a further call asks anew)",
  }),
  approval_state_invalid: def({
    code: 'approval_state_invalid',
    status: 400,
    rpcCode: -31400,
    retryable: false,
    hint: 'fix_request',
    message:
      'The requestState toolgate issued for an approval does not verify for this call; repeat the original call without it',
    when: 'a 2026-07-28 retry whose toolgate `requestState` is tampered, expired, or issued to another principal or for other arguments or policy',
  }),
  approver_unauthenticated: def({
    code: 'approver_unauthenticated',
    status: 401,
    rpcCode: -31401,
    retryable: false,
    hint: 'authenticate',
    outsideMcp: true,
    message: 'Sign in as an approver first',
    when: "the approver page without a valid session cookie or trusted header, or a sign-in whose credential the policy's verifiers refuse",
  }),
  approval_csrf_invalid: def({
    code: 'approval_csrf_invalid',
    status: 403,
    rpcCode: -31403,
    retryable: false,
    hint: 'fix_request',
    outsideMcp: true,
    message: 'The form is missing its CSRF token or it does not match this session; reload the page and submit again',
    when: "an approver page form post without the token bound to the approver's session (or sign-in cookie)",
  }),
  approver_scope_required: def({
    code: 'approver_scope_required',
    status: 403,
    rpcCode: -31403,
    retryable: false,
    hint: 'request_scopes',
    outsideMcp: true,
    message: "Deciding this approval needs the row's approverScope; sign in with a credential that holds it",
    when: "an approver (page, gRPC) without the row's `approverScope`; `error.data.requiredScopes` names it",
  }),
  self_approval_refused: def({
    code: 'self_approval_refused',
    status: 403,
    rpcCode: -31403,
    retryable: false,
    hint: 'contact_operator',
    outsideMcp: true,
    message: 'You cannot approve your own call; ask another approver',
    when: 'the principal who made the call approves it (page, CLI, gRPC) while the row says `selfApproval: false` (the default)',
  }),
  admin_scope_required: def({
    code: 'admin_scope_required',
    status: 403,
    rpcCode: -31403,
    retryable: false,
    hint: 'request_scopes',
    outsideMcp: true,
    message: 'This gRPC call needs the admin scope; use a credential that holds it',
    when: 'gRPC GrantAdmin, or PolicyService.Explain for another principal, without the admin scope (`TOOLGATE_GRPC_ADMIN_SCOPE`)',
  }),
  not_found: def({
    code: 'not_found',
    status: 404,
    rpcCode: -31404,
    retryable: false,
    hint: 'fix_request',
    keepsStatus: true,
    message: 'Nothing is served at this path; MCP requests go to the MCP endpoint',
    when: 'with a policy, a path that is neither the MCP endpoint nor under `TOOLGATE_PASSTHROUGH_PATHS`',
  }),
  approval_not_found: def({
    code: 'approval_not_found',
    status: 404,
    rpcCode: -31404,
    retryable: false,
    hint: 'fix_request',
    outsideMcp: true,
    message: 'No approval has this id; it may have been used, expired long ago, or never existed',
    when: 'the approver page, CLI or gRPC names an approval id toolgate does not hold',
  }),
  session_not_found: def({
    code: 'session_not_found',
    status: 404,
    rpcCode: -31404,
    retryable: false,
    hint: 'start_new_session',
    keepsStatus: true,
    message: 'This caller has no session with this id; start a new one with initialize',
    when: "an `Mcp-Session-Id` this principal did not open through toolgate: another caller's, ended, forgotten after `TOOLGATE_SESSION_IDLE_MS`, or never issued",
  }),
  method_not_found: def({
    code: 'method_not_found',
    status: 404,
    rpcCode: -32601,
    retryable: false,
    hint: 'use_allowed_method',
    keepsStatus: true,
    message: 'Method not found',
    when: "a method the request's protocol version does not have, answered as a 2026-07-28 server answers it (HTTP 404, SEP-2575): `resources/subscribe` (replaced by `subscriptions/listen`) and the tasks extension's removed `tasks/result`",
  }),
  missing_client_capability: def({
    code: 'missing_client_capability',
    status: 400,
    rpcCode: -32021,
    retryable: false,
    hint: 'fix_request',
    message:
      "The request does not declare a client capability this method needs (error.data.requiredCapabilities); declare it in the request's _meta and send it again",
    when: 'a 2026-07-28 `tasks/get`, `tasks/update` or `tasks/cancel` whose request does not declare the tasks extension, answered as the extension says a server answers it, before any task is looked up',
  }),
  method_not_allowed: def({
    code: 'method_not_allowed',
    status: 405,
    rpcCode: -31405,
    retryable: false,
    hint: 'use_allowed_method',
    keepsStatus: true,
    message: 'The MCP endpoint accepts POST, GET and DELETE (plus HEAD and OPTIONS); see the Allow header',
    when: 'an HTTP method other than POST, GET, DELETE, HEAD or OPTIONS on the MCP path',
  }),
  invalid_timeout: def({
    code: 'invalid_timeout',
    status: 400,
    rpcCode: -31400,
    retryable: false,
    hint: 'fix_request',
    message:
      'The caller budget (Toolgate-Timeout-Ms header or params._meta["io.toolgate/timeoutMs"]) must be a whole number of milliseconds from 0 to 3600000',
    when: 'a tools/call whose `Toolgate-Timeout-Ms` header (given once) or `params._meta["io.toolgate/timeoutMs"]` is not a whole number of milliseconds from 0 to 3,600,000',
  }),
  idempotency_key_required: def({
    code: 'idempotency_key_required',
    status: 400,
    rpcCode: -31400,
    retryable: false,
    hint: 'fix_request',
    message:
      'This tool changes state and cannot safely run twice; send the call with an Idempotency-Key header (or params._meta["io.toolgate/idempotencyKey"]) and reuse the key when you repeat it',
    when: 'a `non_idempotent_write` tool whose policy says `idempotency: required` is called without an idempotency key, or with a malformed one (1-255 visible ASCII characters)',
  }),
  call_in_progress: def({
    code: 'call_in_progress',
    status: 409,
    rpcCode: -31409,
    retryable: true,
    hint: 'retry_later',
    message:
      'A call with this idempotency key is still running; repeat it with the same key after error.data.retryAfterMs',
    when: 'a repeat of a keyed call while the first one is still running (its lease has not run out); with `retryAfterMs` and `Retry-After`',
  }),
  outcome_unknown: def({
    code: 'outcome_unknown',
    status: 409,
    rpcCode: -31409,
    retryable: false,
    hint: 'contact_operator',
    message:
      'A call with this idempotency key was started but its outcome is unknown (toolgate stopped or the deadline passed mid-call); it is not run again: check its effect with the tool owner, then use a new key if it must run',
    when: 'a repeat of a keyed call whose first run ended without a result: the toolgate replica died mid-call (lease ran out) or the deadline passed after the call was sent',
  }),
  idempotent_result_not_stored: def({
    code: 'idempotent_result_not_stored',
    status: 409,
    rpcCode: -31409,
    retryable: false,
    hint: 'contact_operator',
    message:
      'The call with this idempotency key completed, but its result was larger than toolgate keeps; it is not run again: use a new key if it must run',
    when: 'a repeat of a keyed call that completed with a result larger than `TOOLGATE_IDEMPOTENCY_MAX_RESULT_BYTES`',
  }),
  tool_grants_changed: def({
    code: 'tool_grants_changed',
    status: 409,
    rpcCode: -31409,
    retryable: true,
    hint: 'restart_listing',
    message: 'Grants changed while this page was being prepared; repeat the request without a cursor',
    when: 'grants changed while a page was being prepared',
  }),
  approval_already_decided: def({
    code: 'approval_already_decided',
    status: 409,
    rpcCode: -31409,
    retryable: false,
    hint: 'fix_request',
    outsideMcp: true,
    message: 'This approval was already decided or has expired; nothing was changed',
    when: 'an approve or deny (page, CLI, gRPC) of an approval that is no longer pending, or whose time ran out',
  }),
  grants_read_only: def({
    code: 'grants_read_only',
    status: 409,
    rpcCode: -31409,
    retryable: false,
    hint: 'contact_operator',
    outsideMcp: true,
    message:
      'Grants come from the policy file here and cannot be changed over the API; change the policy file, or run with TOOLGATE_GRANT_SOURCE=redis',
    when: 'gRPC GrantAdmin change while grants come from the policy file',
  }),
  payload_too_large: def({
    code: 'payload_too_large',
    status: 413,
    rpcCode: -31413,
    retryable: false,
    hint: 'reduce_size',
    keepsStatus: true,
    message: 'The request body exceeds the configured limit; send a smaller message',
    when: 'request body larger than the configured limit (checked while streaming)',
  }),
  tool_schema_too_large: def({
    code: 'tool_schema_too_large',
    status: 413,
    rpcCode: -31413,
    retryable: false,
    hint: 'contact_operator',
    message: "A matching tool's schema alone exceeds the response size bound; ask the operator to simplify that tool",
    when: 'one schema alone exceeds the response bound',
  }),
  idempotency_key_reused: def({
    code: 'idempotency_key_reused',
    status: 422,
    rpcCode: -31422,
    retryable: false,
    hint: 'fix_request',
    message: 'This idempotency key was used for a call with other arguments; use a new key for a different call',
    when: 'an idempotency key already used by the same principal for the same tool with arguments whose RFC 8785 digest differs',
  }),
  rate_limited: def({
    code: 'rate_limited',
    status: 429,
    rpcCode: -31429,
    retryable: true,
    hint: 'retry_later',
    message: 'Too many requests; retry after the time in the Retry-After header',
    when: 'rate limit exceeded; with `Retry-After`',
  }),
  headers_too_large: def({
    code: 'headers_too_large',
    status: 431,
    rpcCode: -31431,
    retryable: false,
    hint: 'reduce_size',
    keepsStatus: true,
    message: 'The request headers exceed the configured count or size limit; send fewer or smaller headers',
    when: 'more header fields, or more header bytes, than configured',
  }),
  internal_error: def({
    code: 'internal_error',
    status: 500,
    rpcCode: -31500,
    retryable: true,
    hint: 'retry_later',
    message: 'toolgate failed to process the request; retry, and report it to the operator if it persists',
    when: 'a fault inside toolgate (details are logged, never returned)',
  }),
  upstream_unavailable: def({
    code: 'upstream_unavailable',
    status: 502,
    rpcCode: -31502,
    retryable: true,
    hint: 'retry_later',
    message: 'The MCP server refused or reset the connection; retry later',
    when: 'upstream refused or reset the connection',
  }),
  upstream_timeout: def({
    code: 'upstream_unavailable',
    status: 504,
    rpcCode: -31504,
    retryable: true,
    hint: 'retry_later',
    message: 'The MCP server did not answer in time; retry later',
    when: 'upstream did not answer within the deadline',
  }),
  upstream_circuit_open: def({
    code: 'upstream_unavailable',
    status: 503,
    rpcCode: -31503,
    retryable: true,
    hint: 'retry_later',
    message: 'The MCP server has been failing and calls to it are paused; retry after error.data.retryAfterMs',
    when: "the upstream's circuit breaker is open (consecutive failures or a failure ratio over a window): refused at once, with `retryAfterMs` and `Retry-After`",
  }),
  result_too_large: def({
    code: 'result_too_large',
    status: 502,
    rpcCode: -31502,
    retryable: false,
    hint: 'reduce_size',
    message:
      "The tool's result is larger than the policy lets through (error.data.size and limit, in bytes); ask the tool for less",
    when: "a tool's result is over its `results.maxBytes` (or the 16 MiB the guard reads at most): the upstream request is aborted; on a stream, the final event says so",
  }),
  result_blocked: def({
    code: 'result_blocked',
    status: 502,
    rpcCode: -31502,
    retryable: false,
    hint: 'contact_operator',
    message:
      "The tool's result was withheld: it contains text that reads as instructions to the model (error.data.rules names the lint rules)",
    when: "a tool's result trips a high lint rule under `results.injection: block`",
  }),
  result_not_guardable: def({
    code: 'result_not_guardable',
    status: 502,
    rpcCode: -31502,
    retryable: false,
    hint: 'contact_operator',
    message:
      "The tool's result was withheld: redacting or marking it would break the tool's outputSchema, or it could not be read",
    when: "a guarded result whose edited `structuredContent` no longer satisfies the tool's outputSchema, or that cannot be parsed or walked",
  }),
  deadline_exceeded: def({
    code: 'deadline_exceeded',
    status: 504,
    rpcCode: -31504,
    retryable: true,
    hint: 'retry_later',
    message:
      "The call's deadline passed; for a tool that changes state, error.data.outcome says whether it may have run. Retry with a larger budget",
    when: "the call's deadline (the tool's `timeoutMs`, else `TOOLGATE_UPSTREAM_TIMEOUT_MS`; less when the caller sent its remaining budget) passed before forwarding (not sent) or during the exchange (upstream aborted; `outcome: unknown` unless the tool is `read_only`)",
  }),
  credential_check_unavailable: def({
    code: 'credential_check_unavailable',
    status: 503,
    rpcCode: -31503,
    retryable: true,
    hint: 'retry_later',
    keepsStatus: true,
    message: 'The credential could not be checked right now; send the same request again shortly',
    when: "a one-time token that verifies, while the store of used token ids is unreachable, answered by a replica, or lost data the token may have been recorded in; or a ServiceAccount token while the API server cannot be asked for the cluster's keys or (with `tokenReview`) for a TokenReview (fails closed)",
  }),
  request_timeout: def({
    code: 'request_timeout',
    status: 408,
    rpcCode: -31408,
    retryable: true,
    hint: 'retry_later',
    keepsStatus: true,
    message: 'The request head did not arrive in time; send the whole request promptly on a new connection',
    when: 'the request line and headers took longer than TOOLGATE_CLIENT_HEADERS_TIMEOUT_MS (the connection is closed)',
  }),
  grants_unavailable: def({
    code: 'grants_unavailable',
    status: 503,
    rpcCode: -31503,
    retryable: true,
    hint: 'retry_later',
    message: 'Grants could not be confirmed as current; retry later',
    when: 'grant storage missing, unreachable, stale or malformed (fails closed)',
  }),
  tasks_unavailable: def({
    code: 'tasks_unavailable',
    status: 503,
    rpcCode: -31503,
    retryable: true,
    hint: 'retry_later',
    keepsStatus: true,
    message: 'Who created this task could not be confirmed, so the request was not forwarded; retry later',
    when: 'a tasks/* request, or the task a tools/call created, while the task store (Redis) cannot be reached (fails closed)',
  }),
  approval_outcome_unknown: def({
    code: 'approval_outcome_unknown',
    status: 409,
    rpcCode: -31409,
    retryable: false,
    hint: 'contact_operator',
    message:
      "The approval for this exact call was being spent when toolgate lost its store's confirmation, so that call may have run; this one is not run: check its effect, then repeat the call to ask for a new approval",
    when: 'a repeat of an approved call whose spend Redis applied but never confirmed (a failover or stall mid-spend) or that an identical call is spending right now; once the spend is a minute old, the first repeat told so consumes it and the next one asks for a new approval',
  }),
  approval_unavailable: def({
    code: 'approval_unavailable',
    status: 503,
    rpcCode: -31503,
    retryable: true,
    hint: 'retry_later',
    message: 'The approval store could not be reached, so the call was not run; retry later',
    when: 'a tools/call needing approval, or an approver decision, while the approval store (Redis) cannot be reached (fails closed)',
  }),
  idempotency_unavailable: def({
    code: 'idempotency_unavailable',
    status: 503,
    rpcCode: -31503,
    retryable: true,
    hint: 'retry_later',
    message: 'The idempotency key could not be recorded, so the call was not run; retry with the same key later',
    when: 'a keyed tools/call while the idempotency store (Redis) cannot be reached: the call is refused rather than run without a record',
  }),
  idempotency_not_durable: def({
    code: 'idempotency_not_durable',
    status: 503,
    rpcCode: -31503,
    retryable: false,
    hint: 'contact_operator',
    message:
      'This toolgate keeps idempotency records only in process, which a restart forgets, so it does not run keyed calls to tools with side effects that must not repeat; the operator sets TOOLGATE_IDEMPOTENCY_FILE or TOOLGATE_REDIS_URL',
    when: 'a keyed tools/call to a `non_idempotent_write` tool on a toolgate with neither `TOOLGATE_REDIS_URL` nor `TOOLGATE_IDEMPOTENCY_FILE`: its record would not survive a restart, so the call is refused rather than risk a second run',
  }),
  validator_unavailable: def({
    code: 'validator_unavailable',
    status: 503,
    rpcCode: -31503,
    retryable: true,
    hint: 'retry_later',
    message: 'An external validator could not be asked, so the call is refused; retry later',
    when: 'an external validator in active mode without failOpen timed out, failed or answered malformed',
  }),
  tool_validation_unavailable: def({
    code: 'tool_validation_unavailable',
    status: 503,
    rpcCode: -31503,
    retryable: false,
    hint: 'contact_operator',
    message:
      "The tool's inputSchema cannot be enforced, so calls to it are refused; ask the operator to fix the tool's schema",
    when: 'schema unsupported or malformed, or validation bounds exceeded',
  }),
});

export type ErrorId = keyof typeof errors;

/**
 * `error.data.reason` of an `unauthenticated` refusal: why a recognised token
 * was refused, where the verifier can tell and the caller can act on it.
 * Closed values only, never the token, its claims or an exception's text.
 */
export type CredentialProblem =
  | 'expired'
  | 'not_yet_valid'
  | 'wrong_audience'
  | 'untrusted_signer'
  | 'revoked'
  | 'malformed';

/**
 * Errors that stop the process before it serves: they are printed as one
 * line and the process exits 2. Neither is ever sent to a client.
 */

/** A process setting (flag or environment variable) that is invalid; names only the setting. */
export class SettingError extends Error {
  readonly setting: string;
  constructor(setting: string, problem: string) {
    super(`invalid setting ${setting}: ${problem}`);
    this.name = 'SettingError';
    this.setting = setting;
  }
}

/** A start-up failure other than one setting: an invalid policy, grant store settings, a port in use. */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}
