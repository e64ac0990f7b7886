package subjects

import "strings"

// Every user's request subjects (SubmitAs, CancelAs, DrainAs), for the
// consumers. ">" rather than "*": a subject with extra tokens is consumed
// and refused instead of waiting in the work queue for ever.
const (
	SubmitUsers = Submit + ".>"
	CancelUsers = Cancel + ".>"
	DrainUsers  = Drain + ".>"
)

// UserOf reads who published a request from its subject: "" for the shared
// subject base itself (no user: only services and admins may publish there
// on a cluster with auth, anyone on one without), the rest after base+"."
// for a per-user subject. ok is false for a subject outside base. The name
// is not checked here: the caller validates it as an identity name.
func UserOf(base, subject string) (user string, ok bool) {
	if subject == base {
		return "", true
	}
	if user, ok = strings.CutPrefix(subject, base+"."); !ok {
		return "", false
	}
	return user, true
}
