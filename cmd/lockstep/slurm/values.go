package slurm

import (
	"strings"
	"time"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/slurmenv"
)

// GPUs is a GPU request: Count GPUs of Type ("" for any).
type GPUs struct {
	Type  string
	Count int
}

// Export is --export: ALL (propagate the submitter's environment), NONE
// or NIL (none of it), and variables by name or with a value.
type Export struct {
	// Raw is the value as given.
	Raw string
	// All: ALL was given, alone or in the list.
	All bool
	// None: the value was NONE or NIL (NIL also skips the user's login
	// environment).
	None bool
	// Names are propagated from the submitter's environment.
	Names []string
	// Set are NAME=value assignments, in order.
	Set []EnvVar
}

// EnvVar is one NAME=value of --export.
type EnvVar struct{ Name, Value string }

// Array is --array=indexes[%limit].
type Array struct {
	Raw    string
	Ranges []ArrayRange
	// Limit is the most tasks running at once (%N); 0 for none.
	Limit int
}

// ArrayRange is First..Last stepping by Step (1 when not given).
type ArrayRange = jobspec.ArrayRange

// Dependency is --dependency: Items all satisfied (","), or any one
// (Any, "?").
type Dependency struct {
	Raw   string
	Any   bool
	Items []DependencyItem
}

// DependencyItem is type:job_id[:job_id...]; singleton has no job IDs.
type DependencyItem struct {
	// Type is after, afterany, afternotok, afterok or singleton.
	Type string
	Jobs []DependencyJob
}

// DependencyJob is one job of a dependency; Delay is after's +time
// (minutes).
type DependencyJob struct {
	ID    string
	Delay time.Duration
}

// MaxArrayIndex is the largest --array index accepted (jobspec's). A
// cluster's own bound on the task count is lower; jobspec.Parse checks
// it (jobspec.MaxArrayTasks).
const MaxArrayIndex = jobspec.MaxArrayIndex

// ParseArray parses --array's value: the index list jobspec reads
// (comma-separated indexes N, ranges N-M and stepped ranges N-M:S), then
// an optional %limit on the tasks running at once ("0-15%4",
// "0,6,16-32", "0-15:4"). Indexes are 0 to MaxArrayIndex.
func ParseArray(s string) (Array, error) {
	a := Array{Raw: s}
	list, limit, hasLimit := strings.Cut(s, "%")
	if hasLimit {
		n, err := positiveInt(limit)
		if err != nil {
			return Array{}, errors.Wrap(err, "limit after '%'")
		}
		a.Limit = n
	}
	var err error
	if a.Ranges, err = jobspec.ParseArrayIndexes(list); err != nil {
		return Array{}, err
	}
	return a, nil
}

// Count is how many tasks the array has, an index given twice counted
// twice.
func (a Array) Count() int { return jobspec.ArrayCount(a.Ranges) }

// Indexes lists the array's task indexes, sorted and unique, as Slurm's
// bitmap holds them.
func (a Array) Indexes() []int { return jobspec.ArrayIndexes(a.Ranges) }

// dependencyTypes are the types Lockstep supports; Slurm also has
// aftercorr, afterburstbuffer and others.
var dependencyTypes = map[string]bool{"after": true, "afterany": true, "afternotok": true, "afterok": true, "singleton": true}

// ParseDependency parses --dependency's value:
// type:job_id[:job_id][,type:job_id...] (all must hold) or with '?' (any
// may), type one of after, afterany, afternotok, afterok, or singleton; a
// bare job ID is afterany, Slurm's default type; after's job IDs may carry
// +minutes. Job IDs are Lockstep job IDs, optionally with _index for one
// task of an array.
func ParseDependency(s string) (Dependency, error) {
	d := Dependency{Raw: s}
	sep := ","
	if strings.Contains(s, "?") {
		if strings.Contains(s, ",") {
			return Dependency{}, errors.New("only one of ',' (all) and '?' (any) may be used")
		}
		d.Any, sep = true, "?"
	}
	var err error
	if d.Items, err = parseEach(s, sep, parseDependencyItem); err != nil {
		return Dependency{}, err
	}
	return d, nil
}

