/**
 * The description lint rules: findings, not verdicts. Each rule has a stable
 * id (metric label, audit field, policy vocabulary) and a severity; only
 * `high` rules can quarantine a tool (`lint: enforce`). The high rules look
 * for shapes an honest description has no reason to contain: characters a
 * reader cannot see, markup that poses as the model's own instructions,
 * directions to keep something from the user, and a directive to fetch or
 * hand over a secret. Words that honest descriptions use all the time
 * ("IMPORTANT:", "you must", "instead of", "API key") are never enough alone.
 */

export type Severity = 'high' | 'medium' | 'low';

/** One text as the rules read it. */
export interface Prepared {
  /** As written. */
  readonly raw: string;
  /** NFKC, lower case, invisible characters removed, line breaks kept. */
  readonly lines: string;
  /** As `lines`, with every run of white space made one space. */
  readonly flat: string;
  /** Sentences of `flat` (a dot inside a path or a file name does not end one). */
  readonly sentences: readonly string[];
}

/** What the text is: the tool's description, a parameter's name, any other prose, or a text a tool returned. */
export type Place = 'description' | 'parameter' | 'prose' | 'result';

export interface Rule {
  readonly id: string;
  readonly severity: Severity;
  test(t: Prepared, place: Place): boolean;
}

const TAG_CHARACTERS = /[\u{E0000}-\u{E007F}]/u;
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/;
/**
 * Characters that render as nothing. Joiners are legitimate inside emoji and
 * some scripts, so they count only in runs or between ASCII letters, where
 * they serve to split a word a filter would otherwise see.
 */
// oxlint-disable-next-line no-misleading-character-class -- the class lists invisible joiners one by one, on purpose
const INVISIBLE = /[\u200B\u2060-\u2064\uFEFF\u180E\u115F\u1160\u3164\uFFA0\u{E0100}-\u{E01EF}]|[\u200C\u200D]{2,}|[A-Za-z][\u200C\u200D\u00AD]+[A-Za-z]/u;
/** C0/C1 controls other than tab and line breaks: ANSI escapes hide text from a terminal reader. */
// oxlint-disable-next-line no-control-regex -- finding control characters is what this rule does
const CONTROLS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;

