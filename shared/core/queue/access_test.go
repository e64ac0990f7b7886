package queue_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/core/queue"
)

func ptr(v int) *int { return &v }

// accessConfig: prod is for alice and group ml, priority ≤ 10 (alice: 100);
// research caps priority at 10; everyone may have 100 pending jobs and 32
// GPUs; bob 64 GPUs but 16 in research; carol no GPU limit.
var accessConfig = queue.Config{
	Queues: map[string]queue.QueueConfig{
		"prod":     {AllowUsers: []string{"alice"}, AllowGroups: []string{"ml"}, MaxPriority: ptr(10)},
		"research": {MaxPriority: ptr(10), AllowRoot: true},
	},
	DefaultUser: queue.UserConfig{MaxPendingJobs: 100, MaxRunningGPUs: 32},
	Users: map[string]queue.UserConfig{
		"alice": {Queues: map[string]queue.UserQueueConfig{"prod": {MaxPriority: ptr(100)}}},
		"bob":   {MaxRunningGPUs: 64, Queues: map[string]queue.UserQueueConfig{"research": {MaxRunningGPUs: 16}}},
		"carol": {MaxRunningGPUs: -1, MaxPendingJobs: -1},
	},
}

func TestAdmit(t *testing.T) {
	sub := func(owner, q string, prio, gpus, pending int, groups ...string) queue.Submission {
		return queue.Submission{Owner: owner, Groups: groups, Queue: q, Priority: prio, GPUs: gpus, PendingJobs: pending}
	}
	array := func(s queue.Submission, tasks int) queue.Submission {
		s.Jobs = tasks
		return s
	}
	ctr := func(s queue.Submission, user string) queue.Submission {
		s.Container, s.ContainerUser = true, user
		return s
	}
	cases := []struct {
		name string
		s    queue.Submission
		code string // "" admitted
		want string
	}{
		{"open queue, within limits", sub("bob", "batch", 0, 8, 0), "", ""},
		{"allowed by name", sub("alice", "prod", 5, 8, 0), "", ""},
		{"allowed by group", sub("dave", "prod", 5, 8, 0, "staff", "ml"), "", ""},
		{"not on the lists", sub("bob", "prod", 0, 8, 0, "staff"), queue.RejectQueueAccess,
			`queue "prod": user bob may not submit (allowed: alice, group ml)`},
		{"no owner on a restricted queue", sub("", "prod", 0, 8, 0), queue.RejectQueueAccess, `user "" may not submit`},
		{"access before the other checks", sub("bob", "prod", 500, 1000, 500), queue.RejectQueueAccess, "may not submit"},
		{"priority at the cap", sub("bob", "research", 10, 8, 0), "", ""},
		{"priority over the cap", sub("bob", "research", 50, 8, 0), queue.RejectPriority,
			`priority 50 is above queue "research"'s maximum of 10 for bob`},
		{"a user's override raises the cap", sub("alice", "prod", 100, 8, 0), "", ""},
		{"... but not past it", sub("alice", "prod", 101, 8, 0), queue.RejectPriority, "maximum of 100 for alice"},
		{"the queue's cap for others in it", sub("dave", "prod", 11, 8, 0, "ml"), queue.RejectPriority, "maximum of 10 for dave"},
		{"unlisted queue: no cap (as before)", sub("bob", "batch", 1000, 8, 0), "", ""},
		{"one below the pending limit", sub("bob", "batch", 0, 8, 99), "", ""},
		{"at the pending limit", sub("bob", "batch", 0, 8, 100), queue.RejectPendingLimit,
			"bob already has 100 pending jobs (limit 100)"},
		{"no pending limit for carol", sub("carol", "batch", 0, 8, 100000), "", ""},
		{"an array fitting the pending limit", array(sub("bob", "batch", 0, 8, 90), 10), "", ""},
		{"an array's tasks each count", array(sub("bob", "batch", 0, 8, 99), 10000), queue.RejectPendingLimit,
			"bob has 99 pending jobs, and this array's 10000 tasks would make 10099 (limit 100)"},
		{"no owner: defaultUser's limits", sub("", "batch", 0, 8, 100), queue.RejectPendingLimit, `"" already has 100 pending jobs`},
		{"GPUs at the default limit", sub("dave", "batch", 0, 32, 0), "", ""},
		{"GPUs over the default limit", sub("dave", "batch", 0, 64, 0), queue.ReasonUserGPULimit,
			"the job needs 64 GPUs, more than dave's limit of 32 running"},
		{"bob's own GPU limit", sub("bob", "batch", 0, 64, 0), "", ""},
		{"bob's limit in research", sub("bob", "research", 0, 24, 0), queue.ReasonUserGPULimit,
			`the job needs 24 GPUs, more than bob's limit of 16 running in queue "research"`},
		{"no GPU limit for carol", sub("carol", "batch", 0, 4096, 0), "", ""},
		{"container as its owner", ctr(sub("bob", "batch", 0, 8, 0), ""), "", ""},
		{"container as the owner's uid", ctr(sub("bob", "batch", 0, 8, 0), "1000:1000"), "", ""},
		{"container as root", ctr(sub("bob", "batch", 0, 8, 0), "root"), queue.RejectRootContainer,
			`queue "batch": the container would run as root (container.user "root", owner bob), which the queue does not allow (allowRoot)`},
		{"container as uid 0", ctr(sub("bob", "batch", 0, 8, 0), "0"), queue.RejectRootContainer, `container.user "0"`},
		{"container as uid 0, any gid", ctr(sub("bob", "batch", 0, 8, 0), "0:1000"), queue.RejectRootContainer, "would run as root"},
		{"container of an owner named root", ctr(sub("root", "batch", 0, 8, 0), ""), queue.RejectRootContainer, "owner root"},
		{"uid 10 is not root", ctr(sub("bob", "batch", 0, 8, 0), "10"), "", ""},
		{"root where the queue allows it", ctr(sub("bob", "research", 0, 8, 0), "root"), "", ""},
		{"bare ranks of an owner named root: the agent's call", sub("root", "batch", 0, 8, 0), "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rej, ok := queue.Admit(accessConfig, c.s)
			if ok != (c.code == "") || rej.Code != c.code || !strings.Contains(rej.Reason, c.want) {
				t.Fatalf("Admit = %q %v, want code %q with %q", rej, ok, c.code, c.want)
			}
		})
	}
	// No policy file: everything is admitted, as before.
	if rej, ok := queue.Admit(queue.Config{}, sub("", "any", 1<<30, 1<<20, 1<<20)); !ok {
		t.Fatalf("empty config rejected: %s", rej)
	}
}