// parseEach parses every sep-separated token of s, in order.
func parseEach[T any](s, sep string, parse func(tok string) (T, error)) ([]T, error) {
	var out []T
	for _, tok := range strings.Split(s, sep) {
		v, err := parse(tok)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func parseDependencyItem(tok string) (DependencyItem, error) {
	if tok == "singleton" {
		return DependencyItem{Type: "singleton"}, nil
	}
	parts := strings.Split(tok, ":")
	typ, ids := "afterany", parts
	if len(parts) > 1 || !validDependencyJob(parts[0]) || strings.HasPrefix(parts[0], "after") {
		typ, ids = parts[0], parts[1:]
	}
	if !dependencyTypes[typ] || typ == "singleton" {
		return DependencyItem{}, errors.Newf("dependency %q: unsupported type %q (after, afterany, afternotok, afterok, singleton)", tok, typ)
	}
	if len(ids) == 0 {
		return DependencyItem{}, errors.Newf("dependency %q names no job", tok)
	}
	item := DependencyItem{Type: typ}
	for _, id := range ids {
		j := DependencyJob{ID: id}
		if typ == "after" {
			if base, mins, ok := strings.Cut(id, "+"); ok {
				n, err := slurmenv.NonNegativeInt(mins)
				if err != nil {
					return DependencyItem{}, errors.Wrapf(err, "dependency %q: +time in minutes", tok)
				}
				j = DependencyJob{ID: base, Delay: time.Duration(n) * time.Minute}
			}
		}
		if !validDependencyJob(j.ID) {
			return DependencyItem{}, errors.Newf("dependency %q: %q is not a job ID", tok, j.ID)
		}
		item.Jobs = append(item.Jobs, j)
	}
	return item, nil
}

// validDependencyJob is a job ID, or a job ID and _index of an array task.
func validDependencyJob(id string) bool { return jobspec.ValidID(id) }

// ParseExport parses --export's value as sbatch does: ALL, NONE or NIL
// alone, or a comma-separated list of ALL, names and NAME=value; a list
// item wholly in quotes loses them, and commas inside quotes do not
// split.
func ParseExport(s string) (Export, error) {
	e := Export{Raw: s}
	switch strings.ToUpper(s) {
	case "ALL":
		e.All = true
		return e, nil
	case "NONE", "NIL":
		e.None = true
		return e, nil
	case "":
		return Export{}, errors.New("empty --export list")
	}
	toks, err := quotedTokens(s)
	if err != nil {
		return Export{}, err
	}
	for _, tok := range toks {
		switch name, value, ok := strings.Cut(tok, "="); {
		case strings.EqualFold(tok, "ALL"):
			e.All = true
		case ok:
			e.Set = append(e.Set, EnvVar{Name: name, Value: value})
		case tok != "":
			e.Names = append(e.Names, tok)
		}
	}
	return e, nil
}

// quotedTokens splits at commas outside quotes (find_quote_token).
func quotedTokens(s string) ([]string, error) {
	var out []string
	var quote byte
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			c := s[i]
			switch {
			case quote != 0 && c == quote:
				quote = 0
			case quote == 0 && (c == '\'' || c == '"'):
				quote = c
			}
			if quote != 0 || c != ',' {
				continue
			}
		} else if quote != 0 {
			return nil, errors.Newf("unmatched %c in %q", quote, s)
		}
		tok := s[start:i]
		if len(tok) >= 2 && (tok[0] == '\'' || tok[0] == '"') && tok[len(tok)-1] == tok[0] {
			tok = tok[1 : len(tok)-1]
		}
		out = append(out, tok)
		start = i + 1
	}
	return out, nil
}

// parseGPUs parses --gpus-per-node's [type:]N.
func parseGPUs(s string) (GPUs, error) {
	if strings.Contains(s, ",") {
		return GPUs{}, errors.New("more than one GPU type is not supported")
	}
	typ, count, ok := strings.Cut(s, ":")
	if !ok {
		typ, count = "", s
	}
	n, err := positiveInt(count)
	if err != nil {
		return GPUs{}, errors.Wrap(err, "GPU count")
	}
	return GPUs{Type: typ, Count: n}, nil
}

// parseGRES parses --gres's name[[:type]:count] for name gpu (count 1
// when not given). Other resources are not supported.
func parseGRES(s string) (GPUs, error) {
	if strings.Contains(s, ",") {
		return GPUs{}, errors.New("only one resource, gpu, is supported")
	}
	parts := strings.Split(strings.TrimPrefix(s, "gres/"), ":")
	if parts[0] != "gpu" {
		return GPUs{}, errors.Newf("resource %q is not supported; only gpu is", parts[0])
	}
	g := GPUs{Count: 1}
	switch len(parts) {
	case 1:
	case 2:
		// gpu:N or gpu:type
		if parts[1] != "" && parts[1][0] >= '0' && parts[1][0] <= '9' {
			n, err := positiveInt(parts[1])
			if err != nil {
				return GPUs{}, errors.Wrap(err, "GPU count (K/M/G suffixes are not supported)")
			}
			g.Count = n
		} else {
			g.Type = parts[1]
		}
	case 3:
		if parts[1] == "" {
			return GPUs{}, errors.Newf("%q has an empty GPU type", s)
		}
		n, err := positiveInt(parts[2])
		if err != nil {
			return GPUs{}, errors.Wrap(err, "GPU count")
		}
		g.Type, g.Count = parts[1], n
	default:
		return GPUs{}, errors.Newf("%q is not gpu[[:type]:count]", s)
	}
	return g, nil
}

// parseNodes parses -N's count; Slurm's min-max is accepted only as one
// count (a gang has a fixed size).
func parseNodes(s string) (int, error) {
	lo, hi, isRange := strings.Cut(s, "-")
	n, err := positiveInt(lo)
	if err != nil {
		return 0, err
	}
	if isRange {
		m, err := positiveInt(hi)
		if err != nil {
			return 0, err
		}
		if m != n {
			return 0, errors.Newf("a node range (%s) is not supported: a gang has a fixed number of nodes", s)
		}
	}
	return n, nil
}
