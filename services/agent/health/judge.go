package health

import (
	"fmt"
	"strconv"
	"strings"
)

// Judge returns why the GPU of row is unhealthy, nothing when it is healthy,
// and notes on values it could not read. Values nvidia-smi could not get
// ("[N/A]", "[Not Supported]", "[Unknown Error]") are no evidence either
// way; "[GPU is lost]" is.
func Judge(r Row) (reasons, notes []string) {
	for _, f := range HealthFields {
		v, asked := r.Values[f]
		if !asked {
			continue
		}
		if lost(v) {
			reasons = append(reasons, fmt.Sprintf("fell off the bus (%s: %s)", f, v))
			continue
		}
		if unknown(v) {
			continue
		}
		var why string
		var ok bool
		switch f {
		case fieldECC:
			why, ok = judgeCount(v, "uncorrectable ECC error", "since the driver loaded")
		case fieldRetiredPending:
			why, ok = judgeFlag(v, "memory pages wait for retirement at the next reboot")
		case fieldRemapPending:
			why, ok = judgeFlag(v, "memory rows wait for remapping at the next GPU reset")
		case fieldRemapFailure:
			why, ok = judgeFlag(v, "memory row remapping failed")
		}
		switch {
		case !ok:
			notes = append(notes, fmt.Sprintf("gpu %d (%s): %s %q is unreadable; ignored", r.Index, r.UUID, f, v))
		case why != "":
			reasons = append(reasons, fmt.Sprintf("%s (%s: %s)", why, f, v))
		}
	}
	return reasons, notes
}

// unknown reports values that say nvidia-smi could not read the field.
func unknown(v string) bool {
	switch strings.ToLower(v) {
	case "", "n/a", "not supported", "unknown error", "unknown", "not found":
		return true
	}
	return strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]")
}

// lost reports the value nvidia-smi prints for NVML_ERROR_GPU_IS_LOST.
func lost(v string) bool { return strings.Contains(strings.ToLower(v), "gpu is lost") }

// judgeCount reads a counter: a reason when it is above zero.
func judgeCount(v, what, since string) (string, bool) {
	n, err := strconv.ParseUint(v, 10, 63)
	if err != nil {
		return "", false
	}
	switch n {
	case 0:
		return "", true
	case 1:
		return fmt.Sprintf("1 %s %s", what, since), true
	}
	return fmt.Sprintf("%d %ss %s", n, what, since), true
}

// judgeFlag reads a Yes/No flag; some drivers and tools print 1/0, or a
// count, instead.
func judgeFlag(v, what string) (string, bool) {
	switch strings.ToLower(v) {
	case "yes", "true":
		return what, true
	case "no", "false":
		return "", true
	}
	if n, err := strconv.ParseUint(v, 10, 63); err == nil {
		if n > 0 {
			return what, true
		}
		return "", true
	}
	return "", false
}
