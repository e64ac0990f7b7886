package main

import (
	"strings"
	"testing"
	"time"

	"github.com/lockstep-dev/lockstep/cmd/lockstep/slurm"
	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

func TestSqueueFields(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	code := 3
	gang := jobspec.Gang{Nodes: 2, GPUsPerNode: 8, TasksPerNode: 2, CPUsPerTask: 12}
	placed := &domain.Placement{Nodes: []domain.NodePlacement{{Node: "gpu-07", GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}, {Node: "gpu-08", GPUs: []int{0, 1, 2, 3, 4, 5, 6, 7}}}}
	pending := slurmJobOf(domain.Job{ID: "p-1", State: domain.StatePending, Reason: "QuotaExceeded (16/16 GPUs)",
		Spec: jobspec.Spec{Name: "wait", Gang: gang, TimeLimit: jobspec.DurationOf(90 * time.Minute)}})
	running := slurmJobOf(domain.Job{ID: "r-1", State: domain.StateRunning, Owner: "alice", Placement: placed,
		Spec: jobspec.Spec{Name: "train", Queue: "research", Gang: gang}, RunningAt: now.Add(-(26*time.Hour + 3*time.Minute + 4*time.Second))})
	failed := slurmJobOf(domain.Job{ID: "f-1", State: domain.StateFailed, Reason: "NonZeroExit", ExitCode: &code, Placement: placed,
		Spec: jobspec.Spec{Gang: gang}, RunningAt: now.Add(-time.Minute), EndedAt: now.Add(-50 * time.Second)})
	for _, tc := range []struct {
		j      slurmJob
		format string
		want   string
	}{
		{pending, "%i|%u|%P|%t|%T|%M|%l|%D|%C|%b|%N|%R|%r", "p-1|-|default|PD|PENDING|0:00|1:30:00|2|48|gres/gpu:8||(QOSGrpGRES)|QOSGrpGRES"},
		{running, "%i|%u|%P|%t|%M|%l|%N|%R|%r", "r-1|alice|research|R|1-02:03:04|UNLIMITED|gpu-[07-08]|gpu-[07-08]|None"},
		{failed, "%t|%M|%R", "F|0:10|(NonZeroExit)"},
	} {
		f, err := slurm.ParseFormat(tc.format, squeueFields)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Render(func(b byte) string { return squeueField(tc.j, b, now) }); got != tc.want {
			t.Errorf("%s %q = %q, want %q", tc.j.ID, tc.format, got, tc.want)
		}
	}
	row := func(j slurmJob) string {
		var cells []string
		for _, f := range []string{"JobID", "State", "Elapsed", "NNodes", "AllocTRES", "ExitCode", "AllocCPUS", "Timelimit"} {
			cells = append(cells, sacctField(j, f, now))
		}
		return strings.Join(cells, "|")
	}
	for j, want := range map[*slurmJob]string{
		&pending: "p-1|PENDING|00:00:00|2||0:0|0|01:30:00",
		&running: "r-1|RUNNING|1-02:03:04|2|cpu=48,gres/gpu=16,node=2|0:0|48|UNLIMITED",
		&failed:  "f-1|FAILED|00:00:10|2|cpu=48,gres/gpu=16,node=2|3:0|48|UNLIMITED",
	} {
		if got := row(*j); got != want {
			t.Errorf("sacct %s = %q, want %q", j.ID, got, want)
		}
	}
}

func TestScancelSignalMapping(t *testing.T) {
	running := slurmJobOf(domain.Job{ID: "r", State: domain.StateRunning, Spec: jobspec.Spec{Gang: jobspec.Gang{Nodes: 1, GPUsPerNode: 8}}})
	usr2 := running
	usr2.Spec.Checkpoint.Signal = "SIGUSR2"
	pending := slurmJobOf(domain.Job{ID: "p", State: domain.StatePending, Spec: running.Spec})
	sig := func(s string) slurm.Signal {
		if s == "" {
			return slurm.Signal{}
		}
		v, err := slurm.ParseSignal(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		sig     string
		j       slurmJob
		want    scancelAction
		wantErr string
	}{
		{"", running, actCancel, ""},
		{"KILL", running, actCancel, ""},
		{"9", running, actCancel, ""},
		{"SIGTERM", running, actCancel, ""},
		{"INT", pending, actCancel, ""},
		{"USR1", running, actCheckpoint, ""}, // the default checkpoint signal
		{"10", running, actCheckpoint, ""},
		{"USR2", usr2, actCheckpoint, ""},
		{"USR1", usr2, 0, "--signal=USR1 cannot be delivered"},
		{"HUP", running, 0, "--signal=HUP cannot be delivered"},
		{"USR1", pending, 0, "only a running job"},
	} {
		got, err := scancelActionFor(sig(tc.sig), tc.j)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("--signal=%s on %s: err %v, want %q", tc.sig, tc.j.Spec.Checkpoint.Signal, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || got != tc.want):
			t.Errorf("--signal=%s on %s = %v, %v; want %v", tc.sig, tc.j.Spec.Checkpoint.Signal, got, err, tc.want)
		}
	}
}

func TestJobFilterUsers(t *testing.T) {
	alice := slurmJobOf(domain.Job{ID: "a", Owner: "alice", State: domain.StateRunning})
	nobody := slurmJobOf(domain.Job{ID: "n", State: domain.StateRunning})
	show := jobFilter{users: []string{"bob"}}
	cancel := jobFilter{users: []string{"bob"}, ownedOnly: true}
	switch {
	case show.match(alice) || cancel.match(alice):
		t.Error("-u bob matches alice's job")
	case !show.match(nobody):
		t.Error("squeue -u bob does not show a job without an owner (a cluster without auth)")
	case cancel.match(nobody):
		t.Error("scancel -u bob selects a job without an owner: on a cluster without auth it would cancel every job")
	case !(jobFilter{users: []string{"alice"}, ownedOnly: true}).match(alice):
		t.Error("scancel -u alice does not select alice's job")
	}
}