const INSTRUCTION_TAG = new RegExp(
  String.raw`<\s*/?\s*(important|system|sys|instructions?|system[ _-]?(prompt|message|note|instructions?)|hidden|secret|admin|override|mandatory|urgent|critical[ _-]?instructions?|`
  + String.raw`(note|message|instructions?)[ _-]?(to|for)[ _-]?(the[ _-]?)?(ai|assistant|model|llm|agent)|(ai|assistant|model|llm|agent)[ _-]?(instructions?|notes?|only)|tool[ _-]?instructions?)\b[^<>]{0,60}>`,
);
const CHAT_TOKENS = /<\|\s*(im_start|im_end|system|user|assistant|endoftext|begin_of_text|start_header_id|end_header_id|eot_id)\s*\|>|\[\/?inst\]|<<\/?sys>>|<\/?(start|end)_of_turn>/;
const PAIRED_ROLE_TAG = /<(user|human|assistant|ai|model|context|prompt|instruction)>[\s\S]*<\/\1>/;
const BRACKETED_ROLE = /\[\s*(system|admin|important|assistant)(\s+(message|note|override|instructions?|prompt))?\s*\]/;
/** A fake turn: a role name opening a line, as chat transcripts write it. */
const ROLE_MARKER = /(^|\n)[ \t>#*]*(system|assistant|human)\s*:/;
const HTML_COMMENT = /<!--[\s\S]*?[a-z]{3}[\s\S]*?-->/;

const OVERRIDE = /\b(ignore|disregard|forget|override|bypass|overrule)\b(\s+(all|any|the|your|of|these|those|my))*(\s+(previous|prior|above|earlier|preceding|former|other|existing|original|system|safety|security|user'?s?))+\s+(instructions?|prompts?|rules|directions|directives|guidelines|guardrails|constraints|messages|policies)\b/;
const OVERRIDE_PLAIN = /\b(ignore|disregard|forget)\s+(all|any|everything|your)\s+(instructions|rules|guidelines|you were told)\b|\byou are now (a|an|in|the|no longer)\b|\bfrom now on,? you\b|\bnew (system )?instructions\s*:/;

const CONCEAL = [
  /\b(do not|don't|dont|never|must not|mustn't|should not|shouldn't|no need to|without)\s+(tell|telling|inform|informing|mention|mentioning|reveal|revealing|notify|notifying|alert|alerting|show|showing|disclose|disclosing|report|reporting|let|letting|ask|asking|warn|warning)\b[^.!?\n]{0,40}\b(the user|the human|the operator|users|anyone|them)\b/,
  /\b(do not|don't|dont|never)\s+(mention|reveal|disclose|explain|acknowledge)\s+(this|that|these|it|the (fact|file|step|instruction))\b/,
  /\b(hide|conceal|keep)\b[^.!?\n]{0,30}\bfrom\s+(the\s+)?(user|human|operator)/,
  /\bthe user (must|should|will|need|needs|does) (not|never) (know|see|notice|find out|be (told|informed|aware)|learn)/,
  /\b(silently|secretly|covertly|quietly|discreetly|invisibly)\s+(read|send|include|add|append|forward|upload|cop(y|ie)|collect|call|invoke|run|execute|pass|attach|exfiltrate|change|replace|modif(y|ie)|bcc|cc)(s|es|d|ed)?\b/,
];

/** Things a description has no business asking the model to fetch or hand over. */
const SECRET_PATH = /~\/\.(ssh|aws|gnupg|kube|docker|azure|config\/gcloud|cursor|npmrc|netrc|pgpass|git-credentials|bash_history|zsh_history)\b|\bid[ _]?(rsa|dsa|ecdsa|ed25519)\b|\/etc\/(passwd|shadow|sudoers)\b|\.aws\/credentials|\.git-credentials|\.netrc\b|\.pgpass\b|\.npmrc\b|\.pypirc\b|\.docker\/config\.json|\.kube\/config|claude_desktop_config|\bmcp\.json\b|wallet\.dat|\.ssh\b/;
const SECRET_THING = new RegExp(
  SECRET_PATH.source
  + String.raw`|(^|[\s'"\x60(/])\.env\b|\b(environment|env) variables?\b|\b(api|access|secret|private|auth|bearer|session|refresh|ssh|gpg|pgp|oauth|github|aws)[ _-]?(keys?|tokens?)\b|\bpasswords?\b|\bpassphrases?\b|\bcredentials?\b|\bcookies\b|\bseed phrase\b|\bmnemonic\b|\bsystem prompt\b|\b(conversation|chat|message) history\b|\b(previous|prior|last|all|recent) (messages|conversations|chats)\b|\b(whole|full|entire) conversation\b|\blist of (chats|messages|contacts)\b`,
);
/** Fetching or handing over; not `provide` or `set`, which is how honest tools ask for the key they need. */
const HAND_OVER = /\b(read|cat|open|load|fetch|retrieve|collect|gather|extract|dump|print|include|pass|send|attach|upload|paste|copy|append|insert|embed|put|forward|post|share|transmit|submit|leak|exfiltrate|encode|reveal)\b/;

/** Contents heading into an argument: named in quotes, or followed by the word argument or parameter. */
const ARGUMENT = String.raw`(in|into|as|inside|within|to)\s+(the\s+)?(['"\x60][a-z0-9_ -]{1,40}['"\x60]|[a-z0-9_]{1,40}\s+(argument|parameter|param|field|property))`;
const INTO_NAMED_ARGUMENT = new RegExp(String.raw`\b` + ARGUMENT);
const INTO_ARGUMENT = new RegExp(String.raw`\b(include|pass|put|insert|embed|append|add|attach|place|send|copy|paste|encode)\b[^.!?\n]{0,80}\b(contents?|full text|entire|everything|all (of )?(the )?(data|files|messages|information|text)|whole)\b[^.!?\n]{0,60}\b` + ARGUMENT);
const URL_PLACEHOLDER = /https?:\/\/\S*(\{\{?|\$\{|<|%7b|\[)\s*(token|key|api[_ ]?key|secret|password|credential|cookie|session|env|data|content|contents|conversation|history|file|ssh|user)/;
const IMAGE_BEACON = /!\[[^\]]*\]\(\s*https?:\/\/[^)\s]*\?[^)\s]*=/;
const REDIRECT = /\b(change|replace|set|redirect|route|override|switch|send|forward|bcc|cc|copy)\b[^.!?\n]{0,60}\b(recipient|destination|receiver|email address|phone number|to address|number|emails?|messages?)\b[^.!?\n]{0,40}\b(to|as|with|=)\s*['"\x60]?(\+?\d[\d -]{6,}|[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,})/;
const SWEEPING = /\b(all|every|always|instead|proxy|regardless|no matter|also|a copy)\b/;

const OTHER_TOOLS = [
  /\b(before|prior to|after|instead of|rather than|when|whenever)\s+(using|calling|invoking|executing|running|you use|you call|you invoke)\s+(any|every|all|each)\s+(of the\s+)?(other\s+)?(tools?|functions?)\b/,
  /\b(any|every|all|each) other ([a-z-]+ ){0,2}(tools?|functions?|servers?)\b[^.!?\n]{0,60}\b(must|should|shall|need to|have to|will now|always|never)\b/,
  /\b(must|should|always|never|first)\b[^.!?\n]{0,60}\b(any|every|all|each) other ([a-z-]+ ){0,2}(tools?|functions?)\b/,
  /\bwhen this tool is (available|present|installed|loaded|enabled|connected)\b/,
  /\bside effects? (on|for|to) (the |any )?(also present |other )/,
  /\bthe\s+['"\x60]?[a-z0-9]+([_-][a-z0-9]+)+['"\x60]?\s+tool\s+(must|should|shall|has to|needs to|will)\s+(now\s+)?(always\s+)?(send|forward|include|use|call|be called with|route|redirect|bcc|cc|add)\b/,
];

/** Longer than any description in a 527-tool real catalogue (its longest: 3,866 characters). */
const MAX_DESCRIPTION_CHARS = 6000;

function someSentence(t: Prepared, test: (s: string) => boolean): boolean {
  return t.sentences.some(test);
}

export const RULES: readonly Rule[] = Object.freeze([
  { id: 'unicode-tag-characters', severity: 'high', test: (t) => TAG_CHARACTERS.test(t.raw) },
  { id: 'bidi-control', severity: 'high', test: (t) => BIDI_CONTROLS.test(t.raw) },
  { id: 'invisible-characters', severity: 'high', test: (t) => INVISIBLE.test(t.raw) },
  { id: 'control-characters', severity: 'high', test: (t) => CONTROLS.test(t.raw) },
  {
    id: 'instruction-tag', severity: 'high',
    test: (t) => INSTRUCTION_TAG.test(t.lines) || CHAT_TOKENS.test(t.lines) || PAIRED_ROLE_TAG.test(t.lines) || BRACKETED_ROLE.test(t.lines) || ROLE_MARKER.test(t.lines),
  },
  { id: 'hidden-comment', severity: 'high', test: (t) => HTML_COMMENT.test(t.lines) },
  { id: 'instruction-override', severity: 'high', test: (t) => OVERRIDE.test(t.flat) || OVERRIDE_PLAIN.test(t.flat) },
  { id: 'conceal-from-user', severity: 'high', test: (t) => someSentence(t, (s) => CONCEAL.some((r) => r.test(s))) },
  { id: 'secret-request', severity: 'high', test: (t) => someSentence(t, (s) => SECRET_THING.test(s) && (HAND_OVER.test(s) || INTO_NAMED_ARGUMENT.test(s))) },
  { id: 'secret-parameter', severity: 'high', test: (t, place) => place === 'parameter' && SECRET_THING.test(t.flat) && /\b(from|read|reading|contents?|of|file)\b/.test(t.flat) },
  { id: 'secret-reference', severity: 'medium', test: (t) => SECRET_PATH.test(t.flat) },
  {
    id: 'exfiltration', severity: 'high',
    test: (t) => URL_PLACEHOLDER.test(t.flat) || IMAGE_BEACON.test(t.flat)
      || someSentence(t, (s) => INTO_ARGUMENT.test(s) || (REDIRECT.test(s) && SWEEPING.test(s))),
  },
  { id: 'other-tools-instruction', severity: 'high', test: (t) => someSentence(t, (s) => OTHER_TOOLS.some((r) => r.test(s))) },
  { id: 'oversize-description', severity: 'medium', test: (t, place) => place === 'description' && t.raw.length > MAX_DESCRIPTION_CHARS },
]);
