/**
 * A Traefik v3 HTTP router rule read exactly as Traefik reads it. Traefik hands the rule to
 * vulcand/predicate, which parses it with Go's `go/parser.ParseExpr` and accepts only calls of
 * known matchers with string literal arguments (unquoted with `strconv.Unquote`), `!`, `&&`,
 * `||` and parentheses. So the rule is lexed by Go's rules:
 * - `"…"` strings with Go's escapes (`\"`, `\\`, `\n`, octal, `\x`, `\u`, `\U`; bytes, then UTF-8),
 *   no raw newline; backquoted raw strings without escapes (carriage returns dropped);
 * - `//` and `/* … *\/` comments;
 * - semicolon insertion: a newline (or a comment holding one, or the end) after a name, a
 *   string or `)` ends the expression, so anything after it is a syntax error;
 * - matcher names in Traefik's spellings: as declared, lower case, upper case or Title case.
 * Whatever Go or predicate would refuse is refused here too (RuleSyntaxError); a few things Go
 * reads but Traefik's matchers cannot use are refused as well (arguments that are not UTF-8,
 * NUL and byte order marks), never the other way round.
 *
 * @example
 * formatRule(parseTraefikRule('host(`a.example`) && !Path("/x\\u0041")')) // '(Host("a.example") && !Path("/xA"))'
 */

export type RuleNode =
  | { kind: "matcher"; name: string; args: string[] }
  | { kind: "not"; operand: RuleNode }
  | { kind: "and" | "or"; left: RuleNode; right: RuleNode };

export class RuleSyntaxError extends Error {}

/** Traefik v3's HTTP matchers and the argument counts each takes (pkg/muxer/http/matcher.go). */
export const HTTP_MATCHER_ARITY: Readonly<Record<string, readonly number[]>> = {
  ClientIP: [1],
  Method: [1],
  Host: [1],
  HostRegexp: [1],
  Path: [1],
  PathRegexp: [1],
  PathPrefix: [1],
  Header: [2],
  HeaderRegexp: [2],
  Query: [1, 2],
  QueryRegexp: [1, 2],
};

/** Every spelling Traefik registers for a matcher (pkg/rules/parser.go NewParser), to its name. */
const MATCHER_SPELLINGS = new Map<string, string>(
  Object.keys(HTTP_MATCHER_ARITY).flatMap((name) => {
    const lower = name.toLowerCase();
    const title = lower[0]!.toUpperCase() + lower.slice(1);
    return [name, lower, name.toUpperCase(), title].map((spelling) => [spelling, name] as const);
  }),
);

type Token =
  | { type: "name"; value: string; at: number }
  | { type: "string"; value: string; at: number }
  | { type: "(" | ")" | "," | "..." | "&&" | "||" | "!" | "newline" | "end"; at: number };

const fail = (message: string, at: number): never => {
  throw new RuleSyntaxError(`${message} at character ${at + 1}`);
};

const SIMPLE_ESCAPES: Record<string, number> = {
  a: 7,
  b: 8,
  f: 12,
  n: 10,
  r: 13,
  t: 9,
  v: 11,
  "\\": 92,
  '"': 34,
};

const NAME = /[A-Za-z_][A-Za-z0-9_]*/y;
const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** The bytes of an interpreted string literal's body, from `rule[start]` (after the quote). */
function interpretedString(rule: string, start: number): { value: string; end: number } {
  const bytes: number[] = [];
  let at = start;
  for (;;) {
    const character = rule[at];
    if (character === undefined || character === "\n")
      return fail("string literal not terminated", start - 1);
    if (character === '"') break;
    if (character !== "\\") {
      const codePoint = rule.codePointAt(at)!;
      const text = String.fromCodePoint(codePoint);
      bytes.push(...utf8.encode(text));
      at += text.length;
      continue;
    }
    const kind = rule[at + 1];
    if (kind !== undefined && kind in SIMPLE_ESCAPES) {
      bytes.push(SIMPLE_ESCAPES[kind]!);
      at += 2;
      continue;
    }
    const [digits, base, max, skip] =
      kind !== undefined && kind >= "0" && kind <= "7"
        ? [3, 8, 255, 1]
        : kind === "x"
          ? [2, 16, 255, 2]
          : kind === "u"
            ? [4, 16, 0x10ffff, 2]
            : kind === "U"
              ? [8, 16, 0x10ffff, 2]
              : [0, 0, 0, 0];
    if (digits === 0) return fail("unknown escape sequence", at);
    const text = rule.slice(at + skip, at + skip + digits);
    const pattern = base === 8 ? /^[0-7]+$/ : /^[0-9A-Fa-f]+$/;
    if (text.length !== digits || !pattern.test(text))
      return fail("illegal character in escape sequence", at);
    const value = Number.parseInt(text, base);
    if (value > max || (value >= 0xd800 && value < 0xe000)) {
      return fail("escape sequence is invalid Unicode code point", at);
    }
    // Octal and \x escapes are single bytes; \u and \U are code points, stored as UTF-8.
    if (max === 255) bytes.push(value);
    else bytes.push(...utf8.encode(String.fromCodePoint(value)));
    at += skip + digits;
  }
  try {
    return { value: strictUtf8.decode(new Uint8Array(bytes)), end: at + 1 };
  } catch {
    return fail("argument is not valid UTF-8", start - 1);
  }
}

