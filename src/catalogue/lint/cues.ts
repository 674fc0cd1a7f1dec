/**
 * Cues of intent, each a small vocabulary, for the rules that judge a
 * sentence by what it combines rather than by how it is phrased. No cue is
 * a finding alone: honest descriptions talk about instructions, send data
 * and delete things all the time. An attack has to put two of them in one
 * sentence in a way an honest tool has no reason to, for example something
 * that governs the model next to a word that defeats it.
 */

/** What governs the model: its instructions, its guardrails, and whoever set them. */
const AUTHORITY =
  /\b(instructions?|guidance|guardrails?|guidelines?|system (prompt|message)|content polic(y|ies)|safety (instructions?|rules?|polic(y|ies)|measures|guidelines|filters?)|directives?|(platform|operator|developer|admin|system)'?s? (instructions?|rules|guidance|polic(y|ies)|orders)|whatever (the )?(platform|operator|developer|system|user) (said|says|told|instructed|asked)|restrictions)\b/;
/** What sets it aside: defeat, rank above, declare void. Not "overrides": a prompt parameter honestly overrides the default one. */
const DEFEAT =
  /\b(ignore|disregard|forget|set aside|put aside|abandon|throw out|outranks?|outranked|supersedes?|superseded|trumps?|void|outdated|obsolete|no longer (apply|applies|valid|binding|in effect)|(do|does) not apply|don'?t apply|(have|has) no|not bound by|no longer bound|suspended|lifted|waived?|(higher|highest|top) priority|precedence over|authority over|(are|is) (merely |only |just )?(suggestions?|optional|advisory|non-binding)( only)?|not binding|pay no (attention|heed|mind) to|no longer matter)\b/;

/** The user kept out of it: not told, not asked, or said to have agreed already. */
const COVERT =
  /\b(behind (the user'?s|their|his|her) backs?|without (the user'?s|their) (knowledge|consent|awareness)|under no circumstances\b[^.!?\n]{0,40}\b(informed|told|notified|aware|know)|(don'?t|do not|never|no need to) (bother|check with|ask|tell|inform|notify|alert|warn|consult) (the |any |a |an )?(user|human|operator|customer|owner|admin|engineer|on-call|anyone|anybody|them|him|her)|(already|previously) (agreed|approved|consented|confirmed)|pre-?approved|pre-?authori[sz]ed|(nobody|no one|no-one|noone) (needs?|has|have|should|must) (to )?be (consulted|asked|told|informed|notified)|(must|should|will|may|shall) (not|never) (find out|learn|know|notice|discover|realize)|(user|human|operator|customer|owner|employee)s? (will |must |should |is to |are to )?not (be )?(told|informed|notified))\b/;
/** An act with consequences the user would want a say in. */
const CONSEQUENCE =
  /\b(delet|remov|eras|wip|purg|destro|drop|truncat|overwrit|format|kill|terminat|reset|revok|clos|transfer|pay|send|forward|post|upload|share|sell|resell|resold|sold|publish|export|mirror|buy|purchas|approv|merg|push|deploy|grant|disabl|uninstall|cancel|collect|record|track|retain|store|cop(y|ie)|leak|expos)[a-z]*\b/;

/** Adding to a value that is for something else. */
const TACK_ON = /\b(prepend|append|attach|concatenate|tack on|add)(s|ed|ing)?\b/;

/** A sentence that sets the model's instructions aside, in any words. */
export function defeatsAuthority(s: string): boolean {
  const a = AUTHORITY.exec(s);
  if (a === null) return false;
  return DEFEAT.test(s);
}

/** A consequential act the user is kept out of. */
export function covertAct(s: string): boolean {
  return COVERT.test(s) && CONSEQUENCE.test(s);
}

/** Personal data of the user's tacked onto a parameter's own value, asked for in that parameter's description. */
export function tacksOnPersonal(s: string, personal: RegExp, users: RegExp): boolean {
  return TACK_ON.test(s) && personal.test(s) && users.test(s);
}
