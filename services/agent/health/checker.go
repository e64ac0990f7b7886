package health

import (
	"context"
	"fmt"
	"slices"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/services/agent/discover"
)

// Checker polls a node's health. It remembers what it needs between polls
// (each GPU's last nvidia-smi verdict, Xids seen, fields the driver
// rejected), so one poll loop owns it: it is not safe for concurrent use.
type Checker struct {
	gpus   []discover.GPU
	smi    discover.SMI
	fields []string
	opts   options
	// lastSMI is each GPU's (by UUID) reasons from the last poll in which
	// nvidia-smi listed any GPU; a failed poll keeps them.
	lastSMI map[string][]string
	// xids holds each GPU's Xid reasons until Resume.
	xids map[string][]string
}

// NewChecker watches gpus (as discovery found them) through smi, the
// nvidia-smi runner (Command for a real node). smi may be nil only when
// there are no GPUs: a CPU node may still run a health-check program.
func NewChecker(gpus []discover.GPU, smi discover.SMI, opts ...Option) (*Checker, error) {
	o := defaultOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, errors.Wrap(err, "configuring the GPU health checker")
		}
	}
	if len(gpus) > 0 && smi == nil {
		return nil, errors.Mark(errors.Newf("%d GPUs to watch but no nvidia-smi", len(gpus)), ErrInvalidOption)
	}
	seen := map[string]bool{}
	for _, g := range gpus {
		if seen[g.UUID] {
			return nil, errors.Mark(errors.Newf("GPU %s listed twice", errors.Safe(g.UUID)), ErrInvalidOption)
		}
		seen[g.UUID] = true
	}
	return &Checker{
		gpus:    slices.Clone(gpus),
		smi:     smi,
		fields:  slices.Clone(HealthFields),
		opts:    o,
		lastSMI: map[string][]string{},
		xids:    map[string][]string{},
	}, nil
}

// Check polls once. Its error is only ever ctx's: every fault of a source is
// a reason or a note in the Report.
func (c *Checker) Check(ctx context.Context) (Report, error) {
	if err := ctx.Err(); err != nil {
		return Report{}, err
	}
	r := Report{At: c.opts.now(), GPUs: make([]GPUState, len(c.gpus))}
	for i, g := range c.gpus {
		r.GPUs[i] = GPUState{Index: g.Index, UUID: g.UUID, PCIBusID: g.PCIBusID}
	}
	if len(c.gpus) > 0 {
		c.pollSMI(ctx, &r)
	}
	if c.opts.kernelLog != nil && ctx.Err() == nil {
		c.readXIDs(ctx, &r)
	}
	for i := range r.GPUs {
		r.GPUs[i].Reasons = append(r.GPUs[i].Reasons, c.xids[r.GPUs[i].UUID]...)
	}
	if c.opts.program != nil && ctx.Err() == nil {
		c.runProgram(ctx, &r)
	}
	if err := ctx.Err(); err != nil {
		return Report{}, err
	}
	return r, nil
}

// Resume forgets the Xids seen for the GPU with uuid, once an operator has
// returned it to service; the next poll judges it afresh.
func (c *Checker) Resume(uuid string) { delete(c.xids, uuid) }

