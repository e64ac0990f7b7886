package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/shared/core/queue"
)

func TestLoadQueues(t *testing.T) {
	cfg, err := LoadQueues(writeConfig(t, "default: {weight: 1}\nqueues:\n  research: {gpuQuota: 64, weight: 2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if q := cfg.Queue("research"); q.GPUQuota != 64 || q.Weight != 2 {
		t.Errorf("research = %+v", q)
	}
	if q := cfg.Queue("other"); q.Weight != 1 || q.GPUQuota != 0 {
		t.Errorf("default = %+v", q)
	}
	for body, want := range map[string]string{
		"queues:\n  a: {gpuQuotta: 3}\n": "gpuQuotta",
		"queues:\n  a: {gpuQuota: -3}\n": "queues.a: gpuQuota -3",
		"default: {weight: -1}\n":        "default: weight",
		"queues: [1, 2\n":                "not valid YAML",
		"sizeHandicap: 3\n":              "want a string",
		"sizeHandicap: 3 days\n":         "duration \"3 days\"",
		"maxSizeHandicap: -1h\n":         "maxSizeHandicap -1h0m0s is negative",
		"stretch: {spine: 12}\n":         "stretch.spine 12",
		"stretch: {leef: 0.1}\n":         "leef",
		"stretch: {weight: 0.5}\n":       "stretch.weight 0.5",
		"stretch: {weight: -1}\n":        "stretch.weight -1",
		"sizeHandicapBacklog: many\n":    "sizeHandicapBacklog",
	} {
		if _, err := LoadQueues(writeConfig(t, body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one mentioning %q", body, err, want)
		}
	}
	cfg, err = LoadQueues(writeConfig(t, "sizeHandicap: 90m\nmaxSizeHandicap: 48h\nsizeHandicapBacklog: 8\nstretch: {leaf: 0.1, spine: -1, weight: 1}\n"))
	if err != nil || time.Duration(cfg.SizeHandicap) != 90*time.Minute || time.Duration(cfg.MaxSizeHandicap) != 48*time.Hour ||
		cfg.SizeHandicapBacklog != 8 || cfg.Stretch != (queue.Stretch{Leaf: 0.1, Spine: -1, Weight: 1}) {
		t.Errorf("size handicap and stretch: %+v %v", cfg, err)
	}
	if cfg, err := LoadQueues(""); err != nil || len(cfg.Queues) != 0 {
		t.Errorf("empty path: %+v %v", cfg, err)
	}
}

// writeConfig writes body to a queues file of its own and returns its path.
func writeConfig(t *testing.T, body string) string {
	p := filepath.Join(t.TempDir(), "queues.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
