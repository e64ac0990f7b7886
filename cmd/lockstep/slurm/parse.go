package slurm

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/errs"
)

// ErrUnsupported marks an error about an sbatch option Lockstep does not
// support; WithIgnoreUnsupported turns those into warnings.
var ErrUnsupported = errors.New("unsupported sbatch option")

// IsUnsupported reports whether err is about an unsupported option.
func IsUnsupported(err error) bool { return errors.Is(err, ErrUnsupported) }

// Option configures parsing.
type Option func(*options)

type options struct {
	ignoreUnsupported bool
	// extra are options of the front end, not sbatch's (WithLongOption).
	extra []optDef
}

// defs is sbatch's option table with the front end's options.
func (o options) defs() []optDef {
	if len(o.extra) == 0 {
		return sbatchOptions
	}
	return append(slices.Clip(sbatchOptions), o.extra...)
}

// WithIgnoreUnsupported skips options sbatch has and Lockstep does not
// support, adding a warning to Directives.Warnings for each, instead of
// failing. Options sbatch itself does not know are errors regardless.
// (It has no value to validate, so unlike most options it cannot fail.)
func WithIgnoreUnsupported() Option {
	return func(o *options) { o.ignoreUnsupported = true }
}

// WithLongOption adds a long option that is not sbatch's but the front
// end's (lockstep sbatch's --nats, --ignore-unsupported), parsed among
// sbatch's options so that it splits the command line as they do: before
// the script, --name=value or --name value when takesValue, --name
// otherwise. set gets the value ("" for a flag); its error names the
// option. A name sbatch has is not added: sbatch's wins.
func WithLongOption(name string, takesValue bool, set func(value string) error) Option {
	return func(o *options) {
		for _, d := range sbatchOptions {
			if d.long == name {
				return
			}
		}
		kind := noArg
		if takesValue {
			kind = requiredArg
		}
		o.extra = append(o.extra, optDef{long: name, arg: kind, set: func(_ *Directives, opt, value string, _ bool) error {
			if err := set(value); err != nil {
				return valueError(opt, value, err)
			}
			return nil
		}})
	}
}

// MaxScriptBytes bounds the script ParseScript reads.
const MaxScriptBytes = 4 << 20

// ParseScript reads a batch script's #SBATCH directives as sbatch does.
// It first refuses what sbatch refuses: an empty script, a first line
// without "#!", a NUL byte, DOS line breaks, more than MaxScriptBytes.
// Then it reads directives from the top, through blank lines and comments (the shebang is one),
// until the first line that is a command; #SBATCH lines after it are
// ordinary comments. A directive line starts at its first column with
// #SBATCH (or #SLURM, which sbatch warns about); the rest is split into
// words like a shell line (quotes, backslash escapes, an unquoted # ends
// it) and parsed as sbatch options. A word that is not an option, or an
// option sbatch does not have, is an error naming the line.
//
// Errors are marked errs.ErrInvalidSpec, and ErrUnsupported for an
// unsupported option.
func ParseScript(script []byte, opts ...Option) (Directives, error) {
	o := applyOptions(opts)
	if len(script) > MaxScriptBytes {
		return Directives{}, errs.MarkInvalid(errors.Newf("script is %d bytes, more than the %d allowed", len(script), MaxScriptBytes))
	}
	if err := checkScript(script); err != nil {
		return Directives{}, errs.MarkInvalid(err)
	}
	args, lines, warnings, err := scriptArgs(script)
	if err != nil {
		return Directives{}, errs.MarkInvalid(err)
	}
	d := Directives{Warnings: warnings}
	where := func(i int) string { return fmt.Sprintf("line %d: ", lines[i]) }
	n, err := d.apply(args, o, where)
	if err != nil {
		return Directives{}, err
	}
	if n < len(args) {
		return Directives{}, errs.MarkInvalid(errors.Newf("%s#SBATCH %q is not an option", where(n), args[n]))
	}
	return d, nil
}

// ParseOptions parses an sbatch command line (without the program name):
// options up to the first operand, which with the rest are returned (the
// script and its arguments). It is Directives{}.Apply.
func ParseOptions(args []string, opts ...Option) (Directives, []string, error) {
	return Directives{}.Apply(args, opts...)
}

// Apply parses an sbatch command line over d, as sbatch applies its
// command line after the script's directives: an option given in both
// takes the command line's value. It returns the operands (script and
// arguments). d is not changed.
//
// A caller does what sbatch does: ParseOptions finds the script; the
// script's ParseScript, then Apply of the same command line, gives the
// job's directives.
func (d Directives) Apply(args []string, opts ...Option) (Directives, []string, error) {
	o := applyOptions(opts)
	d.Warnings = append([]string(nil), d.Warnings...)
	n, err := d.apply(args, o, func(int) string { return "" })
	if err != nil {
		return Directives{}, nil, err
	}
	return d, args[n:], nil
}

func applyOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// apply parses args as sbatch options onto d; where(i) prefixes an error
// about args[i] with its place. It returns the index of the first operand.
func (d *Directives) apply(args []string, o options, where func(int) string) (int, error) {
	uses, n, err := getopt(args, o.defs())
	if err != nil {
		var ge *getoptError
		if errors.As(err, &ge) {
			return 0, errs.MarkInvalid(errors.Newf("%s%s", where(ge.arg), ge.msg))
		}
		return 0, errs.MarkInvalid(err)
	}
	for _, u := range uses {
		if u.def.set == nil {
			shown := u.name
			if u.hasValue {
				shown = strings.TrimSuffix(valueError(u.name, u.value, errors.New("")).Error(), ": ")
			}
			if o.ignoreUnsupported {
				d.Warnings = append(d.Warnings, fmt.Sprintf("%s%s is not supported by Lockstep; ignored", where(u.arg), shown))
				continue
			}
			return 0, errs.MarkInvalid(errors.Mark(
				errors.Newf("%s%s is not supported by Lockstep", where(u.arg), shown), ErrUnsupported))
		}
		if err := u.def.set(d, u.name, u.value, u.hasValue); err != nil {
			return 0, errs.MarkInvalid(errors.Wrapf(err, "%s", strings.TrimSuffix(where(u.arg), ": ")))
		}
	}
	return n, nil
}

// checkScript refuses what sbatch refuses before reading directives: an
// empty or blank script, one whose first line is not "#!interpreter", one
// with a NUL byte or DOS line breaks.
func checkScript(script []byte) error {
	switch {
	case len(bytes.TrimSpace(script)) == 0:
		return errors.New("the batch script is empty or only white space")
	case !bytes.HasPrefix(script, []byte("#!")):
		return errors.New("this does not look like a batch script: the first line must start with #! and an interpreter (#!/bin/sh)")
	case bytes.IndexByte(script, 0) >= 0:
		return errors.New("the batch script contains a NUL byte")
	case bytes.Contains(script, []byte("\r\n")):
		return errors.New("the batch script has DOS line breaks (\\r\\n), not UNIX ones (\\n)")
	}
	return nil
}

// scriptArgs collects the words of the script's directive lines, with the
// line number of each, as sbatch's _opt_batch_script does.
func scriptArgs(script []byte) (args []string, lines []int, warnings []string, err error) {
	warnedSLURM := false
	for lineno := 1; len(script) > 0; lineno++ {
		var line []byte
		if i := bytes.IndexByte(script, '\n'); i >= 0 {
			line, script = script[:i], script[i+1:]
		} else {
			line, script = script, nil
		}
		var rest []byte
		switch {
		case bytes.HasPrefix(line, []byte("#SBATCH")):
			rest = line[len("#SBATCH"):]
		case bytes.HasPrefix(line, []byte("#SLURM")):
			rest = line[len("#SLURM"):]
			if !warnedSLURM {
				warnings = append(warnings, fmt.Sprintf("line %d: change #SLURM to #SBATCH and check the options are valid in sbatch", lineno))
				warnedSLURM = true
			}
		default:
			if isCommand(line) {
				return args, lines, warnings, nil
			}
			continue
		}
		words, err := directiveWords(string(rest))
		if err != nil {
			return nil, nil, nil, errors.Wrapf(err, "line %d", lineno)
		}
		if len(words) > 0 && (strings.EqualFold(words[0], "hetjob") || strings.EqualFold(words[0], "packjob")) {
			return nil, nil, nil, errors.Mark(errors.Newf("line %d: heterogeneous jobs (#SBATCH %s) are not supported by Lockstep", lineno, words[0]), ErrUnsupported)
		}
		for _, w := range words {
			args = append(args, w)
			lines = append(lines, lineno)
		}
	}
	return args, lines, warnings, nil
}

// isCommand: the first character that is not white space is not '#'.
// Blank lines are not commands.
func isCommand(line []byte) bool {
	t := bytes.TrimLeft(line, " \t\r\v\f")
	return len(t) > 0 && t[0] != '#'
}

// directiveWords splits the rest of a directive line into words as
// sbatch's get_argument does: white space separates words; single or
// double quotes group (and are removed; quotes may join parts of one
// word); a backslash takes the next character literally (inside quotes
// too); an unquoted, unescaped # ends the line. An unmatched quote is an
// error.
func directiveWords(s string) ([]string, error) {
	var words []string
	i := 0
	for {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i >= len(s) {
			return words, nil
		}
		if s[i] == ':' {
			return nil, errors.Newf("unexpected ':' in %q", s)
		}
		var w strings.Builder
		var quote byte
		started := false
	word:
		for i < len(s) {
			c := s[i]
			switch {
			case quote == 0 && isSpace(c):
				break word
			case c == '\\':
				if i+1 < len(s) {
					w.WriteByte(s[i+1])
					started = true
				}
				i += 2
				continue
			case quote != 0 && c == quote:
				quote = 0
				i++
				continue
			case quote == 0 && (c == '"' || c == '\''):
				quote = c
				started = true
				i++
				continue
			case quote == 0 && c == '#':
				if started || w.Len() > 0 {
					words = append(words, w.String())
				}
				return words, nil
			}
			w.WriteByte(c)
			started = true
			i++
		}
		if quote != 0 {
			return nil, errors.Newf("unmatched %c in %q", quote, s)
		}
		words = append(words, w.String())
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}