func (c *Checker) pollSMI(ctx context.Context, r *Report) {
	poll, err := c.query(ctx)
	// A driver older than a field rejects the whole query; ask without it.
	for poll.InvalidField != "" && slices.Contains(c.fields, poll.InvalidField) && ctx.Err() == nil {
		r.Notes = append(r.Notes, fmt.Sprintf("nvidia-smi does not know %s; no longer asked", poll.InvalidField))
		c.fields = slices.DeleteFunc(c.fields, func(f string) bool { return f == poll.InvalidField })
		poll, err = c.query(ctx)
	}
	r.Notes = append(r.Notes, poll.Notes...)
	if len(poll.Rows) == 0 && len(poll.Lost) == 0 {
		why := poll.Other
		switch {
		case why == "" && err != nil:
			why = cleanN(err.Error(), maxReason)
		case why == "":
			why = "it lists no GPUs"
		case err != nil:
			why += " (" + cleanN(errors.UnwrapAll(err).Error(), maxValue) + ")"
		}
		r.Node = append(r.Node, "nvidia-smi cannot see the GPUs: "+why)
		for i := range r.GPUs {
			r.GPUs[i].Reasons = slices.Clone(c.lastSMI[r.GPUs[i].UUID])
		}
		return
	}
	if err != nil {
		r.Notes = append(r.Notes, "nvidia-smi failed but listed GPUs: "+cleanN(err.Error(), maxReason))
	}
	byUUID := map[string]Row{}
	byBus := map[string]Row{}
	for _, row := range poll.Rows {
		byUUID[row.UUID] = row
		byBus[row.PCIBusID] = row
	}
	lost := map[string]Lost{}
	for _, l := range poll.Lost {
		lost[l.PCIBusID] = l
	}
	for i := range r.GPUs {
		g := &r.GPUs[i]
		if row, ok := byUUID[g.UUID]; ok {
			reasons, notes := Judge(row)
			g.Reasons = reasons
			r.Notes = append(r.Notes, notes...)
			delete(byUUID, g.UUID)
		} else if l, ok := lost[g.PCIBusID]; ok {
			g.Reasons = []string{"fell off the bus (nvidia-smi: " + l.Why + ")"}
		} else if other, ok := byBus[g.PCIBusID]; ok {
			g.Reasons = []string{fmt.Sprintf("nvidia-smi lists another GPU (%s) at its PCI address", other.UUID)}
		} else {
			g.Reasons = []string{"fell off the bus (nvidia-smi no longer lists it)"}
		}
		c.lastSMI[g.UUID] = slices.Clone(g.Reasons)
	}
	for _, row := range poll.Rows {
		if _, extra := byUUID[row.UUID]; extra {
			r.Notes = append(r.Notes, fmt.Sprintf("nvidia-smi lists gpu %d (%s), which discovery did not find; ignored", row.Index, row.UUID))
		}
	}
}

// query runs one poll, bounded when the caller set no deadline.
func (c *Checker) query(ctx context.Context) (Poll, error) {
	qctx := ctx
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		qctx, cancel = context.WithTimeout(ctx, c.opts.smiTimeout)
		defer cancel()
	}
	out, err := c.smi(qctx, QueryArgs(c.fields)...)
	if err != nil && qctx.Err() != nil && ctx.Err() == nil {
		err = errors.Newf("timed out after %s", c.opts.smiTimeout)
	}
	return ParseHealth(out, c.fields), err
}

func (c *Checker) readXIDs(ctx context.Context, r *Report) {
	log, err := c.opts.kernelLog(ctx)
	if err != nil {
		r.Notes = append(r.Notes, "kernel log unreadable, Xids unknown: "+cleanN(err.Error(), maxReason))
	}
	for _, x := range ParseXIDs(log) {
		reason := x.Reason()
		if reason == "" {
			continue
		}
		found := false
		for _, g := range c.gpus {
			if x.onGPU(g.PCIBusID) {
				found = true
				if !slices.Contains(c.xids[g.UUID], reason) {
					c.xids[g.UUID] = append(c.xids[g.UUID], reason)
				}
			}
		}
		if !found {
			r.Notes = append(r.Notes, fmt.Sprintf("Xid %d for PCI %s, which is no GPU of this node", x.Code, x.Device))
		}
	}
}

func (c *Checker) runProgram(ctx context.Context, r *Report) {
	v := JudgeProgram(c.opts.program(ctx))
	if v.Node != "" {
		r.Node = append(r.Node, v.Node)
	}
	for _, n := range v.GPUs {
		i := slices.IndexFunc(r.GPUs, func(g GPUState) bool { return n.matches(g.Index, g.UUID) })
		if i < 0 {
			r.Node = append(r.Node, fmt.Sprintf("%s (names gpu %s, which this node does not have)", n.Reason, clean(n.Ref)))
			continue
		}
		r.GPUs[i].Reasons = append(r.GPUs[i].Reasons, n.Reason)
	}
}