func TestLimits(t *testing.T) {
	cfg := accessConfig
	cfg.DefaultUser.Queues = map[string]queue.UserQueueConfig{"research": {MaxPriority: ptr(5), MaxRunningGPUs: 8}}
	cases := []struct {
		owner, queue string
		want         queue.Limits
	}{
		{"dave", "batch", queue.Limits{MaxPendingJobs: 100, MaxRunningGPUs: 32}},
		{"", "batch", queue.Limits{MaxPendingJobs: 100, MaxRunningGPUs: 32}},
		{"carol", "batch", queue.Limits{}},
		{"bob", "batch", queue.Limits{MaxPendingJobs: 100, MaxRunningGPUs: 64}},
		// defaultUser's per-queue block overrides the queue's priority cap
		// and adds a GPU cap; bob's own block replaces the GPU cap only.
		{"dave", "research", queue.Limits{MaxPendingJobs: 100, MaxRunningGPUs: 32, MaxQueueGPUs: 8, MaxPriority: ptr(5)}},
		{"bob", "research", queue.Limits{MaxPendingJobs: 100, MaxRunningGPUs: 64, MaxQueueGPUs: 16, MaxPriority: ptr(5)}},
		{"alice", "prod", queue.Limits{MaxPendingJobs: 100, MaxRunningGPUs: 32, MaxPriority: ptr(100)}},
		{"dave", "prod", queue.Limits{MaxPendingJobs: 100, MaxRunningGPUs: 32, MaxPriority: ptr(10)}},
	}
	for _, c := range cases {
		got := cfg.Limits(c.owner, c.queue)
		if got.MaxPendingJobs != c.want.MaxPendingJobs || got.MaxRunningGPUs != c.want.MaxRunningGPUs ||
			got.MaxQueueGPUs != c.want.MaxQueueGPUs || (got.MaxPriority == nil) != (c.want.MaxPriority == nil) ||
			(got.MaxPriority != nil && *got.MaxPriority != *c.want.MaxPriority) {
			t.Errorf("Limits(%q, %q) = %+v, want %+v", c.owner, c.queue, got, c.want)
		}
	}
	// Users[""] is never consulted: unowned jobs have defaultUser's only.
	cfg.Users = map[string]queue.UserConfig{"": {MaxRunningGPUs: 1000}}
	if got := cfg.Limits("", "batch"); got.MaxRunningGPUs != 32 {
		t.Errorf(`Limits("") used Users[""]: %+v`, got)
	}
	if !accessConfig.Queue("research").AllowRoot || accessConfig.Queue("prod").AllowRoot {
		t.Error("AllowRoot not carried")
	}
}

func TestGroupsOfAndPrivileged(t *testing.T) {
	cfg := queue.Config{
		Groups: map[string][]string{"ml": {"alice", "carol"}, "ops": {"alice"}, "web": {"bob"}},
		Admins: []string{"admin"}, Operators: []string{"olga"},
	}
	if got := cfg.GroupsOf("alice"); !slices.Equal(got, []string{"ml", "ops"}) {
		t.Errorf("GroupsOf(alice) = %v", got)
	}
	if got := cfg.GroupsOf("dave"); got != nil {
		t.Errorf("GroupsOf(dave) = %v", got)
	}
	for user, want := range map[string]bool{"admin": true, "olga": true, "alice": false, "": false} {
		if got := cfg.Privileged(user); got != want {
			t.Errorf("Privileged(%q) = %v, want %v", user, got, want)
		}
	}
}