function tokenize(rule: string): Token[] {
  const tokens: Token[] = [];
  // Go inserts a semicolon at a line end after a name, a literal or `)`.
  let endsStatement = false;
  const lineEnd = (at: number) => {
    if (endsStatement) tokens.push({ type: "newline", at });
    endsStatement = false;
  };
  let at = rule.startsWith("\uFEFF") ? 1 : 0;
  while (at < rule.length) {
    const character = rule[at]!;
    if (character === " " || character === "\t" || character === "\r") {
      at++;
    } else if (character === "\n") {
      lineEnd(at);
      at++;
    } else if (rule.startsWith("//", at)) {
      const newline = rule.indexOf("\n", at);
      lineEnd(at);
      at = newline < 0 ? rule.length : newline + 1;
    } else if (rule.startsWith("/*", at)) {
      const close = rule.indexOf("*/", at + 2);
      if (close < 0) fail("comment not terminated", at);
      if (rule.slice(at + 2, close).includes("\n")) lineEnd(at);
      at = close + 2;
    } else if (/[A-Za-z_]/.test(character)) {
      NAME.lastIndex = at;
      const name = NAME.exec(rule)![0];
      // A name running on into other letters or digits (Go's identifiers are Unicode) is not a matcher.
      const next = rule.codePointAt(at + name.length);
      if (next !== undefined && /[\p{L}\p{Nd}]/u.test(String.fromCodePoint(next)))
        fail("unknown matcher", at);
      tokens.push({ type: "name", value: name, at });
      at += name.length;
      endsStatement = true;
    } else if (character === "`") {
      const close = rule.indexOf("`", at + 1);
      if (close < 0) fail("raw string literal not terminated", at);
      tokens.push({ type: "string", value: rule.slice(at + 1, close).replaceAll("\r", ""), at });
      at = close + 1;
      endsStatement = true;
    } else if (character === '"') {
      const { value, end } = interpretedString(rule, at + 1);
      tokens.push({ type: "string", value, at });
      at = end;
      endsStatement = true;
    } else if (rule.startsWith("...", at)) {
      tokens.push({ type: "...", at });
      at += 3;
      endsStatement = false;
    } else if (rule.startsWith("&&", at) || rule.startsWith("||", at)) {
      tokens.push({ type: rule.slice(at, at + 2) as "&&" | "||", at });
      at += 2;
      endsStatement = false;
    } else if (character === "!" && rule[at + 1] !== "=") {
      tokens.push({ type: "!", at });
      at++;
      endsStatement = false;
    } else if (character === "(" || character === ",") {
      tokens.push({ type: character, at });
      at++;
      endsStatement = false;
    } else if (character === ")") {
      tokens.push({ type: ")", at });
      at++;
      endsStatement = true;
    } else {
      fail(`unexpected ${JSON.stringify(character)}`, at);
    }
  }
  lineEnd(rule.length);
  tokens.push({ type: "end", at: rule.length });
  return tokens;
}

/** The rule as Traefik's parser reads it; throws RuleSyntaxError where Traefik would refuse it. */
export function parseTraefikRule(rule: string): RuleNode {
  const surrogate = /[\uD800-\uDFFF]/u.exec(rule);
  if (surrogate) fail("unpaired surrogate", surrogate.index);
  // Go's scanner refuses NUL anywhere, and a byte order mark anywhere but first.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is what is looked for
  const forbidden = /[\u0000\uFEFF]/.exec(rule.replace(/^\uFEFF/, " "));
  if (forbidden)
    fail(forbidden[0] === "\u0000" ? "illegal character NUL" : "illegal byte order mark", forbidden.index);
  const tokens = tokenize(rule);
  let index = 0;
  const peek = () => tokens[index]!;
  const expect = (type: Token["type"], what: string) => {
    const token = peek();
    if (token.type !== type) fail(`expected ${what}`, token.at);
    index++;
    return token;
  };
  const PRECEDENCE = { "||": 1, "&&": 2 } as const;

  const unary = (): RuleNode => {
    const token = peek();
    if (token.type === "!") {
      index++;
      return { kind: "not", operand: unary() };
    }
    if (token.type === "(") {
      index++;
      const inner = binary(1);
      expect(")", ")");
      return inner;
    }
    if (token.type !== "name") return fail("expected a matcher", token.at);
    index++;
    const name = MATCHER_SPELLINGS.get(token.value) ?? fail(`unsupported function: ${token.value}`, token.at);
    expect("(", `( after ${token.value}`);
    const args: string[] = [];
    while (peek().type !== ")") {
      const argument = peek();
      if (argument.type !== "string") return fail("expected a string argument", argument.at);
      args.push(argument.value);
      index++;
      // predicate ignores a variadic `...` after the last argument, as Go allows it there.
      const variadic = peek().type === "...";
      if (variadic) index++;
      if (peek().type !== ",") break;
      index++;
      if (variadic) break;
    }
    expect(")", ", or )");
    return { kind: "matcher", name, args };
  };

  // Go's parseBinaryExpr: left-associative, || below &&.
  const binary = (lowest: number): RuleNode => {
    let left = unary();
    for (;;) {
      const operator = peek().type;
      if (operator !== "&&" && operator !== "||") return left;
      const precedence = PRECEDENCE[operator];
      if (precedence < lowest) return left;
      index++;
      const right = binary(precedence + 1);
      left = { kind: operator === "&&" ? "and" : "or", left, right };
    }
  };

  const tree = binary(1);
  // ParseExpr takes one semicolon inserted at the end, then wants the end.
  if (peek().type === "newline") index++;
  if (peek().type !== "end") fail("unexpected text after the rule", peek().at);
  return tree;
}

/** A canonical text of a reading: `(A && B)`, `(A || B)`, `!A`, `Name("arg", …)` (JSON strings). */
export function formatRule(node: RuleNode): string {
  switch (node.kind) {
    case "matcher":
      return `${node.name}(${node.args.map((arg) => JSON.stringify(arg)).join(", ")})`;
    case "not":
      return `!${formatRule(node.operand)}`;
    default:
      return `(${formatRule(node.left)} ${node.kind === "and" ? "&&" : "||"} ${formatRule(node.right)})`;
  }
}
