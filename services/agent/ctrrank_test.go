package agent

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/contract/jobspec"
	"github.com/lockstep-dev/lockstep/shared/contract/rankenv"
)

func TestContainerUser(t *testing.T) {
	owner := account{Name: "ada", Cred: &syscall.Credential{Uid: 1001, Gid: 100}}
	self := account{Name: "agent"}
	me := strconv.Itoa(os.Getuid()) + ":" + strconv.Itoa(os.Getgid())
	for _, c := range []struct {
		asked      string
		acct       account
		want, fail string
	}{
		{"", owner, "1001:100", ""},
		{"ada", owner, "1001:100", ""},
		{"1001", owner, "1001:100", ""},
		{"1001:100", owner, "1001:100", ""},
		{"root", owner, "", `container.user "root" is not the job's account ada (1001:100)`},
		{"0:0", owner, "", "containers run as the job's owner"},
		{"", account{Name: "ada"}, me, ""}, // ranks run as the agent: so does the container
		{"agent", account{Name: "ada"}, me, ""},
	} {
		got, err := containerUser(c.asked, c.acct, self)
		if got != c.want || (c.fail == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.fail)) {
			t.Errorf("containerUser(%q, %s) = %q, %v; want %q, %q", c.asked, c.acct.Name, got, err, c.want, c.fail)
		}
	}
}

// Inside the container a rank gets the bare rank's environment, with
// container.env over the spec's env (Lockstep's variables still win) and
// the image's usual PATH.
func TestContainerEnv(t *testing.T) {
	as := domain.Assignment{JobID: "j", Attempt: 1, Node: "n1", NNodes: 1, WorldSize: 2, MasterAddr: "n1", MasterPort: 29500,
		Env: map[string]string{"A": "spec", "B": "spec"}}
	s := rankSetup{as: as, node: "n1", acct: account{Name: "ada", Cred: &syscall.Credential{Uid: 1}}, shimDir: ""}
	img := ctrImage{spec: jobspec.Container{Env: map[string]string{"B": "ctr", "RANK": "7"}}}
	env := containerEnv(rankEnvOf(s, domain.Rank{Rank: 1, GPUs: []int{1}}), img)
	for _, want := range []string{"A=spec", "B=ctr", "RANK=1", "CUDA_VISIBLE_DEVICES=1", "PATH=" + rankenv.DefaultPath} {
		if !slices.Contains(env, want) {
			t.Errorf("env lacks %s: %v", want, env)
		}
	}
	if slices.Contains(env, "RANK=7") {
		t.Error("container.env overrode RANK")
	}
	// A batch job's containers find the Slurm commands first, on the
	// image's PATH and on one the spec carries (sbatch --export=ALL).
	img.shims = true
	if env := containerEnv(rankEnvOf(s, domain.Rank{Rank: 1}), img); !slices.Contains(env, "PATH="+containerShimDir+":"+rankenv.DefaultPath) {
		t.Errorf("shims not first on PATH: %v", env)
	}
	s.as.Env = map[string]string{"PATH": "/opt/conda/bin:/usr/bin"}
	if env := containerEnv(rankEnvOf(s, domain.Rank{Rank: 1}), img); !slices.Contains(env, "PATH="+containerShimDir+":/opt/conda/bin:/usr/bin") {
		t.Errorf("shims not first on the spec's PATH: %v", env)
	}
}
