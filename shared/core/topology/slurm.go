package topology

import (
	"bufio"
	"io"
	"strings"

	"github.com/cockroachdb/errors"
)

// maxSlurmLine bounds one physical line of topology.conf. Long hostlists make
// lines longer than bufio's 64 KiB default in big clusters.
const maxSlurmLine = 4 << 20

// LoadSlurm reads an unmodified Slurm topology.conf: topology/tree lines
// (SwitchName= with Nodes= or Switches=, optional LinkSpeed=) and
// topology/block lines (BlockName= with Nodes=; BlockSizes= lines are
// accepted and ignored). Keys are case-insensitive, '#' starts a comment and
// a line ending in '\' continues on the next. LinkSpeed is checked to be a
// number and otherwise ignored: placement here uses levels, not speeds.
func LoadSlurm(r io.Reader) (*Topology, error) {
	return loadParsed(r, "Slurm topology.conf", parseSlurm)
}

func parseSlurm(r io.Reader) (Spec, error) {
	var s Spec
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, maxSlurmLine)
	var logical strings.Builder
	lineNo, start := 0, 0
	for sc.Scan() {
		lineNo++
		if logical.Len() == 0 {
			start = lineNo
		}
		// Comments go first, as in Slurm's parser: "a \ # note" continues.
		text, _, _ := strings.Cut(sc.Text(), "#")
		text = strings.TrimRight(text, " \t\r")
		if cont, ok := strings.CutSuffix(text, `\`); ok {
			logical.WriteString(cont)
			logical.WriteByte(' ')
			continue
		}
		logical.WriteString(text)
		if err := parseSlurmLine(&s, logical.String()); err != nil {
			return Spec{}, errors.Wrapf(err, "line %d", start)
		}
		logical.Reset()
	}
	if err := sc.Err(); err != nil {
		return Spec{}, errors.Wrapf(err, "reading line %d", lineNo+1)
	}
	if logical.Len() > 0 { // the file ended on a continuation
		if err := parseSlurmLine(&s, logical.String()); err != nil {
			return Spec{}, errors.Wrapf(err, "line %d", start)
		}
	}
	if len(s.Switches) == 0 && len(s.Blocks) == 0 {
		// An empty file would silently turn topology-aware placement off.
		return Spec{}, errors.New("no SwitchName or BlockName lines")
	}
	return s, nil
}

// slurmKeys are the keys topology.conf may use, lower-cased.
var slurmKeys = map[string]bool{
	"switchname": true, "switches": true, "nodes": true, "linkspeed": true,
	"blockname": true, "blocksizes": true,
}

// parseSlurmLine appends what one logical line declares to s.
func parseSlurmLine(s *Spec, line string) error {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return nil
	}
	kv := make(map[string]string, len(fields))
	for _, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return errors.Newf("%q is not Key=Value", f)
		}
		key := strings.ToLower(k)
		switch _, dup := kv[key]; {
		case !slurmKeys[key]:
			return errors.Newf("unknown key %q (want SwitchName, Switches, Nodes, LinkSpeed, BlockName or BlockSizes)", k)
		case dup:
			return errors.Newf("key %s given twice", k)
		case v == "":
			return errors.Newf("key %s has no value", k)
		}
		kv[key] = v
	}
	sw, isSwitch := kv["switchname"]
	block, isBlock := kv["blockname"]
	switch {
	case isSwitch && isBlock:
		return errors.New("a line declares a switch or a block, not both")
	case isSwitch:
		return parseSlurmSwitch(s, sw, kv)
	case isBlock:
		return parseSlurmBlock(s, block, kv)
	case len(kv) == 1 && kv["blocksizes"] != "":
		return nil // block aggregation sizes: a Slurm scheduling knob, not topology
	default:
		return errors.New("line has neither SwitchName= nor BlockName=")
	}
}

func parseSlurmSwitch(s *Spec, name string, kv map[string]string) error {
	if _, ok := kv["blocksizes"]; ok {
		return errors.Newf("switch %q: BlockSizes belongs on its own line", name)
	}
	if speed, ok := kv["linkspeed"]; ok && strings.Trim(speed, "0123456789") != "" {
		return errors.Newf("switch %q: LinkSpeed=%s is not a number", name, speed)
	}
	sw := SwitchSpec{Name: name}
	var err error
	if v, ok := kv["switches"]; ok {
		if sw.Children, err = expandHostlist(v); err != nil {
			return errors.Wrapf(err, "switch %q: Switches", name)
		}
	}
	if v, ok := kv["nodes"]; ok {
		if sw.Nodes, err = expandHostlist(v); err != nil {
			return errors.Wrapf(err, "switch %q: Nodes", name)
		}
	}
	s.Switches = append(s.Switches, sw)
	return nil
}

func parseSlurmBlock(s *Spec, name string, kv map[string]string) error {
	for key := range kv {
		if key != "blockname" && key != "nodes" {
			return errors.Newf("block %q: only Nodes= may follow BlockName=", name)
		}
	}
	v, ok := kv["nodes"]
	if !ok {
		return errors.Newf("block %q has no Nodes=", name)
	}
	nodes, err := expandHostlist(v)
	if err != nil {
		return errors.Wrapf(err, "block %q: Nodes", name)
	}
	s.Blocks = append(s.Blocks, BlockSpec{Name: name, Nodes: nodes})
	return nil
}
