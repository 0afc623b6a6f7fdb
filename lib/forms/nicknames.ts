/**
 * A small table of common English given-name variants. Two first names are nickname-equivalent
 * when they appear in the same group (names are compared normalised: lower case a-z only).
 * A name may sit in several groups ("chris" -> christopher and christina); equivalence is
 * "share at least one group", never transitive across groups, so "kit" ~ "chris" only if a
 * group lists both.
 *
 * Deliberately short: every entry is a way an auto-routing decision can go right or wrong, so
 * the table holds only widely used, low-ambiguity variants. Add groups with a unit test.
 */
export const NICKNAME_GROUPS: readonly (readonly string[])[] = [
  ['alexander', 'alex', 'alec', 'al', 'sandy', 'xander'],
  ['alexandra', 'alex', 'alexa', 'sandra', 'sandy', 'lexi', 'lexie'],
  ['alexis', 'alex', 'lexi'],
  ['albert', 'al', 'bert', 'bertie'],
  ['alfred', 'al', 'alf', 'alfie', 'fred'],
  ['andrew', 'andy', 'drew'],
  ['andrea', 'andi', 'andie'],
  ['anthony', 'tony', 'ant'],
  ['antonia', 'toni'],
  ['barbara', 'barb', 'babs', 'barbie'],
  ['benjamin', 'ben', 'benny', 'benji'],
  ['catherine', 'katherine', 'kathryn', 'cathy', 'kathy', 'kate', 'katie', 'kat', 'cat', 'kitty', 'kay'],
  ['charles', 'charlie', 'chuck', 'chas', 'chaz'],
  ['charlotte', 'charlie', 'lottie', 'lotte'],
  ['christopher', 'chris', 'kit', 'topher'],
  ['christina', 'christine', 'chris', 'tina', 'chrissy', 'kristina', 'kristine'],
  ['daniel', 'dan', 'danny'],
  ['danielle', 'dani'],
  ['david', 'dave', 'davy'],
  ['deborah', 'debra', 'deb', 'debbie'],
  ['donald', 'don', 'donnie'],
  ['dorothy', 'dot', 'dottie', 'dolly'],
  ['edward', 'ed', 'eddie', 'ted', 'teddy', 'ned'],
  ['elizabeth', 'liz', 'lizzie', 'beth', 'betty', 'bess', 'eliza', 'elisabeth', 'libby', 'betsy'],
  ['eleanor', 'ellie', 'nell', 'nora', 'elle'],
  ['emily', 'em', 'emmy'],
  ['frances', 'fran', 'frannie'],
  ['francis', 'frank', 'frankie'],
  ['franklin', 'frank'],
  ['frederick', 'fred', 'freddie', 'freddy'],
  ['gabriel', 'gabe'],
  ['gabrielle', 'gabby', 'gabi'],
  ['gerald', 'gerry', 'jerry'],
  ['gregory', 'greg'],
  ['harold', 'harry', 'hal'],
  ['henry', 'hank', 'harry', 'hal'],
  ['isabella', 'isabel', 'isabelle', 'bella', 'izzy'],
  ['jacob', 'jake'],
  ['james', 'jim', 'jimmy', 'jamie'],
  ['jennifer', 'jen', 'jenny', 'jenn'],
  ['jessica', 'jess', 'jessie'],
  ['john', 'jack', 'johnny', 'jon'],
  ['jonathan', 'jon', 'jonny', 'nathan'],
  ['joseph', 'joe', 'joey'],
  ['josephine', 'jo', 'josie'],
  ['joshua', 'josh'],
  ['judith', 'judy', 'jude'],
  ['kenneth', 'ken', 'kenny'],
  ['lawrence', 'laurence', 'larry', 'laurie'],
  ['leonard', 'leo', 'len', 'lenny'],
  ['margaret', 'maggie', 'meg', 'peggy', 'marge', 'margie', 'greta'],
  ['matthew', 'matt', 'matty'],
  ['michael', 'mike', 'mikey', 'mick', 'mickey'],
  ['michelle', 'shelly', 'shelley'],
  ['nathaniel', 'nate', 'nathan', 'nat'],
  ['nicholas', 'nick', 'nicky', 'nico'],
  ['nicole', 'nikki', 'nicky'],
  ['patricia', 'pat', 'patty', 'trish', 'tricia'],
  ['patrick', 'pat', 'paddy'],
  ['peter', 'pete'],
  ['philip', 'phillip', 'phil'],
  ['rebecca', 'becky', 'becca'],
  ['richard', 'rick', 'ricky', 'dick', 'rich', 'richie'],
  ['robert', 'rob', 'robbie', 'bob', 'bobby', 'bert'],
  ['roberta', 'bobbie'],
  ['ronald', 'ron', 'ronnie'],
  ['samuel', 'sam', 'sammy'],
  ['samantha', 'sam', 'sammy'],
  ['stephen', 'steven', 'steve', 'stevie'],
  ['susan', 'sue', 'susie', 'suzy'],
  ['theodore', 'ted', 'teddy', 'theo'],
  ['thomas', 'tom', 'tommy'],
  ['timothy', 'tim', 'timmy'],
  ['victoria', 'vicky', 'vicki', 'tori'],
  ['vincent', 'vince', 'vinny'],
  ['walter', 'walt', 'wally'],
  ['william', 'will', 'bill', 'billy', 'willie', 'liam'],
  ['zachary', 'zach', 'zack'],
];

/**
 * Name -> the groups it is in, built on first use: no code runs when the module loads, so a bundle
 * that never compares first names (form intake: demographicsAgree only) drops the groups.
 */
let groupsByName: Map<string, Set<number>> | undefined;

function groupsOf(name: string): Set<number> | undefined {
  if (!groupsByName) {
    const map = new Map<string, Set<number>>();
    NICKNAME_GROUPS.forEach((group, index) => {
      for (const member of group) {
        let set = map.get(member);
        if (!set) map.set(member, (set = new Set<number>()));
        set.add(index);
      }
    });
    groupsByName = map;
  }
  return groupsByName.get(name);
}

/** True when two different normalised first names share a nickname group. */
export function areNicknames(a: string, b: string): boolean {
  if (!a || !b || a === b) return false;
  const ga = groupsOf(a);
  const gb = groupsOf(b);
  if (!ga || !gb) return false;
  for (const g of ga) if (gb.has(g)) return true;
  return false;
}
