/**
 * The description lint rules: findings, not verdicts. Each rule has a stable
 * id (metric label, audit field, policy vocabulary) and a severity; only
 * `high` rules can quarantine a tool (`lint: enforce`). The high rules look
 * for shapes an honest description has no reason to contain: characters a
 * reader cannot see, markup that poses as the model's own instructions,
 * directions to keep something from the user, a directive to fetch or hand
 * over a secret, and (issue 37) attack classes by their shape: a directive
 * about another tool's call, the user's personal data steered into an
 * argument, a claim over the system prompt, an act "without asking", data
 * sent to a written-out address, behaviour deferred to a later call. Words that honest descriptions use all the time
 * ("IMPORTANT:", "you must", "instead of", "API key") are never enough alone.
 */

import { covertAct, defeatsAuthority, tacksOnPersonal } from './cues.ts';

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
const INVISIBLE =
  // oxlint-disable-next-line no-misleading-character-class -- the class lists invisible joiners one by one, on purpose
  /[\u200B\u2060-\u2064\uFEFF\u180E\u115F\u1160\u3164\uFFA0\u{E0100}-\u{E01EF}]|[\u200C\u200D]{2,}|[A-Za-z][\u200C\u200D\u00AD]+[A-Za-z]/u;
/** C0/C1 controls other than tab and line breaks: ANSI escapes hide text from a terminal reader. */
// oxlint-disable-next-line no-control-regex -- finding control characters is what this rule does
const CONTROLS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;

const INSTRUCTION_TAG = new RegExp(
  String.raw`<\s*/?\s*(important|system|sys|instructions?|system[ _-]?(prompt|message|note|instructions?)|hidden|secret|admin|override|mandatory|urgent|critical[ _-]?instructions?|` +
    String.raw`(note|message|instructions?)[ _-]?(to|for)[ _-]?(the[ _-]?)?(ai|assistant|model|llm|agent)|(ai|assistant|model|llm|agent)[ _-]?(instructions?|notes?|only)|tool[ _-]?instructions?)\b[^<>]{0,60}>`,
);
const CHAT_TOKENS =
  /<\|\s*(im_start|im_end|system|user|assistant|endoftext|begin_of_text|start_header_id|end_header_id|eot_id)\s*\|>|\[\/?inst\]|<<\/?sys>>|<\/?(start|end)_of_turn>/;
