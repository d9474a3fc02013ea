// Command go-rule-reading checks the table of src/rule-readings.fixture.ts against Go itself:
// it reads the table as JSON on stdin, parses each rule the way Traefik v3 does
// (go/parser.ParseExpr, then vulcand/predicate's walk: calls of Traefik's matcher names with
// strconv.Unquote'd string literals, !, &&, || and parentheses) and prints every rule whose
// reading differs from the table's. See the fixture's header for the command line.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"
)

var matchers = []string{"ClientIP", "Method", "Host", "HostRegexp", "Path", "PathRegexp", "PathPrefix",
	"Header", "HeaderRegexp", "Query", "QueryRegexp"}

// spellings as in traefik/pkg/rules/parser.go NewParser.
var spellings = map[string]string{}

func init() {
	for _, name := range matchers {
		lower := strings.ToLower(name)
		for _, spelling := range []string{name, lower, strings.ToUpper(name), strings.Title(lower)} {
			spellings[spelling] = name
		}
	}
}

var errRefused = errors.New("refused")

func read(expr ast.Expr) (string, error) {
	switch n := expr.(type) {
	case *ast.ParenExpr:
		return read(n.X)
	case *ast.UnaryExpr:
		if n.Op != token.NOT {
			return "", errRefused
		}
		x, err := read(n.X)
		if err != nil {
			return "", err
		}
		return "!" + x, nil
	case *ast.BinaryExpr:
		if n.Op != token.LAND && n.Op != token.LOR {
			return "", errRefused
		}
		x, err := read(n.X)
		if err != nil {
			return "", err
		}
		y, err := read(n.Y)
		if err != nil {
			return "", err
		}
		return "(" + x + " " + n.Op.String() + " " + y + ")", nil
	case *ast.CallExpr:
		ident, ok := n.Fun.(*ast.Ident)
		if !ok {
			return "", errRefused
		}
		name, ok := spellings[ident.Name]
		if !ok {
			return "", errRefused
		}
		args := []string{}
		for _, arg := range n.Args {
			literal, ok := arg.(*ast.BasicLit)
			if !ok || literal.Kind != token.STRING {
				return "", errRefused
			}
			value, err := strconv.Unquote(literal.Value)
			if err != nil || !utf8.ValidString(value) {
				return "", errRefused
			}
			args = append(args, quote(value))
		}
		return name + "(" + strings.Join(args, ", ") + ")", nil
	}
	return "", errRefused
}

// quote writes a string as JavaScript's JSON.stringify does.
func quote(value string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range value {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

func main() {
	var table []struct {
		Rule    string `json:"rule"`
		Reading string `json:"reading"`
	}
	if err := json.NewDecoder(os.Stdin).Decode(&table); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	differences := 0
	for _, row := range table {
		reading := "refused"
		if expr, err := parser.ParseExpr(row.Rule); err == nil {
			if text, err := read(expr); err == nil {
				reading = text
			}
		}
		if reading != row.Reading {
			differences++
			fmt.Printf("rule %q: Go reads %s, the table says %s\n", row.Rule, reading, row.Reading)
		}
	}
	fmt.Fprintf(os.Stderr, "%d rules, %d differences\n", len(table), differences)
	if differences > 0 {
		os.Exit(1)
	}
}
