package slurm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
)

// FuzzParseScript feeds arbitrary scripts through ParseScript and, when
// they parse, JobSpec. Neither may panic; a spec JobSpec returns must be
// one jobspec.Parse accepts, so every error a user can cause is named by
// the option rather than by the spec's validator; and parsing is
// deterministic.
func FuzzParseScript(f *testing.F) {
	seed, err := os.ReadFile(filepath.Join("..", "testdata", "slurm", "submit_job.sh")) // the corpus's copy
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	for _, s := range []string{
		"#!/bin/sh\n#SBATCH -N2 --gres=gpu:4 -n8 -t 1-2:03:04 --signal=B:USR1@90\n",
		"#!/bin/sh\n#SBATCH --array=0-15:4%2 -d afterok:1:2?afterany:3 --export='A=1,2',B\n",
		"#!/bin/sh\n#SBATCH -J \"a b\"\\ c # comment\n#SLURM --switches=2@0 --gpus-per-node=8\n",
		"#!/bin/sh\n#SBATCH --gpus-per-node=8 --ntasks-per-node=3\n",
		"#!/bin/sh\n#SBATCH -N\n",
		"#!/bin/sh\n#SBATCH --mem 4G hetjob\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, script []byte) {
		d, err := ParseScript(script, WithIgnoreUnsupported())
		if err != nil {
			return
		}
		again, err := ParseScript(script, WithIgnoreUnsupported())
		if err != nil {
			t.Fatalf("second parse failed: %v", err)
		}
		a, _ := json.Marshal(d)
		b, _ := json.Marshal(again)
		if string(a) != string(b) {
			t.Fatalf("parse is not deterministic:\n%s\n%s", a, b)
		}
		spec, err := d.JobSpec([]string{"/bin/sh", "job.sh"})
		if err != nil {
			return
		}
		raw, err := json.Marshal(spec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := jobspec.Parse(raw); err != nil {
			t.Fatalf("JobSpec made a spec jobspec.Parse refuses: %v\n%s", err, raw)
		}
	})
}
