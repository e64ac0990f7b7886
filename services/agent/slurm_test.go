package agent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/slurmenv"
)

func TestSlurmJob(t *testing.T) {
	as := domain.Assignment{JobID: "j1", Node: "node-02", NodeRank: 1, NNodes: 2, WorldSize: 4, Queue: "gpu",
		Nodes: []string{"node-01", "node-02"}, CPUsPerTask: 6,
		Env:   map[string]string{"SLURM_SUBMIT_HOST": "login"},
		Ranks: []domain.Rank{{Rank: 2, GPUs: []int{0, 1}}, {Rank: 3, LocalRank: 1, GPUs: []int{2, 3}}}}
	j := slurmJob(as, "/work")
	if j.NodeList != "node-[01-02]" || j.JobName != "j1" || j.Partition != "gpu" || j.SubmitDir != "/work" ||
		j.SubmitHost != "login" || j.NTasks != 4 || j.NTasksPerNode != 2 || j.GPUsOnNode != 4 || j.CPUsPerTask != 6 || j.NNodes != 2 {
		t.Fatalf("slurmJob = %+v", j)
	}
	as.Env = map[string]string{"SLURM_SUBMIT_DIR": "/home/ada/run"}
	if j := slurmJob(as, "/work"); j.SubmitDir != "/home/ada/run" {
		t.Fatalf("SubmitDir = %q, want the spec's", j.SubmitDir)
	}
}

// The shims are links to the target, replaced on every start.
func TestLinkShims(t *testing.T) {
	data := t.TempDir()
	for _, target := range []string{"/usr/bin/old", "/opt/lockstep"} {
		dir, err := linkShims(data, target)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range slurmenv.Commands {
			if got, err := os.Readlink(filepath.Join(dir, name)); err != nil || got != target {
				t.Fatalf("%s -> %q (%v), want %s", name, got, err, target)
			}
		}
	}
}
