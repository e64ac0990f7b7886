package main

import (
	"fmt"
	"strings"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
)

// maxUnhealthyColumn bounds `node list`'s UNHEALTHY column, in characters:
// `node list -o json` has the reasons whole.
const maxUnhealthyColumn = 80

// unhealthyColumn is `node list`'s UNHEALTHY cell: the GPUs health checks
// withdrew with their reasons, cut to fit a table and printable, "-" when
// none are.
func unhealthyColumn(n domain.Node) string {
	if len(n.Unhealthy) == 0 {
		return "-"
	}
	parts := make([]string, len(n.Unhealthy))
	for i, f := range n.Unhealthy {
		// The agent's reasons name the GPU already ("gpu 3 (GPU-…): …").
		reason := f.Reason
		if !strings.HasPrefix(reason, fmt.Sprintf("gpu %d ", f.GPU)) {
			reason = fmt.Sprintf("gpu %d: %s", f.GPU, reason)
		}
		parts[i] = reason
	}
	s := strings.Join(parts, "; ")
	if r := []rune(s); len(r) > maxUnhealthyColumn {
		s = string(r[:maxUnhealthyColumn-1]) + "…"
	}
	return clean(s)
}