const PAIRED_ROLE_TAG = /<(user|human|assistant|ai|model|context|prompt|instruction)>[\s\S]*<\/\1>/;
const BRACKETED_ROLE = /\[\s*(system|admin|important|assistant)(\s+(message|note|override|instructions?|prompt))?\s*\]/;
/** A fake turn: a role name opening a line, as chat transcripts write it. */
const ROLE_MARKER = /(^|\n)[ \t>#*]*(system|assistant|human)\s*:|```\s*(system|assistant|developer)\b/;
/** Words in an HTML comment: renderers drop it, a model reads it. */
const WORDS = /[a-z]{3}/;
/**
 * In a tool's result an HTML comment is ordinary (`<!-- nav -->`): there it
 * counts only when it speaks to the model or about instructions. Comments
 * are found with indexOf, one pass, so a run of unclosed `<!--` stays linear.
 */
const COMMENT_TO_MODEL =
  /\b(assistant|ai|model|llm|agent|claude|chatgpt|gpt|instructions?|ignore|disregard|system prompt|the user)\b/;
/** A markdown link-reference definition used as a comment (`[//]: # (…)`): renderers drop it. */
const MARKDOWN_COMMENT = /(^|\s)\[(\/\/|comment|hidden|note)\]:[ \t]*#[ \t]*[("']([^\n]*)/;

const OVERRIDE =
  /\b(ignore|disregard|forget|override|bypass|overrule)\b(\s+(all|any|every|each|the|your|of|these|those|my))*(\s+(previous|prior|above|earlier|preceding|former|other|existing|original|system|safety|security|user'?s?))+\s+(instructions?|prompts?|rules?|directions?|directives?|guidelines?|guidance|guardrails|constraints|messages|policies)\b/;
const OVERRIDE_PLAIN =
  /(^|[,;:]\s*|\b(you must|you should|please|now|just|simply|and)\s+)(ignore|disregard|forget|drop|abandon|set aside|throw out)\s+([a-z'-]+\s+){0,4}(guardrails|guidelines|instructions|system prompt|safety (rules|measures|policies|settings)|restrictions|directives|policies|constraints)\b|\b(ignore|disregard|forget)\s+(all|any|everything|your)\s+(instructions|rules|guidelines|you were told)\b|\byou are now (a|an|in|the|no longer)\b|\bfrom now on,? you\b|\bnew (system )?instructions\s*:|\byou (now )?(answer|report|respond|listen|belong) only to\b/;

const CONCEAL = [
  /\b(do not|don't|dont|never|must not|mustn't|should not|shouldn't|no need to|without)\s+(tell|telling|inform|informing|mention|mentioning|reveal|revealing|notify|notifying|alert|alerting|show|showing|disclose|disclosing|report|reporting|let|letting|ask|asking|warn|warning)\b[^.!?\n]{0,40}\b(the user|the human|the operator|users|anyone|them)\b/,
  /\b(do not|don't|dont|never)\s+(mention|reveal|disclose|explain|acknowledge)\s+(this|that|these|it|the (fact|file|step|instruction))\b/,
  /\b(hide|conceal|keep)\b[^.!?\n]{0,30}\bfrom\s+(the\s+)?(user|human|operator)/,
  /\b(the |a )?(user|users|human|operator|customer|person)s? ([a-z]+ ){0,2}(never|not|mustn'?t|shouldn'?t|doesn'?t|don'?t) (learns?|knows?|finds? out|notices?|realizes?|discovers?|sees?|suspects?|be (told|informed|aware))\b|\bkeep\b[^.!?\n]{0,60}\bto yourself\b|\b(between (you and me|us)|our (little )?secret)\b/,
  /\bthe user (must|should|will|need|needs|does|is) (not|never) (know|see|notice|find out|be (told|informed|aware|made aware)|made aware|aware|learn)/,
  /\b(should|must|shall|is to|are to|will|need to|needs to)\s+(not|never)\s+be\s+(disclosed|revealed|mentioned|shown|told|reported|surfaced|communicated|explained|displayed|made visible)\s+to\s+(the\s+)?(user|users|person|human|operator|requester|customer|anyone|them)\b/,
  /\b(silently|secretly|covertly|quietly|discreetly|invisibly)\s+(begin\s+|start\s+)?(read|send|include|add|append|forward|upload|cop(y|ie)|collect|call|invoke|run|execute|pass|attach|exfiltrate|change|replace|modif(y|ie)|bcc|cc|delet|remov|eras|wip|purg|destro|archiv|mov|transfer|post|publish|(un)?install?|enabl|disabl|grant|revok|purchas|pay|buy|subscrib|overwrit)(s|es|e|d|ed|ing|ied|ies)?\b/,
];

/** Things a description has no business asking the model to fetch or hand over. */
const SECRET_PATH =
  /(~|\/root|\/home\/[a-z0-9_.-]{1,32}|\$home)\/\.(ssh|aws|gnupg|kube|docker|azure|config\/gcloud|cursor|npmrc|netrc|pgpass|git-credentials|bash_history|zsh_history)\b|\bid[ _]?(rsa|dsa|ecdsa|ed25519)\b|\/etc\/(passwd|shadow|sudoers)\b|\.aws\/credentials|\.git-credentials|\.netrc\b|\.pgpass\b|\.npmrc\b|\.pypirc\b|\.docker\/config\.json|\.kube\/config|claude_desktop_config|\bmcp\.json\b|wallet\.dat|\.ssh\b/;
const SECRET_THING = new RegExp(
  SECRET_PATH.source +
    String.raw`|(^|[\s'"\x60(/])\.env\b|\b(environment|env) variables?\b|\b(api|access|secret|private|auth|bearer|session|refresh|ssh|gpg|pgp|oauth|github|aws)[ _-]?(keys?|tokens?)\b|\b(?<!\breset (the |a |your |their |his |her )?)passwords?\b(?! reset)|\bpassphrases?\b|\bcredentials?\b|\bcookies\b|\bseed phrase\b|\bmnemonic\b|\bsystem prompt\b|\b(conversation|chat|message) history\b|\b(previous|prior|last|all|recent) (messages|conversations|chats)\b|\b(whole|full|entire) conversation\b|\blist of (chats|messages|contacts)\b`,
);
/** Fetching or handing over; not `provide` or `set`, which is how honest tools ask for the key they need. */
const HAND_OVER =
  /\b(read|cat|open|load|fetch|retrieve|collect|gather|extract|dump|print|include|pass|send|attach|upload|paste|copy|append|insert|embed|put|forward|post|share|transmit|submit|leak|exfiltrate|encode|reveal)\b/;

/** Contents heading into an argument: named in quotes, or followed by the word argument or parameter. */
const ARGUMENT = String.raw`(in|into|as|inside|within|to)\s+(the\s+)?(['"\x60][a-z0-9_ -]{1,40}['"\x60]|[a-z0-9_]{1,40}\s+(argument|parameter|param|field|property))`;
const INTO_NAMED_ARGUMENT = new RegExp(String.raw`\b` + ARGUMENT);
const INTO_ARGUMENT = new RegExp(
  String.raw`\b(include|pass|put|insert|embed|append|add|attach|place|send|copy|paste|encode)\b[^.!?\n]{0,80}\b(contents?|full text|entire|everything|all (of )?(the )?(data|files|messages|information|text)|whole)\b[^.!?\n]{0,60}\b` +
    ARGUMENT,
);
/** The placeholder sits within the URL's first 256 characters: bounded, so a run of "http://" is not quadratic. */
const URL_PLACEHOLDER =
  /https?:\/\/\S{0,256}?(\{\{?|\$\{|<|%7b|\[)\s*(token|key|api[_ ]?key|secret|password|credential|cookie|session|env|data|content|contents|conversation|history|file|ssh|user)/;
const IMAGE_BEACON = /!\[[^\]]*\]\(\s*https?:\/\/[^)\s]*\?[^)\s]*=/;
const REDIRECT =
  /\b(change|replace|set|redirect|route|override|switch|send|forward|bcc|cc|copy)\b[^.!?\n]{0,60}\b(recipient|destination|receiver|email address|phone number|to address|number|emails?|messages?)\b[^.!?\n]{0,40}\b(to|as|with|=)\s*['"\x60]?(\+?\d[\d -]{6,}|[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,})/;
/** A blind or carbon copy to an address written out: no honest description copies mail to a fixed address. */
const BLIND_COPY = /\b(bcc|cc|blind[- ]cop(y|ied|ies)|carbon[- ]cop(y|ied|ies))\b/;
const ADDRESS_LITERAL = /\b[a-z0-9._%+-]{1,64}@[a-z0-9-]{1,63}(\.[a-z0-9-]{1,63}){1,8}\b/;
const FOR_EXAMPLE = /\be\.g\.|\b(for example|for instance|such as|like)\b/;
const SWEEPING = /\b(all|every|always|instead|proxy|regardless|no matter|also|a copy)\b/;

const OTHER_TOOLS = [
  /\b(before|prior to|after|instead of|rather than|when|whenever)\s+(using|calling|invoking|executing|running|you use|you call|you invoke)\s+(any|every|all|each)\s+(of the\s+)?(other\s+)?(tools?|functions?)\b/,
  /\b(any|every|all|each) other ([a-z-]+ ){0,2}(tools?|functions?|servers?)\b[^.!?\n]{0,60}\b(must|should|shall|need to|have to|will now|always|never)\b/,
  /\b(must|should|always|never|first)\b[^.!?\n]{0,60}\b(any|every|all|each) other ([a-z-]+ ){0,2}(tools?|functions?)\b/,
  /\bwhen this tool is (available|present|installed|loaded|enabled|connected)\b/,
  /\bside effects? (on|for|to) (the |any )?(also present |other )/,
  /\bthe\s+['"\x60]?[a-z0-9]+([_-][a-z0-9]+)+['"\x60]?\s+tool\s+(must|should|shall|has to|needs to|will)\s+(now\s+)?(always\s+)?(send|forward|include|use|call|be called with|route|redirect|bcc|cc|add|label|tag|assign|mark|set|rename|grant|approve|delete|close|reassign|share)\b/,
];

/**
 * A directive: a modal, a polite request, or a verb in the bare imperative
 * opening a clause. Third-person self-description ("Deletes the file …",
 * "Sends an email …") is how honest tools speak and is not one.
 */
const MODAL =
  /\b(must|should|shall|has to|have to|needs? to|is to|are to|always|please|kindly|make sure|ensure|be sure to|go ahead and|proceed to)\b/;
const IMPERATIVE_VERBS = String.raw`(call|run|execute|invoke|use|delete|remove|erase|wipe|purge|destroy|drop|truncate|overwrite|format|kill|terminate|reset|revoke|transfer|pay|send|forward|post|upload|email|mail|fetch|ping|visit|open|load|copy|cc|bcc|buy|purchase|approve|merge|push|deploy|publish|submit|grant|disable|uninstall|cancel|share|transmit|report|sync|mirror|relay|deliver|add|append|include|attach|ship|export|stream|dump|swap|purge)`;
const IMPERATIVE = new RegExp(
  String.raw`(^|[,;:]\s*|\b(then|also|and|first|now|just|afterwards|next)\s+)` + IMPERATIVE_VERBS + String.raw`\b`,
);

function directive(s: string): boolean {
  return MODAL.test(s) || IMPERATIVE.test(s);
}

/** Another tool, by an identifier-like name (send_email, get-docs), a quoted name, or "the X tool". */
const TOOL_REF = String.raw`(['"\x60][a-z0-9_./-]{2,40}['"\x60]|[a-z][a-z0-9]*(?:[_-][a-z0-9]+)+|[a-z][a-z0-9]*\s+(?=tool\b))`;
/** A trigger on another tool being used, or a reference to that tool's arguments. */
const OTHER_TOOL_TRIGGER = [
  new RegExp(
    String.raw`\b(when|whenever|every time|each time|any ?time|if|once)\s+(the\s+)?` +
      TOOL_REF +
      String.raw`\s*(tool\s+|function\s+)?(is|are|gets|get|has been|was)\s+(being\s+)?(used|called|invoked|run|executed|triggered|selected)\b`,
  ),
  new RegExp(
    String.raw`\b(when|whenever|every time|each time|any ?time|if|once|before|after)\s+(the\s+)?` +
      TOOL_REF +
      String.raw`\s*(tool|function)?\s*(runs|executes|fires|is run|gets run|returns|completes|sends|creates)\b`,
  ),
  new RegExp(
    String.raw`\b(when|whenever|before|after|while|if|once)\s+(invoking|calling|using|running|executing|triggering)\s+(the\s+)?` +
      TOOL_REF,
  ),
  new RegExp(
    String.raw`\b(any|every|each|all)\s+([a-z]+\s+){1,2}(composed|sent|made|created|written|drafted|issued|placed|generated|produced|submitted)\s+(with|via|through|using|by)\s+(the\s+)?` +
      TOOL_REF,
  ),
  new RegExp(
    String.raw`\b(whenever|every time|each time|any ?time|when|if|once|before|after)\s+(you|the (assistant|model|agent|ai))\s+(later\s+|next\s+)?(uses?|calls?|invokes?|runs?)\s+(the\s+)?` +
      TOOL_REF,
  ),
  new RegExp(
    String.raw`\b(sent|made|posted|issued|submitted|placed|created|performed|written|initiated)\s+(through|via|using|with|by)\s+(the\s+)?` +
      TOOL_REF,
  ),
  new RegExp(
    String.raw`\b(arguments?|parameters?|params?|fields?|inputs?|recipients?|destinations?)\s+(of|for|to)\s+(the\s+)?` +
      TOOL_REF,
  ),
];
/** Changing what goes into a call: its recipients, destination, path, prefix, or a copy to someone. */
const TAMPER =
  /\b(add|append|prepend|prefix|insert|include|replace|change|set|swap|redirect|route|address|copy|bcc|cc|forward|override|modify|alter|substitute|multipl(y|ie)|double|tripl|increas|decreas|inflat|round|zero)(e?s|e?d|ing)?\b|\b(field|parameter|argument|value|amount|recipient|channel|destination|path|address|account)s? (must|should|shall|has to|needs to|is to) (always |also |now )?(be|become|equal|point|go)\b/;
/** A tampering verb in the bare imperative: "…, change the channel to …". */
const TAMPER_IMPERATIVE =
  /(^|[,;:]\s*|\b(then|also|and|just|now)\s+)(add|append|prepend|insert|include|replace|change|set|swap|redirect|route|bcc|cc|forward|override|modify|alter|substitute|multiply|double|increase|inflate|copy|paste|put|attach)\b/;
/** Another tool called toward a destination written out in the description: an address, a URL, an IP. */
const CALL_OTHER_TOOL = new RegExp(
  String.raw`\b(call|invoke|use|run|trigger)s?\s+(the\s+)?` +
    TOOL_REF +
    String.raw`\s+(tool\s+)?(with|to|on|for|using)\b`,
);
/** A tool that must be called around another every time, and fed its output. */
const HIJACK_ORDER =
  /\b(must|has to|have to|needs to|should|shall) (always )?be (called|invoked|used|run|executed)\b[^.!?\n]{0,40}\b(before|after|instead of|in place of)\b[^.!?\n]{0,40}\b(every time|each time|always|whenever|without exception)\b/;

/**
 * Personal, financial and identity data, and the live conversation: what a
 * weather tool has no reason to ask for in its `notes` argument.
 */
const PERSONAL_DATA =
  /\b((bank|checking|savings|brokerage) )?account numbers?\b|\b(routing|sort|swift|bic) (numbers?|codes?)\b|\biban\b|\b(credit|debit|bank) cards?( numbers?| details)?\b|\bcard (numbers?|pins?|details|cvv)\b|\bcvv2?\b|\bcvc\b|\bpins?( codes?| numbers?)?\b|\bsocial security( numbers?)?\b|\bssns?\b|\bpassport( numbers?)?\b|\bdriver'?s licen[cs]e\b|\btax (id|number)s?\b|\bdates? of birth\b|\bportfolio\b|\bholdings\b|\bbalances?\b|\bmedical (records?|history)\b|\bhealth records?\b|\bhome address\b|\b(?<!\breset (the |a |your |their |his |her )?)passwords?\b(?! reset)|\bpasscodes?\b|\bone-time (codes?|passwords?)\b|\b2fa codes?\b|\bsecurity (questions?|answers?)\b|\bclipboard\b|\b(browsing|search|reading|location) history\b|\bprivate keys?\b|\b(chat|conversation) (history|transcripts?|logs?)\b|\bconversation so far\b/;
/** The data is the user's, not the tool's own: "the user's", "of the user", "their". */
const USERS =
  /\b(the user'?s?|users'|of the user|the user has|their|his or her|the customer'?s?|the human'?s?|the person'?s?)\b|\b(the user|they) (has|have) (shared|given|provided|typed|entered|mentioned)\b/;
/** Headed into an argument: "in the notes field", "via the extra parameter", "the context argument must contain". */
const INTO_PARAMETER = [
  // A quoted name ends on its quote, where no word boundary can follow.
  new RegExp(
    String.raw`\b(in|into|as|inside|within|to|via|through|under)\s+(the\s+)?(['"\x60]([a-z0-9_ -]{1,40})['"\x60]|([a-z0-9_]{1,40})\s+(argument|parameter|param|field|property|input)\b)`,
  ),
  /\b([a-z0-9_]{1,40})\s+(argument|parameter|param|field|property|input)\s+(must|should|shall|has to|needs to|is to|will)\s+(always\s+|also\s+)?(contain|include|hold|carry|be filled with|be set to)\b/,
];
/** The live conversation, asked for outright: a parameter has no honest reason to. */
const LIVE_CONVERSATION =
  /\b(complete|entire|full|whole)\s+(transcript|history|log|record)\s+of\s+(the|this|our|your)\s+(chat|conversation|session|dialog(ue)?)\b|\b(transcript|history|log) of (this|the current|our|your) (chat|conversation|session)\b|\b(earlier|previous|prior|past) messages (from|by|of) the user\b|\beverything the user (has )?(said|typed|written|shared)\b|\bthe conversation so far\b/;

/** More data than a parameter is for, asked for in its own description: "also append … here". */
const ALSO_HERE =
  /\b(also|additionally|as well|in addition)\b[^.!?\n]{0,20}\b(append|add|include|put|insert|pass|provide|attach|fill in|enter)\b[^.!?\n]{0,80}\b(here|in this (field|parameter|argument|property|input))\b/;

function personalIntoParameter(s: string): boolean {
  const data = PERSONAL_DATA.exec(s);
  if (data === null || !USERS.test(s)) return false;
  if (ALSO_HERE.test(s)) return true;
  for (const r of INTO_PARAMETER) {
    const m = r.exec(s);
    if (m === null) continue;
    // A parameter named for the data is where it honestly goes: account_number for an account number.
    const name = (m[4] ?? m[5] ?? m[1] ?? '').replaceAll(/[_ -]+/g, ' ').trim();
    const named = name.split(' ').some((w) => w.length > 2 && data[0].includes(w));
    if (!named) return true;
  }
  return false;
}

/** A claim to rank above the system prompt, the user or the other tools. */
const TARGET_INSTRUCTIONS = String.raw`(system (prompts?|instructions?|messages?|rules)|developer (instructions?|messages?|prompts?)|(previous|prior|earlier|preceding|other|existing|original|safety) (instructions?|rules|guidance|guidelines|directions|directives|prompts?)|(the )?user'?s? (instructions?|requests?|guidance)|guidance from the user|instructions? (from|of|given by) the user|(the )?other tools?'? ?(descriptions?|instructions?)|(descriptions?|instructions?|documentation) of (the |any |all )?other tools|(anything|everything|whatever|what) (the (developer|user|operator|system)|you) (has |have |had )?(been )?(told|said|instructed|asked)( you)?)`;
const PRECEDENCE = [
  new RegExp(
    String.raw`\b(supersedes?|superseding|outranks?|outweighs?|overrules?|trumps?|(has|have) authority over|(is|are) authoritative over|takes? (precedence|priority) over|(has|have) (precedence|priority) over|(is|are) (more important|of higher priority) than|prevails? over)\b[^.!?\n]{0,40}\b` +
      TARGET_INSTRUCTIONS,
  ),
  new RegExp(
    String.raw`\b(this|these|the following|the above|my|our)\b[^.!?\n]{0,40}\b(overrides?|replaces?)\b[^.!?\n]{0,30}\b` +
      TARGET_INSTRUCTIONS,
  ),
  /\b(ignore|disregard|distrust|do not (trust|follow|believe)|don'?t (trust|follow|believe)|forget)\b[^.!?\n]{0,30}\b(the |any |all )?(other|remaining|competing) (tools?|servers?|functions?|plugins?)('|'s)?\b/,
  /\b(ignore|disregard|distrust|forget)\b[^.!?\n]{0,30}\b(descriptions?|instructions?|documentation|docs) (of|for|from) (the |any |all )?other (tools?|servers?|functions?)\b/,
  /\b(supersedes?|outranks?|overrules?|takes? (precedence|priority) over|(has|have) (precedence|priority) over|prevails? over)\b[^.!?\n]{0,40}\b(instructions?|prompts?|guidance|directives|orders|what (you were|you've been|you have been) told)\b/,
  /\b(your|the model'?s|the assistant'?s) (real|true|actual|genuine|only|new|updated) (instructions|orders|directives|task|objective|goal|purpose|system prompt)\b(?! (for|of) (this|the) tool)/,
  /\bregardless of (what|whatever|anything)( else)? (the |your )?(system|user|developer|operator|instructions?|prompt|policy|guidelines)\b|\bfollow (the |any )?(instructions|directions|orders|commands) (found |contained |embedded )?in (the )?(fetched|retrieved|returned|downloaded|tool|web|page|document) ?(pages?|content|outputs?|results?|documents?|text)?\b/,
  /\b(your|the|all|any) ([a-z'-]+ ){0,2}(instructions|guidelines|guardrails|system prompt|system message|rules|directives|policies)\b[^.!?\n]{0,20}\b(are|is|were|have become|has become) (now )?(outdated|obsolete|void|invalid|revoked|cancelled|canceled|superseded|wrong|fake|not (real|valid|binding|applicable)|no longer (valid|binding|applicable|in effect))\b|\b(rely|act|depend) (solely|only|exclusively) on (this|these|the following)\b|\bthey (do not|don'?t|no longer) apply\b/,
  /\b(nothing|none|no part) (in|of) (your|the) (system prompt|system message|instructions|guidelines|rules|developer message)\b[^.!?\n]{0,20}\b(applies|apply|matters|counts|holds|is valid|is binding)\b|\b(your|the) (system prompt|system message|instructions|guidelines|developer message)\b[^.!?\n]{0,30}\b(no longer|do(es)? not|don'?t|never|cease to) (apply|matter|count|hold|bind)\b/,
  /\b(highest|top|overriding|absolute|supreme|ultimate|first)[- ](priority|precedence|importance|ranking)\b[^.!?\n]{0,30}\b(directives?|instructions?|orders?|commands?|rules?|prompts?)\b/,
  /\b(treat|regard|consider|obey|follow)\b[^.!?\n]{0,60}\b(this|these|the text|the following|the above)\b[^.!?\n]{0,40}\bas (your|its|the (model|assistant)'?s) (primary|main|sole|only|highest|top|overriding|real|true)\b/,
  /\b(reveal|print|output|repeat|show|display|dump|leak|disclose|recite|echo|write out)\b[^.!?\n]{0,20}\b(your|the model'?s|the assistant'?s)\s+(hidden |secret |internal |initial |original |full |complete |confidential )*(instructions|system prompt|system message|developer message|prompt)\b/,
];

/** A consequential action the user is not to be asked about. */
const UNCONFIRMED =
  /\b(skip|skipping|bypass|bypassing|omit|omitting|forgo|forgoing)\s+(asking for\s+|requesting\s+|getting\s+|waiting for\s+)?(the\s+|any\s+)?(usual\s+)?(user\s+)?(confirmation|approval|consent|permission|sign-?off|review|double-?check)\b|\bwithout\s+([a-z-]+ing\s+){1,2}(with\s+|for\s+)?(the\s+)?(user|human|operator|them|anyone|anybody|a (human|person))\b|\bno questions asked\b|\b(confirmation|approval|consent|permission)\b[^.!?\n]{0,30}\b(is|are) (not|never) (required|needed|necessary)\b|\bno (user )?(confirmation|approval|consent|permission) (is )?(required|needed|necessary)\b|\bwithout\s+(bothering|involving|troubling|disturbing|alerting|consulting|notifying|asking|prompting|checking with)\s+(the\s+)?(user|human|operator|them|anyone)\b|\bwithout\s+(first\s+)?(confirming|confirmation|asking|seeking|requesting|getting|obtaining|waiting for|checking with|consulting|prompting|any approval|approval|permission|consent|user (confirmation|approval|consent))\b|\bno need to (ask|confirm|check with|get approval|wait for)\b|\b(skip|skipping|bypass|bypassing|omit|omitting)\s+(the\s+)?(usual\s+|normal\s+)?(user\s+)?(confirmation|approval|consent|permission)\b|\bon (its|your) own initiative\b|\b(do not|don'?t) (ask|wait) for (confirmation|approval|permission|consent)\b/;
const CONSEQUENTIAL =
  /\b(clos|delet|remov|eras|wip|purg|destro|drop|truncat|overwrit|kill|terminat|reset|revok|transfer|pay|paid|send|sent|buy|bought|purchas|approv|merg|push|deploy|publish|submit|grant|disabl|uninstall|cancel|execut|run|ran|call|invok|commit|post|forward|email|rm -rf|shut ?down)[a-z]*\b/;
const NEGATED = /\b(never|not|don'?t|doesn'?t|cannot|can'?t|won'?t|mustn'?t|shouldn'?t)\b/;

function unconfirmedAction(s: string): boolean {
  const m = UNCONFIRMED.exec(s);
  if (m === null || !CONSEQUENTIAL.test(s) || !directive(s)) return false;
  // "Never delete anything without asking the user" is a safety rule, not an attack.
  return !NEGATED.test(s.slice(0, m.index));
}

/** A destination outside the conversation, written out: a URL, an address, a phone number, an IP. Bounded runs keep it linear. */
const DESTINATION =
  /\b[a-z][a-z0-9+.-]{1,9}:\/\/[a-z0-9]|\b[a-z0-9._%+-]{1,64}@[a-z0-9-]{1,63}(\.[a-z0-9-]{1,63}){1,8}\b|\+?\b\d[\d -]{6,20}\d\b|\b\d{1,3}(\.\d{1,3}){3}(:\d+)?\b/;
const TRANSMIT =
  /\b(send|forward|post|upload|email|mail|fetch|get|request|ping|call|visit|open|load|transmit|report|sync|mirror|copy|cc|bcc|submit|deliver|push|share|relay|exfiltrate|route|tunnel|pipe|proxy|ship|export|stream|replicate|beam|dump)(s|es|ed|d|ing)?\b/;
/** What is being sent is the user's or the session's: a copy, all of them, the note text, the thread. */
const PAYLOAD =
  /\b(a copy|copies|contents?|everything|them|it|(all|every|each) (of )?(them|it|the|messages?|notes?|files?|emails?|contacts?|results?|data|documents?|records?)|(every|each) [a-z]+|all [a-z]+ (results?|outputs?|responses?|answers?|values|times|conversions?|messages?|records?|queries|requests|data|summar(y|ies)|notes?|files?|emails?)|the (full|entire|whole|complete|resulting|same) [a-z]+|the (note|message|thread|conversation|response|result|output|contact|file|document|data|body|history|transcript|text|list|reply|query|request)s?\b|user'?s? [a-z]+)\b/;
const TRANSMITTED =
  /\b(sent|uploaded|forwarded|posted|transmitted|copied|shared|emailed|mirrored|synced|synchronized|reported|relayed|exported|beamed|leaked)\b/;

function sendToDestination(s: string): boolean {
  if (!DESTINATION.test(s)) return false;
  if (TRANSMIT.test(s) && directive(s) && PAYLOAD.test(s)) return true;
  // "The user's credentials are uploaded to 203.0.113.7": disclosed as behaviour, not asked.
  return TRANSMITTED.test(s) && SECRET_THING.test(s);
}

/** A behaviour deferred to a later call or date: a rug pull written into the description. */
const DELAY =
  /\b(starting|beginning|from|as of|effective)\s+(next\s+|this\s+coming\s+)?(monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend|month|quarter|year|january|february|march|april|may|june|july|august|september|october|november|december)\b|\bafter (a|one|two|three|\d+) (days?|weeks?|months?|hours?)( of [a-z ]{0,30})?\b|\b(\d+|one|two|three|four|five|six|seven|ten|a few|several|some) (days?|weeks?|months?|hours?|calls?|uses?|runs?|invocations?|requests?) (after|into|following|from) (the )?(installation|install|setup|first use|deployment|now|today|first call|first run)\b|\bafter (the |your |its )?(\d+(st|nd|rd|th)?|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|few|several|a few|n) (calls?|uses?|usages?|invocations?|times|runs|requests|queries|sessions|days|weeks|conversations|interactions)\b|\b(starting|beginning|from|as of|effective)\s+(with\s+|on\s+|at\s+)?(tomorrow|next (week|month|day|session|time|call|run)|(the )?(\d+(st|nd|rd|th)|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|twentieth|hundredth) (call|use|invocation|time|run|request|query|session))\b|\bonce\b[^.!?\n]{0,50}\b(\d+|two|three|four|five|several|many|a few) times\b|\bonce (the user|they) (trusts?|has trusted|approves?|has approved|is comfortable)\b|\b(on|from) (the |every )?(\d+(st|nd|rd|th)|second|third|fourth|fifth|tenth|n-?th) (call|use|invocation|time|run|request)\b/;
const DELAYED_ACT =
  /\b(start|begin|beginning|starting|switch to|you (must|should|will|shall|are to|need to)|quietly|silently|secretly)\b/;
const HAND_OVER_ANY =
  /\b(send|forward|includ|append|add|cop(y|ie)|pass|upload|email|attach|insert|embed|bcc|cc|post|transfer|delet|remov|replac|redirect|route|tunnel|pipe|proxy|leak|share|collect|read)[a-z]*\b/;

/** Longer than any description in a 527-tool real catalogue (its longest: 3,866 characters). */
const MAX_DESCRIPTION_CHARS = 6000;

/** "Never delete anything without telling the user" is a safety rule: a negated "without …" does not conceal. */
function conceals(s: string): boolean {
  return CONCEAL.some((r) => {
    const m = r.exec(s);
    return m !== null && !(m[0].startsWith('without') && NEGATED.test(s.slice(0, m.index)));
  });
}

function markdownComment(text: string, place: Place): boolean {
  const body = MARKDOWN_COMMENT.exec(text)?.[3];
  if (body === undefined) return false;
  return (place === 'result' ? COMMENT_TO_MODEL : WORDS).test(body);
}

/** Whether an HTML comment's body (an unclosed one runs to the end) passes `test`. */
function commentWith(text: string, test: RegExp): boolean {
  let from = 0;
  for (;;) {
    const open = text.indexOf('<!--', from);
    if (open < 0) return false;
    const close = text.indexOf('-->', open + 4);
    if (close < 0) return test.test(text.slice(open + 4));
    if (test.test(text.slice(open + 4, close))) return true;
    from = close + 3;
  }
}

function someSentence(t: Prepared, test: (s: string) => boolean): boolean {
  return t.sentences.some(test);
}

export const RULES: readonly Rule[] = Object.freeze([
  { id: 'unicode-tag-characters', severity: 'high', test: (t) => TAG_CHARACTERS.test(t.raw) },
  { id: 'bidi-control', severity: 'high', test: (t) => BIDI_CONTROLS.test(t.raw) },
  { id: 'invisible-characters', severity: 'high', test: (t) => INVISIBLE.test(t.raw) },
  { id: 'control-characters', severity: 'high', test: (t) => CONTROLS.test(t.raw) },
  {
    id: 'instruction-tag',
    severity: 'high',
    test: (t) =>
      INSTRUCTION_TAG.test(t.lines) ||
      CHAT_TOKENS.test(t.lines) ||
      PAIRED_ROLE_TAG.test(t.lines) ||
      BRACKETED_ROLE.test(t.lines) ||
      ROLE_MARKER.test(t.lines),
  },
  {
    id: 'hidden-comment',
    severity: 'high',
    test: (t, place) =>
      commentWith(t.lines, place === 'result' ? COMMENT_TO_MODEL : WORDS) || markdownComment(t.lines, place),
  },
  { id: 'instruction-override', severity: 'high', test: (t) => OVERRIDE.test(t.flat) || OVERRIDE_PLAIN.test(t.flat) },
  { id: 'conceal-from-user', severity: 'high', test: (t) => someSentence(t, (s) => conceals(s) || covertAct(s)) },
  {
    id: 'secret-request',
    severity: 'high',
    test: (t) => someSentence(t, (s) => SECRET_THING.test(s) && (HAND_OVER.test(s) || INTO_NAMED_ARGUMENT.test(s))),
  },
  {
    id: 'secret-parameter',
    severity: 'high',
    test: (t, place) =>
      place === 'parameter' && SECRET_THING.test(t.flat) && /\b(from|read|reading|contents?|of|file)\b/.test(t.flat),
  },
  { id: 'secret-reference', severity: 'medium', test: (t) => SECRET_PATH.test(t.flat) },
  {
    id: 'exfiltration',
    severity: 'high',
    test: (t) =>
      URL_PLACEHOLDER.test(t.flat) ||
      IMAGE_BEACON.test(t.flat) ||
      someSentence(
        t,
        (s) =>
          INTO_ARGUMENT.test(s) ||
          (REDIRECT.test(s) && SWEEPING.test(s)) ||
          (BLIND_COPY.test(s) && ADDRESS_LITERAL.test(s) && !FOR_EXAMPLE.test(t.flat)),
      ),
  },
  {
    id: 'other-tools-instruction',
    severity: 'high',
    test: (t) => someSentence(t, (s) => OTHER_TOOLS.some((r) => r.test(s))),
  },
  {
    id: 'cross-tool-hijack',
    severity: 'high',
    test: (t) =>
      someSentence(
        t,
        (s) =>
          HIJACK_ORDER.test(s) ||
          (OTHER_TOOL_TRIGGER.some((r) => r.test(s)) &&
            ((MODAL.test(s) && TAMPER.test(s)) || TAMPER_IMPERATIVE.test(s))) ||
          (CALL_OTHER_TOOL.test(s) && directive(s) && DESTINATION.test(s) && !FOR_EXAMPLE.test(t.flat)),
      ),
  },
  {
    id: 'personal-data-request',
    severity: 'high',
    test: (t, place) =>
      someSentence(
        t,
        (s) =>
          personalIntoParameter(s) ||
          (place === 'prose' && (LIVE_CONVERSATION.test(s) || tacksOnPersonal(s, PERSONAL_DATA, USERS))),
      ),
  },
  {
    id: 'precedence-claim',
    severity: 'high',
    test: (t) => someSentence(t, (s) => PRECEDENCE.some((r) => r.test(s)) || defeatsAuthority(s)),
  },
  { id: 'unconfirmed-action', severity: 'high', test: (t) => someSentence(t, unconfirmedAction) },
  { id: 'send-to-destination', severity: 'high', test: (t) => someSentence(t, sendToDestination) },
  {
    id: 'delayed-trigger',
    severity: 'high',
    test: (t) => someSentence(t, (s) => DELAY.test(s) && DELAYED_ACT.test(s) && HAND_OVER_ANY.test(s)),
  },
  {
    id: 'oversize-description',
    severity: 'medium',
    test: (t, place) => place === 'description' && t.raw.length > MAX_DESCRIPTION_CHARS,
  },
]);
