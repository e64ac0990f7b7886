package place

import (
	"fmt"
	"strings"
	"unicode"
)

// filterModel is the gpuModelFilter's name. (Declared here, not in
// registry.go, so that adding the filter there is one line.)
const filterModel = "gpu-model"

// gpuModelFilter rejects nodes whose GPUs are not the model the gang asks
// for (gang.gpuType) or have less memory than it needs
// (gang.minGPUMemoryMiB). Both are properties of the hardware, so it
// answers the same in capacity mode: a cluster without such GPUs can never
// run the gang. A node that did not say its model (a simulated one) has no
// model to match.
type gpuModelFilter struct{}

func (gpuModelFilter) Name() string { return filterModel }

func (gpuModelFilter) Filter(cs *cycleState, i int) bool {
	r := cs.req
	if r.GPUType == "" && r.MinGPUMemoryMiB == 0 {
		return true
	}
	n := cs.snap.Nodes[i].Node
	return n.GPUMemoryMiB >= r.MinGPUMemoryMiB && (r.GPUType == "" || GPUTypeMatches(n.GPUModel, r.GPUType))
}

func (gpuModelFilter) Reason(cs *cycleState) string {
	r := cs.req
	switch {
	case r.GPUType == "":
		return fmt.Sprintf("without GPUs of at least %d MiB", r.MinGPUMemoryMiB)
	case r.MinGPUMemoryMiB == 0:
		return fmt.Sprintf("without %q GPUs", r.GPUType)
	}
	return fmt.Sprintf("without %q GPUs of at least %d MiB", r.GPUType, r.MinGPUMemoryMiB)
}

// GPUTypeMatches reports whether the words of want appear, consecutively
// and ignoring case, among the words of model: "H100" and "h100 80gb"
// match "NVIDIA H100 80GB HBM3", "H10" does not. Words are runs of letters
// and digits, so "A100" matches "NVIDIA A100-SXM4-80GB". A want without
// any word matches nothing.
func GPUTypeMatches(model, want string) bool {
	m, w := gpuWords(model), gpuWords(want)
	if len(w) == 0 || len(w) > len(m) {
		return false
	}
	for i := 0; i+len(w) <= len(m); i++ {
		match := true
		for j := range w {
			if m[i+j] != w[j] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

func gpuWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}
