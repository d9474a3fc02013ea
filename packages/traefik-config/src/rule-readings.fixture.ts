/**
 * Rules built to confuse a lexer, each with the reading Go gives it: what Traefik's parser
 * (go/parser.ParseExpr + strconv.Unquote, through vulcand/predicate and Traefik's matcher names)
 * makes of the rule, written in formatRule's canonical form, or "refused" where Traefik refuses
 * the rule. The readings were written by hand and checked with Go itself:
 *   npx tsx -e 'import("./packages/traefik-config/src/rule-readings.fixture.ts").then((m) => console.log(JSON.stringify(m.RULE_READINGS)))' \
 *     | go run ./packages/traefik-config/testdata/go-rule-reading
 * (prints every rule whose Go reading differs; nothing when the table is right).
 * One deliberate difference: an argument whose bytes are not UTF-8 (`"\xff"`) is read by Go but
 * refused here (no host, path or header value of the platform is such a string); the Go program
 * reports those as refused too.
 */
export interface RuleReading {
  rule: string;
  reading: string;
}

const own = "Host(`shop.example.com`)";
const OWN = 'Host("shop.example.com")';

export const RULE_READINGS: RuleReading[] = [
  // The attack of issue 22: the old checker read Header(…) && Host(own host).
  {
    rule: 'Header("X", "a\\", ") || PathPrefix(`/`) // ") && Host(`shop.example.com`)',
    reading: '(Header("X", "a\\", ") || PathPrefix("/"))',
  },
  {
    rule: 'Host("shop.example.com\\") || PathPrefix(`/`) // ")',
    reading: 'Host("shop.example.com\\") || PathPrefix(`/`) // ")',
  },
  {
    rule: "Host(`shop.example.com\\`) || PathPrefix(`/`)",
    reading: '(Host("shop.example.com\\\\") || PathPrefix("/"))',
  },
  { rule: 'Path("/a\\\\") || PathPrefix(`/`)', reading: '(Path("/a\\\\") || PathPrefix("/"))' },
  { rule: 'Header("X", "`") || PathPrefix(`/`) // `', reading: '(Header("X", "`") || PathPrefix("/"))' },
  { rule: `Header(\`X\`, \`"\`) && ${own}`, reading: `(Header("X", "\\"") && ${OWN})` },
  // Comments.
  {
    rule: `${own} /* && Header(\`X\`, \`y\`) */ || PathPrefix(\`/\`)`,
    reading: `(${OWN} || PathPrefix("/"))`,
  },
  { rule: `${own} // || PathPrefix(\`/\`)`, reading: OWN },
  { rule: `${own} // c\n|| PathPrefix(\`/\`)`, reading: "refused" },
  { rule: `${own} /*\n*/ || PathPrefix(\`/\`)`, reading: "refused" },
  { rule: `${own} && /*\n*/ PathPrefix(\`/a\`)`, reading: `(${OWN} && PathPrefix("/a"))` },
  {
    rule: `${own} && Path("/*") || PathPrefix(\`/\`) // */")`,
    reading: `((${OWN} && Path("/*")) || PathPrefix("/"))`,
  },
  { rule: `${own} && Path(\`//\`)`, reading: `(${OWN} && Path("//"))` },
  { rule: "Host(`a`) /* x", reading: "refused" },
  { rule: `// c\n${own}`, reading: OWN },
  { rule: "Host /* x */ (`shop.example.com`)", reading: OWN },
  // Newlines: Go ends the expression at a line end after a name, a string or `)`.
  { rule: `${own} &&\nPathPrefix(\`/a\`)`, reading: `(${OWN} && PathPrefix("/a"))` },
  { rule: `${own}\n&& PathPrefix(\`/a\`)`, reading: "refused" },
  { rule: `${own}\r\n&& Path(\`/\`)`, reading: "refused" },
  { rule: `${own} &&\r\n\tPath(\`/\`)`, reading: `(${OWN} && Path("/"))` },
  { rule: `${own}\n`, reading: OWN },
  { rule: "Host(`shop.example.com`\n)", reading: "refused" },
  { rule: "Header(`X`,\n`y`)", reading: 'Header("X", "y")' },
  { rule: "Host\n(`shop.example.com`)", reading: "refused" },
  { rule: `${own};`, reading: "refused" },
  // Strings: raw strings keep backslashes and newlines and drop carriage returns.
  { rule: `${own} && Header(\`X\`, \`a\nb\`)`, reading: `(${OWN} && Header("X", "a\\nb"))` },
  { rule: "Header(`X`, `a\r\nb`)", reading: 'Header("X", "a\\nb")' },
  { rule: 'Header("X", "a\nb")', reading: "refused" },
  { rule: 'Host("\\x73hop.example.com")', reading: OWN },
  { rule: 'Host("\\163hop.example.com")', reading: OWN },
  { rule: 'Host("\\u0073hop.example.com")', reading: OWN },
  { rule: 'Host("\\U00000073hop.example.com")', reading: OWN },
  { rule: 'Path("/\\xc3\\xa9")', reading: 'Path("/é")' },
  { rule: 'Path("/\\u00fc\\t")', reading: 'Path("/ü\\t")' },
  { rule: 'Host("a\\q")', reading: "refused" },
  { rule: 'Host("a\\\'b")', reading: "refused" },
  { rule: 'Host("\\ud800")', reading: "refused" },
  { rule: 'Host("\\xff")', reading: "refused" },
  { rule: 'Path("/\\400")', reading: "refused" },
  { rule: 'Path("/\\x4")', reading: "refused" },
  { rule: "Host(`a)", reading: "refused" },
  { rule: "Path(`/ünï`) && Host(`shop.example.com`)", reading: `(Path("/ünï") && ${OWN})` },
  // Arguments are string literals only.
  { rule: "Host('a')", reading: "refused" },
  { rule: "Host(1)", reading: "refused" },
  { rule: "Host(shop)", reading: "refused" },
  { rule: "Host(Path(`/`))", reading: "refused" },
  { rule: "Host((`shop.example.com`))", reading: "refused" },
  { rule: "Host(`a` + `b`)", reading: "refused" },
  { rule: "Host(`shop.example.com`,)", reading: OWN },
  { rule: "Host(`shop.example.com`...)", reading: OWN },
  { rule: "Host(`shop.example.com`..., `x`)", reading: "refused" },
  { rule: "Host()", reading: "Host()" },
  { rule: "Query(`a`, `b`)", reading: 'Query("a", "b")' },
  // Matcher names: Traefik's spellings only.
  { rule: "host(`shop.example.com`)", reading: OWN },
  { rule: "HOST(`shop.example.com`) && PATHPREFIX(`/a`)", reading: `(${OWN} && PathPrefix("/a"))` },
  { rule: "Pathprefix(`/a`)", reading: 'PathPrefix("/a")' },
  { rule: "pathPrefix(`/a`)", reading: "refused" },
  {
    rule: "Clientip(`10.0.0.0/8`) || CLIENTIP(`::1`)",
    reading: '(ClientIP("10.0.0.0/8") || ClientIP("::1"))',
  },
  { rule: "Hоst(`shop.example.com`)", reading: "refused" },
  { rule: "rules.Host(`a`)", reading: "refused" },
  { rule: "Host(`a`)(`b`)", reading: "refused" },
  { rule: "`Host(a)`", reading: "refused" },
  { rule: "Host", reading: "refused" },
  // Operators, precedence and nesting.
  { rule: "!(!Host(`shop.example.com`) || !Path(`/a`))", reading: `!(!${OWN} || !Path("/a"))` },
  { rule: "!!Host(`shop.example.com`)", reading: `!!${OWN}` },
  {
    rule: "PathPrefix(`/`) || Host(`a`) && Host(`b`)",
    reading: '(PathPrefix("/") || (Host("a") && Host("b")))',
  },
  { rule: "Path(`/a`) && Path(`/b`) && Path(`/c`)", reading: '((Path("/a") && Path("/b")) && Path("/c"))' },
  {
    rule: "((Host(`shop.example.com`)) && (Path(`/a`) || (Method(`GET`))))",
    reading: `(${OWN} && (Path("/a") || Method("GET")))`,
  },
  { rule: "Host(`a`) == Host(`b`)", reading: "refused" },
  { rule: "Host(`a`) != Host(`b`)", reading: "refused" },
  { rule: "Host(`a`) & Path(`/`)", reading: "refused" },
  { rule: "-Host(`a`)", reading: "refused" },
  { rule: "Host(`a`) &&", reading: "refused" },
  { rule: "(Host(`a`)", reading: "refused" },
  { rule: "Host(`a`))", reading: "refused" },
  { rule: "", reading: "refused" },
  // Traefik's own parser cases (pkg/rules/parser_test.go, its matcher `m` as Host) and
  // vulcand/predicate's unhappy cases (parse_test.go).
  { rule: "Host(`1`) ||", reading: "refused" },
  { rule: "(Host(`1`))", reading: 'Host("1")' },
  { rule: "W(`1`)", reading: "refused" },
  { rule: "Host(`1`, `2`)", reading: 'Host("1", "2")' },
  { rule: "!Host(`1`)", reading: '!Host("1")' },
  { rule: "Host(`1`) || Host(`2`)", reading: '(Host("1") || Host("2"))' },
  { rule: "!(Host(`1`) && Host(`2`))", reading: '!(Host("1") && Host("2"))' },
  { rule: "!(Host(`1`) || Host(`2`))", reading: '!(Host("1") || Host("2"))' },
  { rule: ")(", reading: "refused" },
  { rule: "Host(banana)", reading: "refused" },
  { rule: "0.2 && Host(`a`)", reading: "refused" },
  { rule: "Host(`a`) && 0.2", reading: "refused" },
  { rule: "func(){}()", reading: "refused" },
  { rule: "Host(`a`) >= 3", reading: "refused" },
  // Characters Go does not take as space, and ones it refuses anywhere.
  { rule: "Host（`a`）", reading: "refused" },
  { rule: "Host(`a`)\u00a0&& Path(`/`)", reading: "refused" },
  { rule: "Host(`a`)\u2028", reading: "refused" },
  { rule: `\uFEFF${own}`, reading: OWN },
  { rule: `${own}\uFEFF`, reading: "refused" },
  { rule: "Host(`a\u0000`)", reading: "refused" },
];
