package config

import (
	"maps"
	"slices"

	"github.com/cockroachdb/errors"

	"github.com/lockstep-dev/lockstep/shared/contract/domain"
	"github.com/lockstep-dev/lockstep/shared/core/queue"
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
	for _, name := range slices.Sorted(maps.Keys(cfg.Queues)) {
		if err := check("queues."+name, cfg.Queues[name]); err != nil {
			return err
		}
	}
	if err := checkUser("defaultUser", cfg.DefaultUser); err != nil {
		return err
	}
	if err := checkPeople(cfg); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Users)) {
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
	for _, q := range slices.Sorted(maps.Keys(u.Queues)) {
		if err := limit("queues."+q+".maxRunningGPUs", u.Queues[q].MaxRunningGPUs); err != nil {
			return err
		}
	}
	return nil
}

// checkPeople validates admins, operators and groups: every name must be
// one an identity can have (auth.Identity), or it could never match.
func checkPeople(cfg queue.Config) error {
	check := func(field string, names []string) error {
		for i, n := range names {
			if !domain.ValidUserName(n) {
				return errors.Newf("--queues: %s[%d]: %q is not a user name (1-63 of a-z, 0-9, '_' and '-')", field, i, n)
			}
		}
		return nil
	}
	if err := check("admins", cfg.Admins); err != nil {
		return err
	}
	if err := check("operators", cfg.Operators); err != nil {
		return err
	}
	for _, g := range slices.Sorted(maps.Keys(cfg.Groups)) {
		if g == "" {
			return errors.New(`--queues: groups: the group name "" is not allowed`)
		}
		if err := check("groups."+g, cfg.Groups[g]); err != nil {
			return err
		}
	}
	return nil
}
