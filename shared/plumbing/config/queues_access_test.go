package config

import (
	"strings"
	"testing"

	"github.com/lockstep-dev/lockstep/shared/core/queue"
)

func TestLoadQueuesAccess(t *testing.T) {
	cfg, err := LoadQueues(writeConfig(t, `
queues:
  prod: {gpuQuota: 64, allowUsers: [alice], allowGroups: [ml], maxPriority: 10, allowRoot: true}
  research: {maxPriority: -5}
defaultUser: {maxPendingJobs: 100, maxRunningGPUs: 32, queues: {prod: {maxRunningGPUs: 16}}}
users:
  alice: {maxRunningGPUs: 64, queues: {prod: {maxPriority: 100}}}
  carol: {maxPendingJobs: -1}
`))
	if err != nil {
		t.Fatal(err)
	}
	prod := cfg.Queue("prod")
	if prod.GPUQuota != 64 || strings.Join(prod.AllowUsers, ",") != "alice" || strings.Join(prod.AllowGroups, ",") != "ml" ||
		prod.MaxPriority == nil || *prod.MaxPriority != 10 || !prod.AllowRoot {
		t.Errorf("prod = %+v", prod)
	}
	if p := cfg.Queue("research").MaxPriority; p == nil || *p != -5 {
		t.Errorf("research maxPriority = %v", p)
	}
	if l := cfg.Limits("alice", "prod"); l.MaxRunningGPUs != 64 || l.MaxQueueGPUs != 16 || l.MaxPendingJobs != 100 || *l.MaxPriority != 100 {
		t.Errorf("alice in prod: %+v", l)
	}
	if l := cfg.Limits("carol", "batch"); l.MaxPendingJobs != 0 || l.MaxRunningGPUs != 32 || l.MaxPriority != nil {
		t.Errorf("carol in batch: %+v", l)
	}
	cfg, err = LoadQueues(writeConfig(t, "admins: [admin]\noperators: [olga]\ngroups: {ml: [alice, carol]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Privileged("admin") || !cfg.Privileged("olga") || cfg.Privileged("alice") || strings.Join(cfg.GroupsOf("carol"), ",") != "ml" {
		t.Errorf("people: %+v", cfg)
	}
	// A file without the new fields keeps today's behaviour: no access
	// lists, no priority cap, no user limits, no root.
	cfg, err = LoadQueues(writeConfig(t, "queues:\n  research: {gpuQuota: 64}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if q := cfg.Queue("research"); q.MaxPriority != nil || q.AllowUsers != nil || q.AllowRoot {
		t.Errorf("research = %+v", q)
	}
	if _, ok := queue.Admit(cfg, queue.Submission{Owner: "anyone", Queue: "research", Priority: 1 << 20, GPUs: 64, PendingJobs: 1 << 20}); !ok {
		t.Error("a file without access fields rejected a submission")
	}

	for body, want := range map[string]string{
		"queues:\n  a: {allowUser: [bob]}\n":                   "allowUser",
		"queues:\n  a: {allowUsers: bob}\n":                    "allowUsers",
		"queues:\n  a: {allowUsers: [bob, \"\"]}\n":            "queues.a: allowUsers[1] is empty",
		"default: {allowGroups: [\"\"]}\n":                     "default: allowGroups[0] is empty",
		"queues:\n  a: {maxPriority: high}\n":                  "maxPriority",
		"queues:\n  a: {maxPriority: 1.5}\n":                   "maxPriority",
		"queues:\n  a: {allowRoot: maybe}\n":                   "allowRoot",
		"defaultUser: {maxRunningGPU: 3}\n":                    "maxRunningGPU",
		"defaultUser: {maxRunningGPUs: -2}\n":                  "defaultUser: maxRunningGPUs -2",
		"users:\n  bob: {maxPendingJobs: -7}\n":                "users.bob: maxPendingJobs -7",
		"users:\n  bob: {maxPendingJobs: lots}\n":              "maxPendingJobs",
		"users:\n  bob: {queues: {a: {maxRunningGPUs: -3}}}\n": "users.bob: queues.a.maxRunningGPUs -3",
		"users:\n  bob: {queues: {a: {maxPriorty: 3}}}\n":      "maxPriorty",
		"users:\n  \"\": {maxRunningGPUs: 8}\n":                `user name "" is not allowed`,
		"users: [bob]\n":                                       "users",
		"defaultUser: {queues: {a: {maxRunningGPUs: -9}}}\n":   "defaultUser: queues.a.maxRunningGPUs -9",
		"admins: [Admin]\n":                                    `admins[0]: "Admin" is not a user name`,
		"operators: [ok, \"a b\"]\n":                           `operators[1]: "a b" is not a user name`,
		"groups: {ml: [alice, \"x.y\"]}\n":                     `groups.ml[1]: "x.y" is not a user name`,
		"groups: {ml: alice}\n":                                "groups",
	} {
		if _, err := LoadQueues(writeConfig(t, body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one mentioning %q", body, err, want)
		}
	}
}
