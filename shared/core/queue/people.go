package queue

import (
	"slices"
	"sort"
)

// GroupsOf lists the groups the policy puts user in, sorted.
func (c Config) GroupsOf(user string) []string {
	if user == "" {
		return nil
	}
	var out []string
	for g, members := range c.Groups {
		if slices.Contains(members, user) {
			out = append(out, g)
		}
	}
	sort.Strings(out)
	return out
}

// Privileged reports whether user may act on other users' jobs: an admin
// or an operator of the policy. "" (a request without an authenticated
// user) is not looked up here: the caller decides what it may do.
func (c Config) Privileged(user string) bool {
	return user != "" && (slices.Contains(c.Admins, user) || slices.Contains(c.Operators, user))
}
