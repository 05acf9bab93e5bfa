// Package readmecheck holds the test that runs every command README.md
// and the docs/*.md pages show, so that they stay true (go test
// ./internal/readmecheck, part of make test; make readme-check runs it
// alone, verbosely).
//
// The commands are the lines of the fenced code blocks whose info string
// is "sh" (```sh), in order, with "# comments" removed and lines ending
// in a backslash joined; README.md first, then docs/*.md by name, each
// file a subtest. Commands meant to be read but not run go in blocks of
// another info string (```console, ```text). They run from the
// repository root, all in one network namespace of their own that has
// only a loopback
// interface (when the test runs as root with ip(8); on the host's
// loopback otherwise), so that fixed ports such as 4433 collide with
// nothing:
//
//   - "go run ./example/NAME ARGS" runs the program, built once.
//   - A command that prints a line containing "listening on" and keeps
//     running is a server: it runs in the background while the commands
//     after it in the same file (in any later block) run, and is then
//     interrupted with SIGINT, after which it must exit with status 0.
//   - Any other command must exit with status 0 within five minutes.
//   - "make TARGET" is checked with make -n (the target exists); make
//     demo also runs. make test (which runs this check) and the long
//     measurement targets are only checked with -n.
//   - Any other kind of command fails the check, until the checker is
//     taught how to run it.
package readmecheck
