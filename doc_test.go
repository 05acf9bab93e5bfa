package quic

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDocSansIO keeps doc.go's map of the files true and guards the
// sans-IO rule (DESIGN: "Protocol logic never reads the clock or the
// socket"): every file of this package but the driver files doc.go lists,
// and every file of the protocol packages, is parsed, and the test fails
// on a clock reading or timer (time.Now, Since, Until, Sleep, After,
// AfterFunc, NewTimer, NewTicker, Tick), a socket opened (net.Dial*,
// net.Listen*, net.Resolve*), an import of os, syscall or x/sys, or a go
// statement.
func TestDocSansIO(t *testing.T) {
	driver := docDriverFiles(t)
	if len(driver) == 0 {
		t.Fatal(`doc.go lists no "Driver files"`)
	}
	for f := range driver {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("doc.go lists driver file %s: %v", f, err)
		}
	}
	for _, dir := range []string{".", "ackhandler", "congestion", "flowcontrol", "handshake", "wire"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") || driver[f] {
				continue
			}
			for _, why := range sansIOViolations(t, f) {
				t.Errorf("%s: %s in a core file (doc.go: only the driver files may)", f, why)
			}
		}
	}
}

// docDriverFiles returns the files doc.go lists after "Driver files".
func docDriverFiles(t *testing.T) map[string]bool {
	af, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{}
	for _, cg := range af.Comments {
		text := cg.Text()
		// The list itself, not the files the map names before it (the
		// datagram path names core files too).
		i := strings.Index(text, "Driver files (")
		if i < 0 {
			continue
		}
		for _, m := range regexp.MustCompile(`[a-z0-9_/]+\.go`).FindAllString(text[i:], -1) {
			files[m] = true
		}
	}
	return files
}

// sansIOViolations returns what file f does that core code must not.
func sansIOViolations(t *testing.T, f string) []string {
	af, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var why []string
	for _, im := range af.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if p == "os" || p == "syscall" || strings.HasPrefix(p, "golang.org/x/sys/") {
			why = append(why, "import "+p)
		}
	}
	ast.Inspect(af, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			why = append(why, "go statement")
		case *ast.SelectorExpr:
			id, ok := n.X.(*ast.Ident)
			if !ok {
				break
			}
			name := n.Sel.Name
			switch id.Name {
			case "time":
				switch name {
				case "Now", "Since", "Until", "Sleep", "After", "AfterFunc", "NewTimer", "NewTicker", "Tick":
					why = append(why, "time."+name)
				}
			case "net":
				if strings.HasPrefix(name, "Dial") || strings.HasPrefix(name, "Listen") || strings.HasPrefix(name, "Resolve") {
					why = append(why, "net."+name)
				}
			}
		}
		return true
	})
	return why
}
