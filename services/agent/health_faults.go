package agent

import (
	"fmt"
	"slices"
	"time"

	"github.com/lockstep-dev/lockstep/services/agent/health"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// maxFaultReason bounds a withdrawn GPU's reason in the registration and
// its gpu-unhealthy event: enough for every reason nvidia-smi, the kernel
// log and the health-check program give, far below what a record allows.
const maxFaultReason = 1024

// withdraw is the pure step of a health poll: the faults to register after
// report, given those registered (faults, by GPU index) on a node of gpus
// GPUs. A GPU the report finds unhealthy is withdrawn, since report.At, with
// its reasons; a node-level reason (nvidia-smi cannot see the GPUs, the
// health-check program failed without naming a GPU) withdraws every GPU.
// A withdrawn GPU stays withdrawn when a later poll finds it healthy: only
// an operator's resume returns it (resumed). added lists the newly withdrawn
// faults; notes what the report said that the registration cannot hold.
func withdraw(faults []domain.GPUFault, report health.Report, gpus int) (next, added []domain.GPUFault, notes []string) {
	next = slices.Clone(faults)
	have := map[int]bool{}
	for _, f := range faults {
		have[f.GPU] = true
	}
	add := func(gpu int, reason string) {
		if have[gpu] {
			return
		}
		have[gpu] = true
		f := domain.GPUFault{GPU: gpu, Reason: cut(reason, maxFaultReason), Since: report.At.UTC()}
		next = append(next, f)
		added = append(added, f)
	}
	for _, g := range report.GPUs {
		if g.Healthy() {
			continue
		}
		if g.Index < 0 || g.Index >= gpus {
			notes = append(notes, fmt.Sprintf("%s: not one of the node's %d registered GPUs", cut(g.Reason(), maxFaultReason), gpus))
			continue
		}
		add(g.Index, g.Reason())
	}
	if len(report.Node) > 0 {
		if gpus == 0 {
			notes = append(notes, "node unhealthy, but it has no GPU to withdraw: "+cut(report.NodeReason(), maxFaultReason))
		}
		for gpu := range gpus {
			add(gpu, "node: "+report.NodeReason())
		}
	}
	slices.SortFunc(next, func(a, b domain.GPUFault) int { return a.GPU - b.GPU })
	return next, added, notes
}

// resumed splits faults into those an operator's resume at resumedAt
// returned (withdrawn no later than it) and those that stay.
func resumed(faults []domain.GPUFault, resumedAt time.Time) (kept, cleared []domain.GPUFault) {
	for _, f := range faults {
		if !resumedAt.IsZero() && !f.Since.After(resumedAt) {
			cleared = append(cleared, f)
		} else {
			kept = append(kept, f)
		}
	}
	return kept, cleared
}

// cut shortens s to at most n bytes on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - len("…")
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}
