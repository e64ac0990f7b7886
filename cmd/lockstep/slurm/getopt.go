package slurm

import (
	"fmt"
	"strings"

	"github.com/cockroachdb/errors"
)

// argKind is whether an option takes a value, as getopt_long's has_arg.
type argKind int

const (
	noArg       argKind = iota // --wait
	requiredArg                // --nodes=2, --nodes 2, -N2, -N 2
	optionalArg                // --exclusive, --exclusive=user; never a separate word
)

// optDef is one sbatch option. set is nil for an option sbatch has and
// Lockstep does not support: it is parsed (so that its value is skipped
// correctly) and then refused or, with WithIgnoreUnsupported, warned about.
type optDef struct {
	long  string
	short byte
	arg   argKind
	set   setter
}

// setter applies one option to d. name is the option as the user
// spelled it ("-N" or "--nodes"), for errors.
type setter func(d *Directives, name, value string, hasValue bool) error

// optUse is one option occurrence found by getopt.
type optUse struct {
	def      *optDef
	name     string // "-N" or "--nodes" (the full name, also when abbreviated)
	value    string
	hasValue bool
	arg      int // index in args of the word the option came from
}

// getoptError is a malformed command line; arg is the index of the word.
type getoptError struct {
	arg int
	msg string
}

func (e *getoptError) Error() string { return e.msg }

// getopt splits args the way glibc's getopt_long does with a "+" option
// string (sbatch's): options until the first operand or "--", long options
// as --name=value or --name value (required values only), unambiguous
// prefixes of long names, short options clustered (-vN2) with their value
// attached or in the next word. It returns the options in order and the
// index of the first operand.
func getopt(args []string, defs []optDef) ([]optUse, int, error) {
	var uses []optUse
	i := 0
	for i < len(args) {
		a := args[i]
		switch {
		case a == "--":
			return uses, i + 1, nil
		case strings.HasPrefix(a, "--"):
			u, next, err := longOpt(args, i, defs)
			if err != nil {
				return nil, 0, err
			}
			uses = append(uses, u)
			i = next
		case len(a) > 1 && a[0] == '-':
			us, next, err := shortOpts(args, i, defs)
			if err != nil {
				return nil, 0, err
			}
			uses = append(uses, us...)
			i = next
		default:
			return uses, i, nil // first operand: the script
		}
	}
	return uses, i, nil
}

func longOpt(args []string, i int, defs []optDef) (optUse, int, error) {
	body := args[i][2:]
	name, value, hasValue := strings.Cut(body, "=")
	def, err := lookupLong(name, defs)
	if err != nil {
		return optUse{}, 0, &getoptError{arg: i, msg: err.Error()}
	}
	u := optUse{def: def, name: "--" + def.long, value: value, hasValue: hasValue, arg: i}
	switch def.arg {
	case noArg:
		if hasValue {
			return optUse{}, 0, &getoptError{arg: i, msg: fmt.Sprintf("option '--%s' doesn't allow an argument", def.long)}
		}
	case requiredArg:
		if !hasValue {
			if i+1 >= len(args) {
				return optUse{}, 0, &getoptError{arg: i, msg: fmt.Sprintf("option '--%s' requires an argument", def.long)}
			}
			i++
			u.value, u.hasValue = args[i], true
		}
	}
	return u, i + 1, nil
}

// lookupLong finds a long option by its name or an unambiguous prefix of
// it. Prefixes that name one option under two spellings (--tasks-per-node
// and --ntasks-per-node are one) are not ambiguous.
func lookupLong(name string, defs []optDef) (*optDef, error) {
	if name == "" {
		return nil, errors.Newf("unrecognized option '--'")
	}
	var found *optDef
	var candidates []string
	for k := range defs {
		d := &defs[k]
		if d.long == name {
			return d, nil
		}
		if strings.HasPrefix(d.long, name) {
			candidates = append(candidates, "--"+d.long)
			if found == nil {
				found = d
			} else if !sameOption(found, d) {
				found = &optDef{} // ambiguous; keep collecting candidates
			}
		}
	}
	switch {
	case found == nil:
		return nil, errors.Newf("unrecognized option '--%s'", name)
	case found.long == "":
		return nil, errors.Newf("option '--%s' is ambiguous; possibilities: %s", name, strings.Join(candidates, " "))
	}
	return found, nil
}

// sameOption reports whether two table entries are spellings of one option.
func sameOption(a, b *optDef) bool {
	return a.arg == b.arg && a.short == b.short && a.alias() == b.alias()
}

// alias is the name an option is known by when it has two spellings.
func (d *optDef) alias() string {
	if d.long == "tasks-per-node" {
		return "ntasks-per-node"
	}
	return d.long
}

func shortOpts(args []string, i int, defs []optDef) ([]optUse, int, error) {
	a := args[i]
	var uses []optUse
	for j := 1; j < len(a); j++ {
		c := a[j]
		def := lookupShort(c, defs)
		if def == nil {
			return nil, 0, &getoptError{arg: i, msg: fmt.Sprintf("invalid option -- '%c'", c)}
		}
		u := optUse{def: def, name: "-" + string(c), arg: i}
		rest := a[j+1:]
		switch def.arg {
		case noArg:
			uses = append(uses, u)
			continue
		case optionalArg:
			u.value, u.hasValue = rest, rest != ""
		case requiredArg:
			switch {
			case rest != "":
				u.value, u.hasValue = rest, true
			case i+1 < len(args):
				i++
				u.value, u.hasValue = args[i], true
			default:
				return nil, 0, &getoptError{arg: i, msg: fmt.Sprintf("option requires an argument -- '%c'", c)}
			}
		}
		return append(uses, u), i + 1, nil
	}
	return uses, i + 1, nil
}

func lookupShort(c byte, defs []optDef) *optDef {
	for k := range defs {
		if defs[k].short == c {
			return &defs[k]
		}
	}
	return nil
}
