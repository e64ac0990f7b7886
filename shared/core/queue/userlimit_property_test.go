package queue_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/core/queue"
)

// TestUserGPULimitProperty: over random busy clusters with owners and
// limits (including jobs without an owner, and owners already over their
// limit), no plan starts a job that puts its owner over their GPU limit,
// overall or in a queue, under either policy; and the preemptor, if any,
// would itself start within the limits.
func TestUserGPULimitProperty(t *testing.T) {
	owners := []string{"alice", "bob", "carol", ""}
	limited := 0
	for seed := range uint64(planCases) {
		r := rand.New(rand.NewPCG(seed, 0x5eed))
		in := genInput(r)
		for i := range in.Running {
			in.Running[i].Owner = owners[r.IntN(len(owners))]
		}
		for i := range in.Pending {
			in.Pending[i].Owner = owners[r.IntN(len(owners))]
		}
		in.Config.DefaultUser = queue.UserConfig{MaxRunningGPUs: 8 * (1 + r.IntN(6))}
		in.Config.Users = map[string]queue.UserConfig{
			"alice": {MaxRunningGPUs: 8 * r.IntN(8)}, // 0: the default's
			"bob": {MaxRunningGPUs: []int{-1, 24, 64}[r.IntN(3)],
				Queues: map[string]queue.UserQueueConfig{"a": {MaxRunningGPUs: 8 + 8*r.IntN(3)}}},
		}
		for name, policy := range map[string]queue.Policy{"backfill": queue.PlanBackfill, "fifo": queue.PlanFIFOSkip} {
			plan := policy(in)
			fail := func(format string, args ...any) {
				t.Helper()
				data, _ := in.Marshal()
				t.Fatalf("seed %d, %s: %s\ninput: %s", seed, name, fmt.Sprintf(format, args...), data)
			}
			total, inQueue := map[string]int{}, map[[2]string]int{}
			for _, rj := range in.Running {
				total[rj.Owner] += rj.GPUCount()
				inQueue[[2]string{rj.Owner, rj.Queue}] += rj.GPUCount()
			}
			for _, d := range plan.Decisions {
				j := findJob(in.Pending, d.JobID)
				l := in.Config.Limits(j.Owner, j.Queue)
				if d.ReasonCode == queue.ReasonUserGPULimit {
					limited++
				}
				if d.Action != queue.Start {
					continue
				}
				total[j.Owner] += j.GPUs()
				inQueue[[2]string{j.Owner, j.Queue}] += j.GPUs()
				if l.MaxRunningGPUs > 0 && total[j.Owner] > l.MaxRunningGPUs {
					fail("%s puts %q at %d GPUs, over the limit of %d", j.ID, j.Owner, total[j.Owner], l.MaxRunningGPUs)
				}
				if n := inQueue[[2]string{j.Owner, j.Queue}]; l.MaxQueueGPUs > 0 && n > l.MaxQueueGPUs {
					fail("%s puts %q at %d GPUs in %s, over the limit of %d", j.ID, j.Owner, n, j.Queue, l.MaxQueueGPUs)
				}
			}
			p, ok := queue.Preemptor(in, plan)
			if !ok {
				continue
			}
			l := in.Config.Limits(p.Owner, p.Queue)
			if l.MaxRunningGPUs > 0 && total[p.Owner]+p.GPUs() > l.MaxRunningGPUs {
				fail("preemptor %s would put %q over the limit of %d", p.ID, p.Owner, l.MaxRunningGPUs)
			}
			if n := inQueue[[2]string{p.Owner, p.Queue}] + p.GPUs(); l.MaxQueueGPUs > 0 && n > l.MaxQueueGPUs {
				fail("preemptor %s would put %q over the limit of %d in %s", p.ID, p.Owner, l.MaxQueueGPUs, p.Queue)
			}
		}
	}
	t.Logf("%d decisions held by a user limit over %d inputs", limited, planCases)
	if limited < planCases {
		t.Fatalf("only %d decisions held by a user limit; the generator is too loose", limited)
	}
}
