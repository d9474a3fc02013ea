/**
 * Random rules from the grammar with comments, line breaks, escapes and stray characters mixed
 * in, each with parseTraefikRule's reading, as JSON for main.go to compare with Go's:
 *   npx tsx packages/traefik-config/testdata/go-rule-reading/random-rules.ts \
 *     | (cd packages/traefik-config/testdata/go-rule-reading && GO111MODULE=off go run main.go)
 * (30000 rules, about 2000 of them accepted, no difference when last run). Seeded: the same rules
 * each run; pass another seed as the first argument.
 */
import { formatRule, parseTraefikRule, RuleSyntaxError } from "../../src/rule-parser.ts";

let seed = Number(process.argv[2] ?? 7);
const random = (n: number) => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return Math.floor((seed / 2147483648) * n);
};
const pick = <T>(items: T[]): T => items[random(items.length)]!;

const gaps = [
  "",
  " ",
  " ",
  "",
  "\n",
  "\t",
  "\r\n",
  " /* c */ ",
  "/*\n*/",
  " // c\n",
  "\u00a0",
  ' /* " ` */ ',
];
const characters = [
  "a",
  "b",
  "/",
  " ",
  "\\",
  '"',
  "`",
  "é",
  "\n",
  "\r",
  ")",
  "(",
  "|",
  "&",
  "*",
  "'",
  "\u2028",
];
const escapes = [
  "\\n",
  "\\\\",
  '\\"',
  "\\x41",
  "\\xc3\\xa9",
  "\\101",
  "\\u00e9",
  "\\U0001F600",
  "\\'",
  "\\q",
];
escapes.push("\\xff", "\\ud800", "\\t", "\\a", "\\400", "\\x4", "\\u12");
const names = ["Host", "host", "HOST", "PathPrefix", "Pathprefix", "pathPrefix", "Header", "Query", "Foo"];

function literal(): string {
  const length = random(5);
  let body = "";
  if (random(2) === 0) {
    for (let i = 0; i < length; i++) body += pick(characters.filter((c) => c !== "`"));
    return `\`${body}\``;
  }
  const plain = characters.filter((c) => c !== '"' && c !== "\\" && c !== "\n");
  for (let i = 0; i < length; i++) body += random(3) === 0 ? pick(escapes) : pick(plain);
  return `"${body}"`;
}

function expression(depth: number): string {
  const gap = () => pick(gaps);
  switch (random(depth > 2 ? 1 : 5)) {
    case 0: {
      const args = Array.from({ length: random(3) }, literal);
      let list = args.join(`,${gap()}`);
      if (args.length > 0 && random(5) === 0) list += pick([",", "...", "...,"]);
      return `${pick(names)}${gap()}(${gap()}${list}${gap()})`;
    }
    case 1:
      return `!${gap()}${expression(depth + 1)}`;
    case 2:
      return `(${gap()}${expression(depth + 1)}${gap()})`;
    default:
      return `${expression(depth + 1)}${gap()}${pick(["&&", "||", "&&", "||", "&", "==", "|"])}${gap()}${expression(depth + 1)}`;
  }
}

const rows: { rule: string; reading: string }[] = [];
while (rows.length < 30_000) {
  let rule =
    pick(["", "", "\n", "// x\n", "\uFEFF"]) +
    expression(0) +
    pick(["", "", "\n", " // end", " /* e */", ";"]);
  if (random(4) === 0) {
    const at = random(rule.length + 1);
    rule = rule.slice(0, at) + pick([...characters, ...gaps]) + rule.slice(at);
  }
  let reading: string;
  try {
    reading = formatRule(parseTraefikRule(rule));
  } catch (error) {
    if (!(error instanceof RuleSyntaxError)) throw error;
    reading = "refused";
  }
  rows.push({ rule, reading });
}
console.log(JSON.stringify(rows));
