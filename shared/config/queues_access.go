package config

import (
	"sort"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/queue"
)

// checkAccess validates the access lists and per-user limits of a queue
// policy file, naming the offending field.
func checkAccess(cfg queue.Config) error {
	check := func(name string, q queue.QueueConfig) error {
		for _, list := range []struct {
			field string
			names []string
		}{{"allowUsers", q.AllowUsers}, {"allowGroups", q.AllowGroups}} {
			for i, n := range list.names {
				if n == "" {
					return errors.Newf("--queues: %s: %s[%d] is empty", name, list.field, i)
				}
			}
		}
		return nil
	}
	if err := check("default", cfg.Default); err != nil {
		return err
	}
	for _, name := range sortedKeys(cfg.Queues) {
		if err := check("queues."+name, cfg.Queues[name]); err != nil {
			return err
		}
	}
	if err := checkUser("defaultUser", cfg.DefaultUser); err != nil {
		return err
	}
	for _, name := range sortedKeys(cfg.Users) {
		if name == "" {
			// Jobs without an owner have DefaultUser's limits only.
			return errors.New(`--queues: users: the user name "" is not allowed (unowned jobs take defaultUser's limits)`)
		}
		if err := checkUser("users."+name, cfg.Users[name]); err != nil {
			return err
		}
	}
	return nil
}

func checkUser(name string, u queue.UserConfig) error {
	limit := func(field string, v int) error {
		if v < -1 {
			return errors.Newf("--queues: %s: %s %d: want a count, or -1 for no limit", name, field, v)
		}
		return nil
	}
	if err := limit("maxPendingJobs", u.MaxPendingJobs); err != nil {
		return err
	}
	if err := limit("maxRunningGPUs", u.MaxRunningGPUs); err != nil {
		return err
	}
	for _, q := range sortedKeys(u.Queues) {
		if err := limit("queues."+q+".maxRunningGPUs", u.Queues[q].MaxRunningGPUs); err != nil {
			return err
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
