package place

import (
	"cmp"
	"slices"
)

// closestGPUs picks k of a node's free GPUs that are best connected to
// each other by dist (domain.Node.GPUDistance): the set whose farthest
// pair is closest, then whose pairs are closest in sum, then lowest
// indices, so that one job's ranks on a node talk over NVLink or one PCIe
// switch rather than across the host. Each free GPU in turn seeds a set
// grown greedily by the GPU closest to it; with no matrix, or all links
// alike, that is the lowest k indices, as without links. free is sorted;
// the result is sorted.
func closestGPUs(free []int, k int, dist [][]int) []int {
	if k >= len(free) || k <= 1 || !linked(free, dist) {
		return slices.Clone(free[:min(k, len(free))])
	}
	type pick struct {
		gpus       []int
		worst, sum int
	}
	var best *pick
	for _, seed := range free {
		set := []int{seed}
		worst, sum := 0, 0
		for len(set) < k {
			next, nWorst, nSum := -1, 0, 0
			for _, g := range free {
				if slices.Contains(set, g) {
					continue
				}
				w, s := 0, 0
				for _, m := range set {
					w = max(w, dist[g][m])
					s += dist[g][m]
				}
				if next < 0 || w < nWorst || (w == nWorst && s < nSum) {
					next, nWorst, nSum = g, w, s
				}
			}
			set = append(set, next)
			worst, sum = max(worst, nWorst), sum+nSum
		}
		slices.Sort(set)
		p := pick{set, worst, sum}
		if best == nil || cmp.Or(cmp.Compare(p.worst, best.worst), cmp.Compare(p.sum, best.sum), slices.Compare(p.gpus, best.gpus)) < 0 {
			best = &p
		}
	}
	return best.gpus
}

// linked reports whether dist covers every free GPU and tells some of
// them apart; otherwise link order cannot matter.
func linked(free []int, dist [][]int) bool {
	if len(free) == 0 {
		return false
	}
	first := -1
	varied := false
	for _, a := range free {
		if a < 0 || a >= len(dist) {
			return false
		}
		for _, b := range free {
			if b < 0 || b >= len(dist[a]) {
				return false
			}
			if a == b {
				continue
			}
			if first < 0 {
				first = dist[a][b]
			} else if dist[a][b] != first {
				varied = true
			}
		}
	}
	return varied
}
