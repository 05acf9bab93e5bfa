package http3

import "errors"

// A parser for Structured Field Dictionaries (RFC 8941, Section 4.2.2),
// as far as the Priority field needs it: every member is parsed and
// checked, and the values of bare items that are Integers or Booleans are
// reported; the others (Decimals, Strings, Tokens, Byte Sequences, Inner
// Lists) are checked and skipped. Parameters are checked and ignored.

type sfKind uint8

const (
	sfOther sfKind = iota
	sfInteger
	sfBoolean
)

// sfItem is a Dictionary member's value, as far as it is reported.
type sfItem struct {
	kind sfKind
	i    int64
	b    bool
}

var errSFSyntax = errors.New("http3: malformed structured field")

// parseDictionary parses s as a Dictionary and calls member for each
// member, in order (a key that repeats is reported again: the last one
// wins, as Section 4.2.2 says). It reports the first syntax error; member
// may have been called for the members before it.
func parseDictionary(s string, member func(key string, v sfItem)) error {
	p := sfParser{s: s}
	p.skipSP()
	if p.done() {
		return nil // an empty field: an empty Dictionary
	}
	for {
		key, err := p.key()
		if err != nil {
			return err
		}
		var v sfItem
		if p.peek() == '=' {
			p.i++
			if p.peek() == '(' {
				err = p.innerList()
			} else {
				v, err = p.bareItem()
			}
		} else {
			v = sfItem{kind: sfBoolean, b: true}
		}
		if err == nil {
			err = p.params()
		}
		if err != nil {
			return err
		}
		member(key, v)
		p.skipOWS()
		if p.done() {
			return nil
		}
		if p.peek() != ',' {
			return errSFSyntax
		}
		p.i++
		p.skipOWS()
		if p.done() {
			return errSFSyntax // a trailing comma
		}
	}
}

type sfParser struct {
	s string
	i int
}

func (p *sfParser) done() bool { return p.i >= len(p.s) }

func (p *sfParser) peek() byte {
	if p.done() {
		return 0
	}
	return p.s[p.i]
}

func (p *sfParser) skipSP() {
	for p.peek() == ' ' {
		p.i++
	}
}

func (p *sfParser) skipOWS() {
	for c := p.peek(); c == ' ' || c == '\t'; c = p.peek() {
		p.i++
	}
}

func isLCAlpha(c byte) bool { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool   { return c >= '0' && c <= '9' }

// key parses a key: ( lcalpha / "*" ) *( lcalpha / DIGIT / "_" / "-" / "." / "*" ).
func (p *sfParser) key() (string, error) {
	start := p.i
	if c := p.peek(); !isLCAlpha(c) && c != '*' {
		return "", errSFSyntax
	}
	p.i++
	for c := p.peek(); isLCAlpha(c) || isDigit(c) || c == '_' || c == '-' || c == '.' || c == '*'; c = p.peek() {
		p.i++
	}
	return p.s[start:p.i], nil
}

// params parses parameters: *( ";" *SP key [ "=" bare-item ] ).
func (p *sfParser) params() error {
	for p.peek() == ';' {
		p.i++
		p.skipSP()
		if _, err := p.key(); err != nil {
			return err
		}
		if p.peek() == '=' {
			p.i++
			if _, err := p.bareItem(); err != nil {
				return err
			}
		}
	}
	return nil
}

// innerList parses "(" *SP [ item *( 1*SP item ) *SP ] ")" with
// parameters after each item.
func (p *sfParser) innerList() error {
	p.i++ // (
	for {
		p.skipSP()
		if p.peek() == ')' {
			p.i++
			return nil
		}
		if _, err := p.bareItem(); err != nil {
			return err
		}
		if err := p.params(); err != nil {
			return err
		}
		if c := p.peek(); c != ' ' && c != ')' {
			return errSFSyntax
		}
	}
}

// bareItem parses an Integer, Decimal, String, Token, Byte Sequence or
// Boolean.
func (p *sfParser) bareItem() (sfItem, error) {
	c := p.peek()
	switch {
	case c == '-' || isDigit(c):
		return p.number()
	case c == '"':
		p.i++
		for !p.done() {
			c := p.s[p.i]
			p.i++
			switch {
			case c == '\\':
				if n := p.peek(); n != '"' && n != '\\' {
					return sfItem{}, errSFSyntax
				}
				p.i++
			case c == '"':
				return sfItem{}, nil
			case c < 0x20 || c > 0x7e:
				return sfItem{}, errSFSyntax
			}
		}
		return sfItem{}, errSFSyntax
	case c == '*' || c >= 'A' && c <= 'Z' || isLCAlpha(c):
		// token = ( ALPHA / "*" ) *( tchar / ":" / "/" )
		p.i++
		for !p.done() && (isTChar(p.s[p.i]) || p.s[p.i] == ':' || p.s[p.i] == '/') {
			p.i++
		}
		return sfItem{}, nil
	case c == ':':
		p.i++
		for !p.done() && p.s[p.i] != ':' {
			if c := p.s[p.i]; !(c >= 'A' && c <= 'Z' || isLCAlpha(c) || isDigit(c) || c == '+' || c == '/' || c == '=') {
				return sfItem{}, errSFSyntax
			}
			p.i++
		}
		if p.done() {
			return sfItem{}, errSFSyntax
		}
		p.i++
		return sfItem{}, nil
	case c == '?':
		p.i++
		switch p.peek() {
		case '0':
			p.i++
			return sfItem{kind: sfBoolean, b: false}, nil
		case '1':
			p.i++
			return sfItem{kind: sfBoolean, b: true}, nil
		}
	}
	return sfItem{}, errSFSyntax
}

// number parses an Integer (at most 15 digits) or a Decimal (at most 12
// digits, a dot, 1 to 3 digits).
func (p *sfParser) number() (sfItem, error) {
	neg := false
	if p.peek() == '-' {
		neg = true
		p.i++
	}
	start := p.i
	var v int64
	for isDigit(p.peek()) {
		v = v*10 + int64(p.s[p.i]-'0')
		p.i++
		if p.i-start > 15 {
			return sfItem{}, errSFSyntax
		}
	}
	digits := p.i - start
	if digits == 0 {
		return sfItem{}, errSFSyntax
	}
	if p.peek() != '.' {
		if neg {
			v = -v
		}
		return sfItem{kind: sfInteger, i: v}, nil
	}
	if digits > 12 {
		return sfItem{}, errSFSyntax
	}
	p.i++
	frac := p.i
	for isDigit(p.peek()) {
		p.i++
	}
	if n := p.i - frac; n < 1 || n > 3 {
		return sfItem{}, errSFSyntax
	}
	return sfItem{}, nil
}

// isTChar reports the tchar of RFC 9110, Section 5.6.2.
func isTChar(c byte) bool {
	switch {
	case c >= 'A' && c <= 'Z', isLCAlpha(c), isDigit(c):
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}
